//===- TileKernelBodies.cpp - One loop nest per kernel, by its config -----===//
//
// The second half of a kernel's loop nest (after ridge-fuse-kernel-bodies
// and ridge-select-kernel-config): the kernel's result op (its sink) is
// tiled by `scf.forall` with the config's `tile_sizes`, and every producer
// (the reductions it reads and their inputs) is fused into the loop, as
// upstream's tileConsumerAndFuseProducersUsingSCF does. The pass decides
// nothing: a kernel whose config has no tile sizes stays as it is.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/KernelConfig.h"
#include "ridgeline/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-tile-kernel-bodies"

namespace mlir::ridge {
#define GEN_PASS_DEF_TILEKERNELBODIESPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

/// Whether one tile of `sizes` covers `sink`'s whole iteration space (every
/// tiled loop has a static extent of at most its tile size).
static bool isOneTile(TilingInterface sink, ArrayRef<int64_t> sizes) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(sink.getOperation());
  if (!linalgOp)
    return false;
  bool tiled = false;
  for (auto [extent, size] : llvm::zip(linalgOp.getStaticLoopRanges(), sizes)) {
    if (size == 0)
      continue;
    tiled = true;
    if (ShapedType::isDynamic(extent) || extent > size)
      return false;
  }
  return tiled;
}

/// Tiles `sink` by `sizes` with every producer fused into the loop.
static LogicalResult tileAndFuseSink(TilingInterface sink,
                                     ArrayRef<int64_t> sizes, bool &oneTile) {
  size_t numLoops = sink.getLoopIteratorTypes().size();
  if (numLoops != sizes.size())
    return sink->emitError()
           << "'" << kKernelConfigAttr << "' has " << sizes.size()
           << " tile sizes for a kernel whose result op has " << numLoops
           << " loops";
  MLIRContext *context = sink->getContext();
  IRRewriter rewriter(context);
  rewriter.setInsertionPoint(sink);
  SmallVector<int64_t> loopSizes(sizes);
  oneTile = isOneTile(sink, sizes);
  if (oneTile) {
    // One tile covers the sink (a decode step's one row): the kernel keeps
    // a loop of one iteration, its first tiled dimension, mapped to one
    // block, since the canonicalizer folds an unmapped loop of one iteration
    // and the kernel's ops would then become one kernel each.
    auto firstTiled =
        llvm::find_if(loopSizes, [](int64_t size) { return size != 0; });
    std::fill(std::next(firstTiled), loopSizes.end(), 0);
  }
  SmallVector<OpFoldResult> tileSizes;
  for (int64_t size : loopSizes)
    tileSizes.push_back(rewriter.getIndexAttr(size));

  scf::SCFTileAndFuseOptions options;
  options.tilingOptions.setTileSizes(tileSizes).setLoopType(
      scf::SCFTilingOptions::LoopType::ForallOp);
  if (oneTile)
    options.tilingOptions.setMapping(
        {gpu::GPUBlockMappingAttr::get(context, gpu::MappingId::DimX)});
  // A producer the kernel also returns (a residual add before its norm) is
  // yielded by the loop, so that its value leaves the kernel too.
  // A value that every tile reads whole (a mean over all dims, rank 0, also
  // when expanded to a broadcastable 1x1x1) is computed once, before the
  // loop, not again in each tile.
  options.setFusionControlFn(
      [](tensor::ExtractSliceOp, OpResult producer, bool isDestination)
          -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        Value whole = producer;
        if (auto expand = producer.getDefiningOp<tensor::ExpandShapeOp>())
          whole = expand.getSrc();
        if (cast<ShapedType>(whole.getType()).getRank() == 0)
          return std::nullopt;
        scf::SCFTileAndFuseOptions::ControlFnResult result;
        result.yieldProducerReplacement =
            !isDestination && isKernelResult(producer);
        return result;
      });
  FailureOr<scf::SCFTileAndFuseResult> fused =
      scf::tileConsumerAndFuseProducersUsingSCF(rewriter, sink, options);
  if (failed(fused))
    return sink->emitError("cannot tile the kernel's result op");
  // Uses before the loop (a producer left out of it, such as a value every
  // tile reads whole) keep the original, which stays to compute it.
  DominanceInfo dominance(sink->getParentOp());
  for (auto [original, replacement] : fused->replacements) {
    Value tiled = replacement;
    rewriter.replaceUsesWithIf(original, tiled, [&](OpOperand &use) {
      return dominance.properlyDominates(tiled, use.getOwner());
    });
  }
  return success();
}

