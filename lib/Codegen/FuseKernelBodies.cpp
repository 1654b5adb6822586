//===- FuseKernelBodies.cpp - One loop nest per kernel function -----------===//
//
// A kernel function (outlined from a fusion group, then lowered to linalg)
// must become exactly one loop nest, which the GPU mapping turns into one
// kernel launch. Two mechanisms get it there:
//
//  1. Producer fusion inside the body: elementwise generics fold into their
//     consumers (recomputed when several consumers read them), reshapes are
//     propagated out of the way, and a `tensor.extract` from an elementwise
//     generic (how slices, gathers and concats read) is replaced by the
//     generic's scalar computation at that index.
//  2. If more than one op remains (a contraction with its epilogue, a row
//     reduction with the ops around it), the op producing the kernel's result
//     is tiled by `scf.forall` and every producer is fused into the loop.
//     Loop dimensions that a reduction's result is broadcast along (the row of
//     a softmax or a norm) stay whole; all others are tiled by one, so that a
//     reduction runs once per row and a contraction once per output element.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/KernelConfig.h"
#include "ridgeline/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-fuse-kernel-bodies"

namespace mlir::ridge {
#define GEN_PASS_DEF_FUSEKERNELBODIESPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

/// Whether `generic` reads the result of a reduction (a contraction, a row
/// reduction) through an operand. Such a read must stay an operand: turning
/// it into a `tensor.extract` would hide the producer from tiling.
static bool readsReduction(linalg::GenericOp generic) {
  return llvm::any_of(generic.getDpsInputs(), [](Value input) {
    auto producer = input.getDefiningOp<linalg::LinalgOp>();
    return producer && producer.getNumReductionLoops() != 0;
  });
}

namespace {
/// `tensor.extract %g[%i...]` of an all-parallel generic whose result map is
/// a permutation: computes the generic's body at that one index instead of
/// materializing the whole tensor.
struct FoldExtractOfElementwise : OpRewritePattern<tensor::ExtractOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExtractOp extract,
                                PatternRewriter &rewriter) const override {
    auto result = dyn_cast<OpResult>(extract.getTensor());
    auto producer =
        result ? dyn_cast<linalg::GenericOp>(result.getOwner()) : nullptr;
    if (!producer || !producer.hasPureTensorSemantics() ||
        producer.getNumReductionLoops() != 0 || readsReduction(producer))
      return rewriter.notifyMatchFailure(extract, "not an elementwise generic");
    OpOperand *init = producer.getDpsInitOperand(result.getResultNumber());
    AffineMap outputMap = producer.getMatchingIndexingMap(init);
    if (!outputMap.isPermutation())
      return rewriter.notifyMatchFailure(extract, "output map not invertible");
    // The body must not read the output value it would overwrite.
    Block &body = producer.getRegion().front();
    if (!body.getArgument(init->getOperandNumber()).use_empty())
      return rewriter.notifyMatchFailure(extract, "body reads its output");

    Location loc = extract.getLoc();
    SmallVector<Value> ivs(outputMap.getNumDims());
    for (auto [position, expr] : llvm::enumerate(outputMap.getResults()))
      ivs[cast<AffineDimExpr>(expr).getPosition()] =
          extract.getIndices()[position];

    IRMapping mapping;
    for (OpOperand *input : producer.getDpsInputOperands()) {
      BlockArgument argument = body.getArgument(input->getOperandNumber());
      if (argument.use_empty())
        continue;
      Value value = input->get();
      if (auto type = dyn_cast<RankedTensorType>(value.getType())) {
        AffineMap map = producer.getMatchingIndexingMap(input);
        SmallVector<Value> indices;
        for (AffineExpr expr : map.getResults()) {
          AffineMap single =
              AffineMap::get(map.getNumDims(), map.getNumSymbols(), expr);
          indices.push_back(affine::makeComposedAffineApply(
                                rewriter, loc, single, getAsOpFoldResult(ivs))
                                .getResult());
        }
        value = tensor::ExtractOp::create(rewriter, loc, value, indices);
      }
      mapping.map(argument, value);
    }
    for (Operation &op : body.without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(op)) {
        mapping.map(index.getResult(), ivs[index.getDim()]);
        continue;
      }
      rewriter.clone(op, mapping);
    }
    Value yielded = body.getTerminator()->getOperand(result.getResultNumber());
    rewriter.replaceOp(extract, mapping.lookupOrDefault(yielded));
    return success();
  }
};
} // namespace

/// Whether `value` is a kernel argument or constant, possibly reshaped: data
/// in device memory that a reshape only views.
static bool isViewOfMemory(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (isa<arith::ConstantOp>(def))
      return true;
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
      return false;
    value = def->getOperand(0);
  }
  return true;
}

