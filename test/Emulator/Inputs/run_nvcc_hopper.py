"""Runs the sm_90a kernels of nvcc_hopper.cu (mbarrier, TMA, wgmma), compiled
by nvcc to PTX, on the emulator and compares each with a NumPy reference.

    run_nvcc_hopper.py RIDGE_EMU PTX WORK_DIR

Prints "CASE: PASS" per case, or "CASE: FAIL ..." with the worst element;
exits non-zero on a failure.
"""

import os
import subprocess
import sys

import numpy as np


def emulate(emu, ptx, work, kernel, grid, block, buffers, args, outputs,
            shared=0):
    command = [emu, ptx, "--kernel", kernel, "--grid", grid, "--block", block,
               "--shared", str(shared)]
    for name, array in buffers:
        path = os.path.join(work, "%s_%s.bin" % (kernel, name))
        array.tofile(path)
        kind = {np.float32: "f32", np.uint16: "u16"}[array.dtype.type]
        command += ["--buffer", "%s:%s:%d:file=%s" % (name, kind, array.size,
                                                      path)]
    command += ["--arg=" + a for a in args]
    results = {}
    for name, dtype in outputs:
        path = os.path.join(work, "%s_%s.out" % (kernel, name))
        command += ["--write", "%s=%s" % (name, path)]
        results[name] = (path, dtype)
    subprocess.run(command, check=True)
    return {name: np.fromfile(path, dtype=dtype)
            for name, (path, dtype) in results.items()}


def report(case, got, want, rtol=0.0, atol=0.0):
    got = got.ravel().astype(np.float64)
    want = want.ravel().astype(np.float64)
    error = np.abs(got - want)
    bound = atol + rtol * np.abs(want)
    worst = int(np.argmax(error - bound))
    if error[worst] <= bound[worst]:
        print("%s: PASS" % case)
        return True
    print("%s: FAIL at %d: %r, expected %r" % (case, worst, got[worst],
                                              want[worst]))
    return False


