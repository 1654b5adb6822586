//===- GemvConfig.cpp - The bandwidth path's policy -----------------------===//
//
// Which skinny contractions take the bandwidth path (getGemvForm) and how
// (selectGemvConfig): the forms, the shares of k and the rows a warp, from
// the shape and the target on a latency-and-bandwidth model. The mechanism
// is MmaGemv.cpp; docs/kernel-config.md states the policy.
//
//===----------------------------------------------------------------------===//

#include "KernelConfigPolicy.h"

#include "ridgeline/Analysis/PrecisionPolicy.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::config_policy;

/// Whether the product's operands are what the bandwidth path multiplies:
/// both multiplied in f32, f16 or bf16, each stored in that type or (f16,
/// bf16) as an f32 the body rounds: a half-precision export, or an f32
/// model whose weight the precision policy stored narrow
/// (getCompileTimeWeightType), beside activations it rounds in registers.
static bool hasGemvTypes(const MmaProduct &product) {
  Type type = product.rhs.mmaType;
  auto storedAs = [&](const MmaOperand &operand) {
    return operand.mmaType == type &&
           (operand.elementType == type || operand.elementType.isF32());
  };
  return storedAs(product.lhs) && storedAs(product.rhs) &&
         (type.isF32() || type.isF16() || type.isBF16());
}

/// The form of the bandwidth path over a weight (m is the short side), or
/// none. A weight stored n-contiguous (a MatMul's [K, N], or [heads, d, N]
/// read with two k loops): lanes own 4 columns each (MmaGemv.cpp); one
/// stored k-contiguous (the [N, K] of a Gemm with transB): lanes split k.
/// The m rows (a few activations) may be gathered element by element.
static std::optional<GemvForm> getWeightGemvForm(const MmaProduct &product) {
  const MmaOperand &rows = product.lhs, &weight = product.rhs;
  if (weight.collapsedK || weight.producer)
    return std::nullopt;
  if (!weight.kContiguous) {
    if (weight.rowsAfterK && !rows.collapsedK)
      return GemvForm::NContiguousWeight;
    return std::nullopt;
  }
  if (!weight.gathered &&
      (rows.gathered || (!rows.collapsedK && rows.kContiguous)) &&
      product.k % weight.getChunkElements() == 0)
    return GemvForm::KContiguousWeight;
  return std::nullopt;
}

std::optional<GemvForm> mlir::ridge::getGemvForm(const MmaContraction &mma) {
  if (mma.products.size() != 1 || !hasGemvTypes(mma.products.front()))
    return std::nullopt;
  const MmaProduct &product = mma.products.front();
  const MmaOperand &rows = product.lhs;
  // Tall and skinny: A's rows are what streams, read in 16-byte pieces
  // along k; the few columns of B (any layout) stay in the caches.
  bool tallSkinny = isBandwidthPathSide(mma.n, rows.getStoredBytes()) &&
                    !rows.gathered && rows.kContiguous &&
                    product.k % rows.getChunkElements() == 0;
  // Both sides skinny (16 x 8): the larger operand is the one to stream, A
  // when it has more rows than B has columns (the column form would leave
  // most lanes of a warp without a column).
  if (tallSkinny && mma.m > mma.n)
    return GemvForm::TallSkinny;
  if (isBandwidthPathSide(mma.m, product.rhs.getStoredBytes()))
    if (std::optional<GemvForm> form = getWeightGemvForm(product))
      return form;
  if (tallSkinny)
    return GemvForm::TallSkinny;
  return std::nullopt;
}

int64_t mlir::ridge::getGemvColumnRowsInFlight(int64_t m) {
  return std::clamp<int64_t>(64 / (kWideVector + m), 1, 8);
}

/// The shares of k (1 to `most`) a streaming GEMV splits into: the count
/// that minimizes its time on a latency-and-bandwidth model. With S shares
/// each warp walks stepsOf(S) steps and waits a loaded latency
/// (kLoadedMemoryLatencySeconds) per step; all warps together keep
/// inFlightOf(S) bytes in flight, so they stream at most that per latency,
/// and at most the GPU's bandwidth; `bytes` move, plus (S > 1) the partial
/// sums of `outputs` outputs, written and read once more; a split adds the
/// last block's serial sums, priced as 4 latencies (as split-K's tail). A
/// split must save a fifth of the time.
static int64_t selectGemvShares(int64_t most, double bytes, int64_t outputs,
                                function_ref<int64_t(int64_t)> stepsOf,
                                function_ref<double(int64_t)> inFlightOf,
                                const TargetSpec &target) {
  auto seconds = [&](int64_t shares) {
    double bandwidth = std::min(
        target.gpu.bandwidth, inFlightOf(shares) / kLoadedMemoryLatencySeconds);
    double moved =
        bytes +
        (shares > 1 ? 8.0 * static_cast<double>(shares * outputs) : 0.0);
    double time = std::max(static_cast<double>(stepsOf(shares)) *
                               kLoadedMemoryLatencySeconds,
                           moved / bandwidth);
    return time + (shares > 1 ? 4 * kLoadedMemoryLatencySeconds : 0.0);
  };
  int64_t best = 1;
  for (int64_t shares = 2; shares <= most; ++shares)
    if (seconds(shares) < seconds(best))
      best = shares;
  // A split that saves under a fifth of the time is within the model's
  // error and costs a launch and the partial sums' bytes for nothing.
  return seconds(best) < 0.8 * seconds(1) ? best : 1;
}