/// A reshape of a value the kernel computes stands between producer and
/// consumer fusion (and tiling cannot fuse through it). It becomes an
/// elementwise generic that reads the source at the delinearized index,
/// which folds into its consumers like any other elementwise op.
static void convertInternalReshapes(func::FuncOp kernel) {
  SmallVector<Operation *> reshapes;
  kernel.walk([&](Operation *op) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op) ||
        isViewOfMemory(op->getOperand(0)))
      return;
    // Only an elementwise source folds into the reads; a reduction's result
    // is left to tiling.
    auto source = op->getOperand(0).getDefiningOp<linalg::GenericOp>();
    if (source && source.getNumReductionLoops() == 0 && !readsReduction(source))
      reshapes.push_back(op);
  });
  IRRewriter rewriter(kernel.getContext());
  for (Operation *reshape : reshapes) {
    Value source = reshape->getOperand(0);
    auto sourceType = cast<RankedTensorType>(source.getType());
    auto resultType = cast<RankedTensorType>(reshape->getResult(0).getType());
    if (!sourceType.hasStaticShape() || !resultType.hasStaticShape())
      continue;
    Location loc = reshape->getLoc();
    rewriter.setInsertionPoint(reshape);
    Value init = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                         resultType.getElementType());
    unsigned rank = resultType.getRank();
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, resultType, ValueRange{}, ValueRange{init}, maps,
        iterators, [&](OpBuilder &b, Location l, ValueRange) {
          auto constant = [&](int64_t v) {
            return arith::ConstantIndexOp::create(b, l, v).getResult();
          };
          Value linear = constant(0);
          for (unsigned d = 0; d < rank; ++d) {
            Value index = linalg::IndexOp::create(b, l, d);
            linear = arith::MulIOp::create(b, l, linear,
                                           constant(resultType.getDimSize(d)));
            linear = arith::AddIOp::create(b, l, linear, index);
          }
          SmallVector<Value> indices(sourceType.getRank());
          for (int64_t d = sourceType.getRank() - 1; d >= 0; --d) {
            Value size = constant(sourceType.getDimSize(d));
            indices[d] = arith::RemUIOp::create(b, l, linear, size);
            linear = arith::DivUIOp::create(b, l, linear, size);
          }
          Value element = tensor::ExtractOp::create(b, l, source, indices);
          linalg::YieldOp::create(b, l, element);
        });
    rewriter.replaceOp(reshape, generic.getResults());
  }
}

static LogicalResult applyFusionPatterns(func::FuncOp kernel) {
  MLIRContext *context = kernel.getContext();
  RewritePatternSet patterns(context);
  linalg::populateLinalgNamedOpsGeneralizationPatterns(patterns);
  // Everything in a kernel belongs together; a producer the kernel also
  // returns stays whole so that the tiled loop can hand its value out.
  linalg::ControlFusionFn control = [](OpOperand *operand) {
    return !isKernelResult(operand->get());
  };
  linalg::populateElementwiseOpsFusionPatterns(patterns, control);
  linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
  linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
  tensor::populateFoldTensorEmptyPatterns(patterns);
  patterns.add<FoldExtractOfElementwise>(context);
  for (Dialect *dialect : context->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : context->getRegisteredOperations())
    if (isa<linalg::LinalgDialect, tensor::TensorDialect>(op.getDialect()))
      op.getCanonicalizationPatterns(patterns, context);
  return applyPatternsGreedily(kernel, std::move(patterns));
}

/// Fuses producers into consumers; reshapes that propagation could not move
/// out of the way are turned into reads and fused on a second round.
static LogicalResult fuseProducers(func::FuncOp kernel) {
  if (failed(applyFusionPatterns(kernel)))
    return failure();
  convertInternalReshapes(kernel);
  return applyFusionPatterns(kernel);
}

namespace {
/// What tileAndFuseSink did with a kernel.
enum class TilingOutcome { Tiled, SingleOp, Untileable };
} // namespace

