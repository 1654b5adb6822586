"""Runs the sm_90a kernels of nvcc_hopper.cu (mbarrier, TMA, wgmma), compiled
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
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
