"""Runs the sm_90a kernels of nvcc_hopper.cu (mbarrier, TMA, wgmma in bf16 and
8-bit floats, f32 -> 8-bit float conversions), compiled
by nvcc to PTX, on the emulator and compares each with a NumPy reference.

    run_nvcc_hopper.py RIDGE_EMU PTX WORK_DIR

Prints "CASE: PASS" per case, or "CASE: FAIL ..." with the worst element;
exits non-zero on a failure.
"""

import sys

import numpy as np

from emu_harness import (emulate, from_bf16_bits, operands, report,
                         to_bf16_bits)


def swizzle128(offset):
    """The byte offset TMA writes logical offset `offset` to (from a
    1024-byte aligned base): 16-byte chunk bits [4:6] XOR bits [7:9]."""
    return offset ^ (((offset >> 7) & 7) << 4)


def wgmma_gemm(emu, ptx, work, rng, case, kernel, k, exact):
    """C = A @ B, 128 x 128 in f32, from A (128 x k) and B^T (128 x k) in
    bf16, both row-major; wgmma_gemm_kn takes B (k x 128) instead. Small
    integers (`exact`): every product and partial sum is exact, so the
    result is bit-exact whatever the order of accumulation."""
    am, bm = operands(rng, exact, [(128, k), (128, k)], 4)
    abits, bbits = to_bf16_bits(am), to_bf16_bits(bm)  # bm is B^T, N x K
    if kernel == "wgmma_gemm_kn":
        bbuf = bbits.T.copy()
        bmap = "tmap:b:bf16:128x%d:64x64:swizzle128" % k
    else:
        bbuf, bmap = bbits, "tmap:b:bf16:%dx128:64x128:swizzle128" % k
    pipeline = kernel == "wgmma_pipeline"
    out = emulate(emu, ptx, work, kernel, "1", "384" if pipeline else "256",
                  [("a", abits.ravel()), ("b", bbuf.ravel()),
                   ("c", np.zeros(128 * 128, np.float32))],
                  ["tmap:a:bf16:%dx128:64x128:swizzle128" % k, bmap, "buf:c"],
                  [("c", np.float32)],
                  shared=4 * 128 * 64 * 2 if pipeline else 0)
    want = from_bf16_bits(abits).astype(np.float64) @ \
        from_bf16_bits(bbits).astype(np.float64).T
    # With random inputs the hardware's accumulation order is not
    # documented; f32 sums of 64 products agree to about 1e-6 relative
    # to the largest term.
    tolerance = 0.0 if exact else 1e-5
    return report(case, out["c"], want, rtol=tolerance, atol=tolerance)


def fp8_values(bits, e5m2):
    """The float64 values of 8-bit float bit patterns: e4m3 (E4M3FN: bias 7,
    3 mantissa bits, S.1111.111 NaN, no infinities) or e5m2 (bias 15, 2
    mantissa bits, IEEE infinities and NaNs); exponent 0 is subnormal."""
    mantissa_bits, bias = (2, 15) if e5m2 else (3, 7)
    bits = np.asarray(bits).astype(np.int64)
    exponent = (bits & 0x7F) >> mantissa_bits
    mantissa = (bits & ((1 << mantissa_bits) - 1)).astype(np.float64)
    normal = exponent > 0
    significand = np.where(normal, mantissa + (1 << mantissa_bits), mantissa)
    scale = np.where(normal, exponent, 1) - bias - mantissa_bits
    value = np.ldexp(significand, scale)
    if e5m2:
        value = np.where(exponent == 0x1F,
                         np.where(mantissa == 0, np.inf, np.nan), value)
    else:
        value = np.where((bits & 0x7F) == 0x7F, np.nan, value)
    return np.where(bits & 0x80, -value, value)


# The decoder is the oracle, so it is checked against values the formats'
# definitions give: the largest finite and smallest subnormal magnitudes,
# 1.0 and a negative normal of each.
assert list(fp8_values([0x7E, 0x01, 0x38, 0xC4], False)) == \
    [448.0, 2.0 ** -9, 1.0, -3.0]