static FailureOr<TilingOutcome>
tileAndFuseSink(func::FuncOp kernel,
                const std::optional<KernelConfig> &config) {
  TilingInterface sink = getKernelSink(kernel);
  if (!sink)
    return TilingOutcome::SingleOp;

  // Tiling needs each operand slice to follow from the tile: indices that
  // are non-negative combinations of loops (a strided convolution's
  // window) do; differences, divisions and modulos (a transposed
  // convolution's) do not, and such kernels keep a loop nest per op.
  bool tileable = true;
  kernel.walk([&](linalg::LinalgOp op) {
    for (AffineMap map : op.getIndexingMapsArray())
      for (AffineExpr expr : map.getResults())
        expr.walk([&](AffineExpr sub) {
          if (auto binary = dyn_cast<AffineBinaryOpExpr>(sub)) {
            if (sub.getKind() != AffineExprKind::Add &&
                sub.getKind() != AffineExprKind::Mul)
              tileable = false;
            if (auto c = dyn_cast<AffineConstantExpr>(binary.getRHS()))
              tileable &= c.getValue() >= 0;
          }
        });
  });
  if (!tileable) {
    LLVM_DEBUG(llvm::dbgs() << kernel.getName()
                            << ": operand slices do not follow from a tile; "
                               "one loop nest per op\n");
    return TilingOutcome::Untileable;
  }

  // Tile sizes set by hand (a test's ridge.kernel_config) or the row rule:
  // loop dimensions that a reduction's result is broadcast along (rows) stay
  // whole, every other parallel loop is tiled by one.
  SmallVector<utils::IteratorType> iterators = sink.getLoopIteratorTypes();
  SmallVector<int64_t> sizes;
  if (config && !config->tileSizes.empty()) {
    sizes = config->tileSizes;
    if (iterators.size() != sizes.size())
      return sink->emitError()
             << "'" << kKernelConfigAttr << "' has " << sizes.size()
             << " tile sizes for a kernel whose result op has "
             << iterators.size() << " loops";
  } else {
    auto linalgSink = dyn_cast<linalg::LinalgOp>(sink.getOperation());
    llvm::SmallBitVector rowDims = linalgSink
                                       ? getRowDims(linalgSink)
                                       : llvm::SmallBitVector(iterators.size());
    for (auto [dim, iterator] : llvm::enumerate(iterators))
      sizes.push_back(
          iterator == utils::IteratorType::parallel && !rowDims.test(dim) ? 1
                                                                          : 0);
  }
  OpBuilder builder(kernel.getContext());
  SmallVector<OpFoldResult> tileSizes;
  for (int64_t size : sizes)
    tileSizes.push_back(builder.getIndexAttr(size));

  scf::SCFTileAndFuseOptions options;
  options.tilingOptions.setTileSizes(tileSizes).setLoopType(
      scf::SCFTilingOptions::LoopType::ForallOp);
  options.setFusionControlFn(
      [](tensor::ExtractSliceOp, OpResult producer, bool isDestination)
          -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        scf::SCFTileAndFuseOptions::ControlFnResult result;
        result.yieldProducerReplacement =
            !isDestination && isKernelResult(producer);
        return result;
      });
  IRRewriter rewriter(kernel.getContext());
  rewriter.setInsertionPoint(sink);
  FailureOr<scf::SCFTileAndFuseResult> fused =
      scf::tileConsumerAndFuseProducersUsingSCF(rewriter, sink, options);
  if (failed(fused))
    return sink->emitError("cannot tile the kernel's result op");
  for (auto [original, replacement] : fused->replacements)
    rewriter.replaceAllUsesWith(original, replacement);
  LLVM_DEBUG({
    llvm::dbgs() << "--- after tiling " << kernel.getName() << " (tile sizes";
    for (OpFoldResult size : tileSizes)
      llvm::dbgs() << " " << getConstantIntValue(size).value_or(-1);
    llvm::dbgs() << ") ---\n" << kernel << "\n";
  });
  return TilingOutcome::Tiled;
}

namespace {
struct FuseKernelBodiesPass
    : public ridge::impl::FuseKernelBodiesPassBase<FuseKernelBodiesPass> {
  void runOnOperation() override {
    func::FuncOp kernel = getOperation();
    if (!kernel->hasAttr(kKernelAttr) || kernel.isExternal())
      return;
    // A config set by hand (lit tests) may fix the tile sizes.
    FailureOr<std::optional<KernelConfig>> config = getKernelConfig(kernel);
    if (failed(config))
      return signalPassFailure();
    if (failed(fuseProducers(kernel)))
      return signalPassFailure();
    FailureOr<TilingOutcome> outcome = tileAndFuseSink(kernel, *config);
    if (failed(outcome))
      return signalPassFailure();
    if (*outcome == TilingOutcome::Tiled)
      ++numTiledKernels;
    else if (*outcome == TilingOutcome::Untileable)
      ++numUntileableKernels;
    // Fold what tiling left behind (dead producers, trivial slices).
    RewritePatternSet cleanup(&getContext());
    tensor::populateFoldTensorEmptyPatterns(cleanup);
    for (Dialect *dialect : getContext().getLoadedDialects())
      dialect->getCanonicalizationPatterns(cleanup);
    for (RegisteredOperationName op : getContext().getRegisteredOperations())
      op.getCanonicalizationPatterns(cleanup, &getContext());
    if (failed(applyPatternsGreedily(kernel, std::move(cleanup))))
      return signalPassFailure();
    // A producer fused for two consumers (a softmax's row max, read by the
    // sum and by the output) is computed twice in the loop; the copies are
    // identical, and one pass over the row suffices.
    IRRewriter rewriter(&getContext());
    DominanceInfo dominance(kernel);
    eliminateCommonSubExpressions(rewriter, dominance, kernel);
  }
};
} // namespace
