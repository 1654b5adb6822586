"""Runs the kernels of nvcc_kernels.cu, compiled by nvcc to PTX, on the
emulator and compares each with a NumPy reference.

    run_nvcc_kernels.py RIDGE_EMU PTX WORK_DIR

Prints "KERNEL: PASS" per kernel, or "KERNEL: FAIL ..." with the worst
element; exits non-zero on a failure.
"""

import sys

import numpy as np

from emu_harness import emulate, report


def main(emu, ptx, work):
    rng = np.random.RandomState(0)
    ok = True

    rows, cols = 5, 100
    x = rng.uniform(-4, 4, size=(rows, cols)).astype(np.float32)
    out = emulate(emu, ptx, work, "row_softmax", str(rows), "32",
                  [("in", x.ravel()), ("out", np.zeros(rows * cols, np.float32))],
                  ["buf:in", "buf:out", "s32:%d" % cols], [("out", np.float32)])
    e = np.exp(x - x.max(axis=1, keepdims=True))
    # ex2.approx is within 2 ulp of 2^x; the emulator computes it exactly.
    ok &= report("row_softmax", out["out"], (e / e.sum(axis=1, keepdims=True))
                 .ravel(), rtol=1e-5)

    values = rng.randint(0, 1000, size=1000).astype(np.int32)
    out = emulate(emu, ptx, work, "histogram", "3", "64",
                  [("in", values), ("bins", np.zeros(16, np.uint32))],
                  ["buf:in", "s32:1000", "buf:bins"], [("bins", np.uint32)])
    ok &= report("histogram", out["bins"],
                 np.bincount(values & 15, minlength=16))

    # Integers below 2^24: every partial sum is exact in any order.
    v = rng.randint(-1000, 1000, size=4 * 256).astype(np.float32)
    out = emulate(emu, ptx, work, "block_reduce", "4", "256",
                  [("in", v), ("out", np.zeros(4, np.float32))],
                  ["buf:in", "buf:out"], [("out", np.float32)])
    ok &= report("block_reduce", out["out"], v.reshape(4, 256).sum(axis=1))

    flags = rng.randint(-3, 3, size=128).astype(np.int32)
    out = emulate(emu, ptx, work, "ballot_count", "1", "128",
                  [("in", flags), ("out", np.zeros(4, np.uint32))],
                  ["buf:in", "buf:out"], [("out", np.uint32)])
    ok &= report("ballot_count", out["out"],
                 (flags.reshape(4, 32) > 0).sum(axis=1))

    n = 300
    hx = rng.uniform(-2, 2, size=n).astype(np.float16)
    hy = rng.uniform(-2, 2, size=n).astype(np.float16)
    out = emulate(emu, ptx, work, "half_axpy", "3", "128",
                  [("x", hx), ("y", hy)],
                  ["buf:x", "buf:y", "f32:0.75", "s32:%d" % n],
                  [("y", np.float16)])
    # Each f16 operation rounds once, exactly as NumPy's float16 does.
    want = (np.float16(0.75) * hx).astype(np.float16) + hy
    ok &= report("half_axpy", out["y"], want.astype(np.float16))
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