assert list(fp8_values([0x7B, 0x01, 0x3C, 0xC2, 0x7C], True)) == \
    [57344.0, 2.0 ** -16, 1.0, -3.0, np.inf]


def fp8_finite_codes(e5m2):
    """The bit patterns of the finite values, negative zero included."""
    codes = np.arange(256, dtype=np.uint8)
    return codes[np.isfinite(fp8_values(codes, e5m2))]


def fp8_operand(rng, kind, shape, e5m2):
    """An 8-bit float operand's bit patterns: "integers" in [-8, 8] (exact in
    both formats), "codes" (any finite bit pattern: every exponent,
    subnormals, both zeros) or "permutation" (a square 0/1 matrix with one 1
    per row and column)."""
    codes = fp8_finite_codes(e5m2)
    if kind == "codes":
        return rng.choice(codes, size=shape)
    if kind == "permutation":
        values = np.eye(shape[0])[rng.permutation(shape[0])]
    else:
        values = rng.randint(-8, 9, size=shape).astype(np.float64)
    table = {float(v): c for c, v in zip(codes, fp8_values(codes, e5m2))}
    return np.vectorize(table.__getitem__, otypes=[np.uint8])(values)


def wgmma_fp8_gemm(emu, ptx, work, rng, case, kernel, kinds):
    """C = A @ B^T in f32 from A (128 x 128) in e4m3 and B^T (n x 128) in
    e4m3, or e5m2 for wgmma_fp8_e5m2_gemm; n is 128, or 64 for
    wgmma_fp8_gemm_rs, which takes A from registers. `kinds` are A's and
    B^T's fp8_operand kinds. Integers and a permutation make every product
    and partial sum exact, so those results are bit-exact; a permutation
    on one side copies each value of the other to C, checking every bit
    pattern's decoding and position."""
    e5m2 = kernel == "wgmma_fp8_e5m2_gemm"
    n = 64 if kernel == "wgmma_fp8_gemm_rs" else 128
    abits = fp8_operand(rng, kinds[0], (128, 128), False)
    bbits = fp8_operand(rng, kinds[1], (n, 128), e5m2)
    if kernel == "wgmma_fp8_gemm_rs":
        amap = "buf:a"
    else:
        amap = "tmap:a:u8:128x128:128x128:swizzle128"
    out = emulate(emu, ptx, work, kernel, "1", "256",
                  [("a", abits.ravel()), ("b", bbits.ravel()),
                   ("c", np.zeros(128 * n, np.float32))],
                  [amap, "tmap:b:u8:128x%d:128x%d:swizzle128" % (n, n),
                   "buf:c"],
                  [("c", np.float32)])
    a, b = fp8_values(abits, False), fp8_values(bbits, e5m2)
    want = a @ b.T
    if "codes" not in kinds or "permutation" in kinds:
        return report(case, out["c"], want)
    # Random bit patterns span 2^-9 to 448 (57344 in e5m2) and cancel, so
    # the bound is relative to the sum of the products' magnitudes, which
    # f32 accumulation in any order stays well within.
    return report(case, out["c"], want, bound=1e-5 * (np.abs(a) @ np.abs(b).T))