/// Folds what tiling left behind (dead producers, trivial slices) and merges
/// the copies of a producer fused for two consumers (a softmax's row max,
/// read by the sum and by the output): one pass over the row suffices.
static LogicalResult cleanUp(func::FuncOp kernel,
                             const FrozenRewritePatternSet &cleanup) {
  if (failed(applyPatternsGreedily(kernel, cleanup)))
    return failure();
  IRRewriter rewriter(kernel.getContext());
  DominanceInfo dominance(kernel);
  eliminateCommonSubExpressions(rewriter, dominance, kernel);
  return success();
}

namespace {
struct TileKernelBodiesPass
    : public ridge::impl::TileKernelBodiesPassBase<TileKernelBodiesPass> {
  /// The clean-up patterns (every canonicalization) are collected once, not
  /// per kernel: collecting them costs more than tiling a small kernel.
  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet patterns(context);
    tensor::populateFoldTensorEmptyPatterns(patterns);
    for (Dialect *dialect : context->getLoadedDialects())
      dialect->getCanonicalizationPatterns(patterns);
    for (RegisteredOperationName op : context->getRegisteredOperations())
      op.getCanonicalizationPatterns(patterns, context);
    cleanupPatterns = FrozenRewritePatternSet(std::move(patterns));
    return success();
  }

  void runOnOperation() override {
    func::FuncOp kernel = getOperation();
    if (!kernel->hasAttr(kKernelAttr) || kernel.isExternal())
      return;
    FailureOr<std::optional<KernelConfig>> config = getKernelConfig(kernel);
    if (failed(config))
      return signalPassFailure();
    TilingInterface sink = getKernelSink(kernel);
    if (!*config) {
      if (!sink)
        return;
      kernel.emitError() << "kernel of several ops has no '"
                         << kKernelConfigAttr
                         << "' to tile it by (run ridge-select-kernel-config)";
      return signalPassFailure();
    }
    ArrayRef<int64_t> sizes = (*config)->tileSizes;
    if (!sizes.empty()) {
      if (!sink) {
        kernel.emitError() << "'" << kKernelConfigAttr
                           << "' has tile sizes for a kernel of one op";
        return signalPassFailure();
      }
      if (hasEmptyLoop(kernel)) {
        kernel.emitError() << "'" << kKernelConfigAttr
                           << "' has tile sizes for a kernel with an empty "
                              "loop (a zero-extent dimension)";
        return signalPassFailure();
      }
      bool oneTile = false;
      if (failed(tileAndFuseSink(sink, sizes, oneTile)))
        return signalPassFailure();
      ++numTiledKernels;
      if (oneTile)
        ++numOneTileKernels;
      LLVM_DEBUG(llvm::dbgs()
                 << "--- after tiling " << kernel.getName() << " ---\n"
                 << kernel << "\n");
    } else if (sink) {
      LLVM_DEBUG(llvm::dbgs() << kernel.getName()
                              << ": config has no tile sizes; one loop nest "
                                 "per op\n");
      ++numUntiledKernels;
    }
    if (failed(cleanUp(kernel, cleanupPatterns)))
      return signalPassFailure();
    // The kernel's loop nests (its scf.forall, or its ops when it is not
    // tiled) carry the config through inlining and bufferization to the
    // mapping passes.
    Attribute configAttr = kernel->getAttr(kKernelConfigAttr);
    for (Operation &op : kernel.front())
      if (isa<scf::ForallOp, linalg::LinalgOp>(op))
        op.setAttr(kKernelConfigAttr, configAttr);
  }

  FrozenRewritePatternSet cleanupPatterns;
};
} // namespace