def to_bf16(x):
    """float32 -> bf16 bits, rounding to nearest even (finite inputs)."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7fff + ((bits >> 16) & 1)) >> 16
    return bits.astype(np.uint16)


def from_bf16(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def swizzle128(offset):
    """The byte offset TMA writes logical offset `offset` to (from a
    1024-byte aligned base): 16-byte chunk bits [4:6] XOR bits [7:9]."""
    return offset ^ (((offset >> 7) & 7) << 4)


def main(emu, ptx, work):
    rng = np.random.RandomState(0)
    ok = True

    # (a) mbarrier producer/consumer ring.
    x = rng.uniform(-8, 8, size=256).astype(np.float32)
    out = emulate(emu, ptx, work, "mbarrier_pipeline", "1", "64",
                  [("in", x), ("out", np.zeros(256, np.float32))],
                  ["buf:in", "buf:out"], [("out", np.float32)])
    ok &= report("mbarrier_pipeline", out["out"], 2 * x)

    # (b) a 32 x 64 bf16 box of a 40 x 72 tensor at column 40, row 24: the
    # box runs 32 columns and 16 rows past the tensor, which TMA fills with
    # zeros; then the box is stored at column 8, row 16 of a second tensor,
    # whose last 8 rows are clipped.
    rows, cols = 40, 72
    a = rng.randint(1, 60000, size=(rows, cols)).astype(np.uint16)
    x0, y0, ox, oy = 40, 24, 8, 16
    out = emulate(emu, ptx, work, "tma_tile", "1", "128",
                  [("a", a.ravel()), ("b", np.zeros(rows * cols, np.uint16)),
                   ("raw", np.zeros(32 * 64, np.uint16))],
                  ["tmap:a:bf16:%dx%d:64x32:swizzle128" % (cols, rows),
                   "tmap:b:bf16:%dx%d:64x32:swizzle128" % (cols, rows),
                   "buf:raw", "s32:%d" % x0, "s32:%d" % y0, "s32:%d" % ox,
                   "s32:%d" % oy],
                  [("raw", np.uint16), ("b", np.uint16)])
    box = np.zeros((32, 64), np.uint16)
    inside = a[y0:y0 + 32, x0:x0 + 64]
    box[:inside.shape[0], :inside.shape[1]] = inside
    raw = np.zeros(32 * 64, np.uint16)
    for r in range(32):
        for c in range(64):
            raw[swizzle128((r * 64 + c) * 2) // 2] = box[r, c]
    ok &= report("tma_load_swizzle128_oob", out["raw"], raw)
    stored = np.zeros((rows, cols), np.uint16)
    stored[oy:oy + 32, ox:ox + 64] = box[:rows - oy, :cols - ox]
    ok &= report("tma_store_clipped", out["b"], stored.ravel())

    # (c) wgmma + TMA GEMM, C = A @ B with A 128 x 64 in bf16, and B given
    # as B^T (128 x 64, K-major) or as B (64 x 128, N-major). Small
    # integers: every product and partial sum is exact, so the result is
    # bit-exact whatever the order of accumulation.
    for case, lo, hi, rtol, kernel in [
            ("wgmma_gemm_integers", -4, 5, 0.0, "wgmma_gemm"),
            ("wgmma_gemm_random", None, None, 1e-5, "wgmma_gemm"),
            ("wgmma_gemm_kn_integers", -4, 5, 0.0, "wgmma_gemm_kn")]:
        if lo is None:
            am = rng.uniform(-1, 1, size=(128, 64)).astype(np.float32)
            bm = rng.uniform(-1, 1, size=(128, 64)).astype(np.float32)
        else:
            am = rng.randint(lo, hi, size=(128, 64)).astype(np.float32)
            bm = rng.randint(lo, hi, size=(128, 64)).astype(np.float32)
        abits, bbits = to_bf16(am), to_bf16(bm)  # bm is B^T, N x K
        if kernel == "wgmma_gemm":
            bbuf, bmap = bbits, "tmap:b:bf16:64x128:64x128:swizzle128"
        else:
            bbuf, bmap = bbits.T.copy(), "tmap:b:bf16:128x64:64x64:swizzle128"
        out = emulate(emu, ptx, work, kernel, "1", "256",
                      [("a", abits.ravel()), ("b", bbuf.ravel()),
                       ("c", np.zeros(128 * 128, np.float32))],
                      ["tmap:a:bf16:64x128:64x128:swizzle128", bmap, "buf:c"],
                      [("c", np.float32)])
        want = from_bf16(abits).astype(np.float64) @ \
            from_bf16(bbits).astype(np.float64).T
        # With random inputs the hardware's accumulation order is not
        # documented; f32 sums of 64 products agree to about 1e-6 relative
        # to the largest term.
        ok &= report(case, out["c"], want, rtol=rtol,
                     atol=0.0 if rtol == 0 else 1e-5)

    # (d) the warp-specialized pipeline: K = 256 in 4 k-tiles through a
    # 2-stage ring, so each stage is refilled once its consumers release it.
    for case, lo, hi, rtol in [("wgmma_pipeline_integers", -4, 5, 0.0),
                               ("wgmma_pipeline_random", None, None, 1e-5)]:
        if lo is None:
            am = rng.uniform(-1, 1, size=(128, 256)).astype(np.float32)
            bm = rng.uniform(-1, 1, size=(128, 256)).astype(np.float32)
        else:
            am = rng.randint(lo, hi, size=(128, 256)).astype(np.float32)
            bm = rng.randint(lo, hi, size=(128, 256)).astype(np.float32)
        abits, bbits = to_bf16(am), to_bf16(bm)
        out = emulate(emu, ptx, work, "wgmma_pipeline", "1", "384",
                      [("a", abits.ravel()), ("b", bbits.ravel()),
                       ("c", np.zeros(128 * 128, np.float32))],
                      ["tmap:a:bf16:256x128:64x128:swizzle128",
                       "tmap:b:bf16:256x128:64x128:swizzle128", "buf:c"],
                      [("c", np.float32)], shared=4 * 128 * 64 * 2)
        want = from_bf16(abits).astype(np.float64) @ \
            from_bf16(bbits).astype(np.float64).T
        ok &= report(case, out["c"], want, rtol=rtol,
                     atol=0.0 if rtol == 0 else 1e-5)
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