def fp8_round(x, e5m2):
    """cvt.rn.satfinite of float32 values to e4m3 (or e5m2) bit patterns,
    by search: the nearest of the format's finite values (decoded by
    fp8_values), a tie going to the even bit pattern; magnitudes past the
    largest finite one (infinities too) saturate to it, the sign is kept
    (zeros and underflows included), and NaN gives 0x7F. The PTX ISA asks
    only for "NaN in the specified destination format"; 0x7F, whatever the
    NaN's sign and payload, is what cuda_fp8.h's own conversion gives."""
    x = np.asarray(x, np.float32)
    codes = np.arange(0x80)
    values = fp8_values(codes, e5m2)
    codes, values = codes[np.isfinite(values)], values[np.isfinite(values)]
    nan = np.isnan(x)
    magnitude = np.abs(np.where(nan, 0, x).astype(np.float64))
    # The neighbours below and above (both the largest past it), and the
    # midpoint between them: exact in float64, so the comparisons are too.
    above = np.searchsorted(values, magnitude)
    high = np.minimum(above, len(values) - 1)
    low = np.maximum(above - 1, 0)
    midpoint = (values[low] + values[high]) / 2
    tie = np.where(codes[low] % 2 == 0, low, high)
    nearest = np.where(magnitude > midpoint, high,
                       np.where(magnitude < midpoint, low, tie))
    bits = codes[nearest] | np.where(np.signbit(x), 0x80, 0)
    return np.where(nan, 0x7F, bits).astype(np.uint8)


# The rounding is checked on cases worked by hand: ties to the even
# pattern (17 between 16 and 18, 1.125 between 1 and 1.25, 1.5 and 0.5
# times the smallest subnormal), saturation at and past the rounding
# boundary, infinities, negative zero and NaN.
assert list(fp8_round([17, 19, 2.0 ** -10, 1.5 * 2.0 ** -9, 464, 1e6,
                       -np.inf, -0.0, np.nan], False)) == \
    [0x58, 0x5A, 0x00, 0x02, 0x7E, 0x7E, 0xFE, 0x80, 0x7F]
assert list(fp8_round([1.125, 1.375, 2.0 ** -17, 3 * 2.0 ** -17, 61440,
                       np.inf, -1e-30, -np.nan], True)) == \
    [0x3C, 0x3E, 0x00, 0x02, 0x7B, 0x7B, 0x80, 0x7F]


def cvt_fp8_inputs(rng):
    """float32 values for the conversions: for each format, every finite
    value, the midpoints between neighbours and the float32 values either
    side of each (subnormals and below the smallest subnormal included),
    and the largest finite value, the rounding boundary past it (464,
    61440) and the float32 values either side of those; then infinities,
    zeros, float32 extremes, NaNs (both signs, quiet and signalling), 4096
    random bit patterns and 4096 random values in the formats' range;
    all with both signs."""
    points = [np.float32(v) for v in [0.0, 1e-30, 2.0 ** -149, 2.0 ** -126,
                                      2.0 ** -20, 500.0, 1e6, 3.4e38]]
    for e5m2 in (False, True):
        values = fp8_values(fp8_finite_codes(e5m2), e5m2)
        values = np.unique(np.abs(values))
        midpoints = (values[:-1] + values[1:]) / 2
        largest = values[-1]
        boundary = largest + (largest - values[-2]) / 2
        quarter = values[1] / 4
        points += list(np.concatenate([values, midpoints, [boundary, 2 *
                                                           largest, quarter]]))
    points = np.array(points, np.float32)
    near = np.concatenate([points, np.nextafter(points, np.float32(np.inf)),
                           np.nextafter(points, np.float32(-np.inf))])
    near = near[near >= 0]
    random_bits = rng.randint(0, 2 ** 32, size=4096, dtype=np.uint64)
    in_range = np.ldexp(rng.uniform(1, 2, size=4096),
                        rng.randint(-18, 17, size=4096))
    special = np.array([0x7F800000, 0x7FC00000, 0x7F800001, 0x7FFFFFFF],
                       np.uint32).view(np.float32)
    magnitudes = np.concatenate([near, special,
                                 in_range.astype(np.float32)])
    return np.concatenate([magnitudes, -magnitudes,
                           random_bits.astype(np.uint32).view(np.float32)])


