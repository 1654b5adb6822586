"""Runs the kernels of nvcc_tensorcore.cu, compiled by nvcc to PTX, on the
emulator and compares each with a NumPy reference.

    run_nvcc_tensorcore.py RIDGE_EMU PTX WORK_DIR

Prints "KERNEL[ CASE]: PASS" per check, or "...: FAIL ..." with the worst
element; exits non-zero on a failure.

Float GEMMs run twice: with random inputs, compared with a float64
reference at 1e-5 of the sum of the products' magnitudes (the emulator
accumulates in f32, k ascending); and with small integers, whose products
and sums are exact in f32 in any order, compared bit for bit. Integer
GEMMs are always bit-exact.
"""

import sys

import numpy as np

from emu_harness import (emulate, from_bf16_bits, operands, report,
                         to_bf16_bits)


def to_tf32(x):
    """float32 rounded to tf32, ties away from zero (cvt.rna.tf32.f32)."""
    bits = np.asarray(x, np.float32).view(np.uint32)
    return ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(
        np.float32)


def wmma_gemm(emu, ptx, work, kernel, rng, m, n, k, exact):
    """C = alpha * A * B + beta * C, C column-major, A row-major; B
    column-major for *_rowcol kernels, row-major for *_rowrow."""
    a, b = operands(rng, exact, [(m, k), (k, n)], 4)
    c, = operands(rng, exact, [(m, n)], 64)
    alpha, beta = (2.0, -1.0) if exact else (1.5, -0.5)
    b_stored = b.T if kernel.endswith("rowcol") else b
    if "bf16" in kernel:
        abits, bbits = to_bf16_bits(a), to_bf16_bits(b_stored)
        a, b = from_bf16_bits(abits), from_bf16_bits(to_bf16_bits(b))
        bufs = [("a", "bf16", abits.ravel()),
                ("b", "bf16", np.ascontiguousarray(bbits).ravel())]
    elif "f16" in kernel:
        a, b = a.astype(np.float16), b.astype(np.float16)
        bufs = [("a", a.ravel()),
                ("b", np.ascontiguousarray(b_stored).astype(np.float16)
                 .ravel())]
    else:  # tf32: the kernel rounds its f32 inputs with __float_to_tf32.
        bufs = [("a", a.ravel()), ("b", np.ascontiguousarray(b_stored)
                                   .ravel())]
        a, b = to_tf32(a), to_tf32(b)
    a64, b64, c64 = (x.astype(np.float64) for x in (a, b, c))
    want = alpha * (a64 @ b64) + beta * c64
    size = np.abs(alpha) * (np.abs(a64) @ np.abs(b64)) + np.abs(beta * c64)
    warps = (m // 16) * (n // 16)
    out = emulate(emu, ptx, work, kernel, str(warps // 4), "128",
                  bufs + [("c", np.asfortranarray(c).ravel(order="F"))],
                  ["buf:a", "buf:b", "buf:c", "s32:%d" % m, "s32:%d" % n,
                   "s32:%d" % k, "f32:%r" % alpha, "f32:%r" % beta],
                  [("c", np.float32)])
    got = out["c"].reshape(n, m).T
    return report(kernel + (" exact" if exact else ""), got, want,
                  bound=None if exact else 1e-5 * size + 1e-30)


def wmma_f16_acc(emu, ptx, work, rng, exact):
    m = n = 32
    k = 64
    a, b = operands(rng, exact, [(m, k), (k, n)], 3, np.float16)
    # One mma_sync per 16 of k: each accumulates in f32 from the f16 C and
    # rounds its D to f16 once.
    acc = np.zeros((m, n), np.float16)
    for kk in range(0, k, 16):
        part = a[:, kk:kk + 16].astype(np.float64) @ b[kk:kk + 16].astype(
            np.float64)
        acc = (acc.astype(np.float64) + part).astype(np.float16)
    out = emulate(emu, ptx, work, "wmma_f16_acc_shared", "1", "128",
                  [("a", a.ravel()), ("b", b.ravel()),
                   ("c", np.zeros(m * n, np.float16))],
                  ["buf:a", "buf:b", "buf:c", "s32:%d" % k],
                  [("c", np.float16)])
    got = out["c"].reshape(m, n)
    # Random inputs: within an f16 ulp of each partial result.
    size = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    return report("wmma_f16_acc_shared" + (" exact" if exact else ""), got,
                  acc, bound=None if exact else 2.0 ** -10 * (size + 1))


def mma_bf16(emu, ptx, work, rng, exact):
    m = n = 32
    k = 128
    a, b = operands(rng, exact, [(m, k), (k, n)], 8)
    abits, bbits = to_bf16_bits(a), to_bf16_bits(b)
    a64 = from_bf16_bits(abits).astype(np.float64)
    b64 = from_bf16_bits(bbits).astype(np.float64)
    out = emulate(emu, ptx, work, "mma_bf16_ldmatrix", "1", "128",
                  [("a", "bf16", abits.ravel()), ("b", "bf16", bbits.ravel()),
                   ("c", np.zeros(m * n, np.float32))],
                  ["buf:a", "buf:b", "buf:c", "s32:%d" % k],
                  [("c", np.float32)])
    return report("mma_bf16_ldmatrix" + (" exact" if exact else ""),
                  out["c"].reshape(m, n), a64 @ b64,
                  bound=None if exact else 1e-5 * (np.abs(a64) @ np.abs(b64)))


def mma_int8(emu, ptx, work, rng, kernel, dtype):
    info = np.iinfo(dtype)
    a = rng.randint(info.min, info.max + 1, size=(16, 32)).astype(dtype)
    b = rng.randint(info.min, info.max + 1, size=(32, 8)).astype(dtype)
    c = rng.randint(-2**31, 2**31, size=(16, 8), dtype=np.int64)
    c[0, 0] = 2**31 - 1  # wraps past INT32_MAX
    c = c.astype(np.int32)
    out = emulate(emu, ptx, work, kernel, "1", "32",
                  [("a", a.ravel()), ("bt", np.ascontiguousarray(b.T).ravel()),
                   ("c", c.ravel()), ("d", np.zeros(128, np.int32))],
                  ["buf:a", "buf:bt", "buf:c", "buf:d"], [("d", np.int32)])
    want = (a.astype(np.int64) @ b.astype(np.int64) + c).astype(np.uint64)
    want = (want & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    return report(kernel, out["d"], want.ravel())


def mma_shape(emu, ptx, work, rng, kernel, k, dtype, acc_dtype):
    """One warp's m16n8kK mma.sync with small integers: exact in every
    format, so bit for bit. An s8 kernel saturates (.satfinite): two
    accumulators start next to the ends of the s32 range."""
    if dtype == np.int8:
        a = rng.randint(-128, 128, size=(16, k)).astype(dtype)
        b = rng.randint(-128, 128, size=(k, 8)).astype(dtype)
        c = rng.randint(-1000, 1000, size=(16, 8)).astype(np.int64)
        c[0, :] = 2**31 - 10
        c[15, :] = -2**31 + 10
    else:
        a = rng.randint(-4, 5, size=(16, k)).astype(dtype)
        b = rng.randint(-4, 5, size=(k, 8)).astype(dtype)
        c = rng.randint(-64, 65, size=(16, 8)).astype(np.int64)
    want = a.astype(np.int64) @ b.astype(np.int64) + c
    want = np.clip(want, -2**31, 2**31 - 1).astype(acc_dtype)
    out = emulate(emu, ptx, work, kernel, "1", "32",
                  [("a", a.ravel()), ("bt", np.ascontiguousarray(b.T).ravel()),
                   ("c", c.astype(acc_dtype).ravel()),
                   ("d", np.zeros(128, acc_dtype))],
                  ["buf:a", "buf:bt", "buf:c", "buf:d"], [("d", acc_dtype)])
    return report(kernel, out["d"], want.ravel())


def cp_async_zfill(emu, ptx, work, rng):
    x = rng.uniform(1, 2, size=128).astype(np.float32)
    out = emulate(emu, ptx, work, "cp_async_zfill", "1", "32",
                  [("in", x), ("out", np.zeros(384, np.float32))],
                  ["buf:in", "buf:out"], [("out", np.float32)])
    want = np.full((3, 32, 4), -1.0, np.float32)
    for i in range(32):
        src = (i % 5) * 4
        for j, size in enumerate((4, 8, 16)):
            for e in range(size // 4):
                want[j, i, e] = x[4 * i + e] if 4 * e < min(src, size) else 0
    return report("cp_async_zfill", out["out"], want.ravel())


def main(emu, ptx, work):
    rng = np.random.RandomState(0)
    ok = True
    for exact in (False, True):
        ok &= wmma_gemm(emu, ptx, work, "wmma_f16_rowcol", rng, 64, 64, 32,
                        exact)
        ok &= wmma_gemm(emu, ptx, work, "wmma_bf16_rowrow", rng, 32, 64, 48,
                        exact)
        ok &= wmma_gemm(emu, ptx, work, "wmma_tf32_rowcol", rng, 64, 32, 32,
                        exact)
        ok &= wmma_f16_acc(emu, ptx, work, rng, exact)
        ok &= mma_bf16(emu, ptx, work, rng, exact)
    ok &= mma_int8(emu, ptx, work, rng, "mma_s8", np.int8)
    ok &= mma_int8(emu, ptx, work, rng, "mma_u8", np.uint8)
    ok &= mma_shape(emu, ptx, work, rng, "mma_tf32_k8", 8, np.float32,
                    np.float32)
    ok &= mma_shape(emu, ptx, work, rng, "mma_tf32_k4", 4, np.float32,
                    np.float32)
    ok &= mma_shape(emu, ptx, work, rng, "mma_f16_k8", 8, np.float16,
                    np.float16)
    ok &= mma_shape(emu, ptx, work, rng, "mma_s8_k16", 16, np.int8, np.int32)
    ok &= cp_async_zfill(emu, ptx, work, rng)
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