/// Shares of k of the column GEMV (an n-contiguous weight), by
/// selectGemvShares: a warp loads getGemvColumnRowsInFlight weight rows a
/// step (512 bytes each), so a share of k / S rows takes ceil(k / S /
/// rows) steps; each share keeps at least 4 steps.
static int64_t selectGemvSplitK(const MmaContraction &gemv,
                                const TargetSpec &target) {
  int64_t rowsInFlight = getGemvColumnRowsInFlight(gemv.m);
  const MmaOperand &weight = gemv.products.front().rhs;
  int64_t groups =
      llvm::divideCeil(gemv.n, weight.getChunkElements() * kWarpSize);
  int64_t k = gemv.products.front().k;
  double weightBytes =
      static_cast<double>(weight.getStoredBytes() * k * gemv.n);
  int64_t most = std::clamp<int64_t>(k / (4 * rowsInFlight), 1, kMaxGemvSplitK);
  return selectGemvShares(
      most, weightBytes, gemv.m * gemv.n,
      [&](int64_t shares) {
        return llvm::divideCeil(llvm::divideCeil(k, shares), rowsInFlight);
      },
      [&](int64_t shares) {
        return static_cast<double>(groups * shares * rowsInFlight * kWarpSize *
                                   16);
      },
      target);
}

int64_t mlir::ridge::getTallSkinnyPiecesInFlight(int64_t rowsPerWarp,
                                                 int64_t kPerShare,
                                                 int64_t piece) {
  return std::clamp<int64_t>(kTallSkinnyPiecesInFlight / rowsPerWarp, 1,
                             llvm::divideCeil(kPerShare, kWarpSize * piece));
}

/// Shares of k of the tall-skinny GEMV, by selectGemvShares: a few rows
/// over a long k (64 tokens of 4,096 features by a router's 8 experts)
/// leave most SMs idle, each warp walking its rows' k in ceil(k / (32 x
/// piece x pieces in flight)) steps of a latency. A warp keeps R x pieces
/// in flight x 512 bytes in flight; each share keeps at least 4 steps.
static int64_t selectTallSkinnySplitK(const MmaContraction &gemv,
                                      int64_t rowsPerWarp,
                                      const TargetSpec &target) {
  const MmaProduct &product = gemv.products.front();
  int64_t batch = gemv.getBatchCount();
  int64_t k = product.k, piece = product.lhs.getChunkElements();
  int64_t warps = batch * llvm::divideCeil(gemv.m, rowsPerWarp);
  auto steps = [&](int64_t shares) {
    int64_t kPerShare = llvm::alignTo(llvm::divideCeil(k, shares), piece);
    int64_t inFlight =
        getTallSkinnyPiecesInFlight(rowsPerWarp, kPerShare, piece);
    return llvm::divideCeil(kPerShare, kWarpSize * piece * inFlight);
  };
  int64_t most = 1;
  while (most < kMaxGemvSplitK && steps(most + 1) >= 4)
    ++most;
  double bytes =
      static_cast<double>(batch * (product.lhs.getStoredBytes() * gemv.m * k +
                                   product.rhs.getStoredBytes() * k * gemv.n));
  return selectGemvShares(
      most, bytes, batch * gemv.m * gemv.n, steps,
      [&](int64_t shares) {
        int64_t kPerShare = llvm::alignTo(llvm::divideCeil(k, shares), piece);
        return static_cast<double>(
            warps * shares * rowsPerWarp *
            getTallSkinnyPiecesInFlight(rowsPerWarp, kPerShare, piece) *
            kWarpSize * 16);
      },
      target);
}

/// Rows of A a warp of the tall-skinny GEMV computes: each B element it
/// loads (from the caches: B is small) serves that many rows, so the caches
/// deliver n / R times A's bytes of B. R grows (1, 2, 4) while the lane's
/// sums stay at most kMaxTallSkinnySums and the warps still number
/// kTallSkinnyWarpsPerSm an SM.
static int64_t selectGemvRowsPerWarp(const MmaContraction &gemv,
                                     const TargetSpec &target) {
  int64_t rows = 1;
  int64_t enough = kTallSkinnyWarpsPerSm * target.gpu.smCount;
  while (rows < kMaxGemvRowsPerWarp &&
         2 * rows * gemv.n <= kMaxTallSkinnySums &&
         static_cast<int64_t>(llvm::divideCeil(gemv.m, 2 * rows)) >= enough)
    rows *= 2;
  return rows;
}

void mlir::ridge::config_policy::selectGemvConfig(const MmaContraction &mma,
                                                  GemvForm form,
                                                  const TargetSpec &target,
                                                  KernelConfig &config) {
  config.gemv = true;
  config.vectorWidth = kWideVector;
  if (form == GemvForm::NContiguousWeight) {
    config.gemvSplitK = selectGemvSplitK(mma, target);
    config.blockSize = kGemvColumnWarps * kWarpSize;
    config.warpsPerBlock = kGemvColumnWarps;
    return;
  }
  if (form == GemvForm::TallSkinny) {
    config.gemvRowsPerWarp = selectGemvRowsPerWarp(mma, target);
    config.gemvSplitK =
        selectTallSkinnySplitK(mma, config.gemvRowsPerWarp, target);
  }
  config.blockSize = kMaxWarpsPerBlock * kWarpSize;
  config.warpsPerBlock = kMaxWarpsPerBlock;
}