def report_bits(case, inputs, got, want):
    """Prints "CASE: PASS" where the 8-bit patterns `got` equal `want`,
    else "CASE: FAIL" with the first mismatches: input (its float32 bits
    and value), expected and actual pattern. Returns whether it passed."""
    wrong = np.flatnonzero(got != want)
    if wrong.size == 0:
        print("%s: PASS" % case)
        return True
    print("%s: FAIL, %d of %d wrong: " % (case, wrong.size, got.size) +
          "; ".join("0x%08x (%r): expected 0x%02x, got 0x%02x" % (
              inputs[i:i + 1].view(np.uint32)[0], float(inputs[i]), want[i],
              got[i]) for i in wrong[:8]))
    return False


def cvt_fp8x2(emu, ptx, work, rng):
    """cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 on each input, as the lower byte
    (b) of one pair and the upper byte (a) of another: the pairs are
    (x[i], x[n - 1 - i]), x.x first."""
    x = cvt_fp8_inputs(rng)
    n = x.size
    pairs = np.stack([x, x[::-1]], axis=1).ravel()
    out = emulate(emu, ptx, work, "cvt_fp8x2", str((n + 255) // 256), "256",
                  [("in", pairs), ("e4m3", np.zeros(n, np.uint16)),
                   ("e5m2", np.zeros(n, np.uint16))],
                  ["buf:in", "buf:e4m3", "buf:e5m2", "s32:%d" % n],
                  [("e4m3", np.uint16), ("e5m2", np.uint16)])
    ok = True
    for case, name, e5m2 in [("cvt_fp8x2_e4m3", "e4m3", False),
                             ("cvt_fp8x2_e5m2", "e5m2", True)]:
        want = fp8_round(x, e5m2)
        # Each input's byte as b (lower byte of pair i) and as a (upper
        # byte of pair n - 1 - i).
        got = np.concatenate([out[name] & 0xFF, (out[name] >> 8)[::-1]])
        ok &= report_bits(case, np.concatenate([x, x]),
                          got.astype(np.uint8), np.concatenate([want, want]))
    return ok


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
    # as B^T (128 x 64, K-major) or as B (64 x 128, N-major); (d) the
    # warp-specialized pipeline: K = 256 in 4 k-tiles through a 2-stage
    # ring, so each stage is refilled once its consumers release it.
    for case, kernel, k, exact in [
            ("wgmma_gemm_integers", "wgmma_gemm", 64, True),
            ("wgmma_gemm_random", "wgmma_gemm", 64, False),
            ("wgmma_gemm_kn_integers", "wgmma_gemm_kn", 64, True),
            ("wgmma_pipeline_integers", "wgmma_pipeline", 256, True),
            ("wgmma_pipeline_random", "wgmma_pipeline", 256, False)]:
        ok &= wgmma_gemm(emu, ptx, work, rng, case, kernel, k, exact)
    # (e) 8-bit float wgmma, A and B K-major: e4m3 x e4m3 and e4m3 x e5m2
    # from shared-memory descriptors, and e4m3 with A from registers.
    for case, kernel, kinds in [
            ("wgmma_fp8_gemm_integers", "wgmma_fp8_gemm",
             ("integers", "integers")),
            ("wgmma_fp8_gemm_codes", "wgmma_fp8_gemm",
             ("codes", "permutation")),
            ("wgmma_fp8_gemm_random", "wgmma_fp8_gemm", ("codes", "codes")),
            ("wgmma_fp8_e5m2_gemm_codes", "wgmma_fp8_e5m2_gemm",
             ("permutation", "codes")),
            ("wgmma_fp8_e5m2_gemm_random", "wgmma_fp8_e5m2_gemm",
             ("codes", "codes")),
            ("wgmma_fp8_gemm_rs_integers", "wgmma_fp8_gemm_rs",
             ("integers", "integers")),
            ("wgmma_fp8_gemm_rs_random", "wgmma_fp8_gemm_rs",
             ("codes", "codes"))]:
        ok &= wgmma_fp8_gemm(emu, ptx, work, rng, case, kernel, kinds)
    # (f) f32 pairs to e4m3x2 and e5m2x2, bit for bit.
    ok &= cvt_fp8x2(emu, ptx, work, rng)
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
