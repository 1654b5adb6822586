//===- FuseKernelBodies.cpp - Fold a kernel's producers into its consumers ===//
//
// A kernel function (outlined from a fusion group, then lowered to linalg)
// must become exactly one loop nest, which the GPU mapping turns into one
// kernel launch. This pass is the first half: producer fusion inside the
// body. Elementwise generics fold into their consumers (recomputed when
// several consumers read them), reshapes are propagated out of the way, and
// a `tensor.extract` from an elementwise generic (how slices, gathers and
// concats read) is replaced by the generic's scalar computation at that
// index. What remains is the kernel's result op (its sink) and the
// reductions it reads (a contraction with its epilogue, a row reduction with
// the ops around it); ridge-select-kernel-config decides its tile sizes from
// that body and ridge-tile-kernel-bodies builds the loop.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/KernelConfig.h"
#include "ridgeline/Codegen/Passes.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
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

/// Everything in a kernel belongs together; a producer the kernel also
/// returns stays whole so that the tiled loop can hand its value out. An
/// fp8 contraction's quantizing op (its result float8) stays the producer
/// of the contraction too: the tensor-core kernel stages the operand by
/// computing that op's element, as it does a fused head split's
/// (MmaOperand::producer); folded into the contraction's body, the rounding
/// would read the operand and its scale as further inputs of the
/// contraction.
static bool isFusionAllowed(OpOperand *operand) {
  auto consumer = dyn_cast<linalg::LinalgOp>(operand->getOwner());
  if (consumer && consumer.getNumReductionLoops() != 0 &&
      operand->get().getDefiningOp<linalg::GenericOp>() &&
      isa<Float8E4M3FNType>(getElementTypeOrSelf(operand->get().getType())))
    return false;
  return !isKernelResult(operand->get());
}

/// Fuses elementwise producers with a single use into their consumers in
/// rounds in which each op takes part in at most one fusion. Fusing one
/// producer at a time into an ever larger consumer (what the greedy pattern
/// driver does along a chain) clones the growing body once per op: quadratic
/// in the kernel's size. In rounds, a chain of n ops is one op after
/// log2(n) rounds that each clone every body once. Producers with several
/// consumers (recomputed) and everything else are left to the patterns.
static void fuseSingleUseProducersInRounds(func::FuncOp kernel) {
  IRRewriter rewriter(kernel.getContext());
  bool changed = true;
  while (changed) {
    changed = false;
    SmallVector<linalg::GenericOp> generics;
    kernel.walk(
        [&](linalg::GenericOp generic) { generics.push_back(generic); });
    // Ops created or erased in this round.
    DenseSet<Operation *> touched;
    for (linalg::GenericOp consumer : generics) {
      if (touched.contains(consumer))
        continue;
      for (OpOperand &operand : consumer->getOpOperands()) {
        Operation *producer = operand.get().getDefiningOp();
        if (!producer || touched.contains(producer) || !producer->hasOneUse() ||
            !linalg::areElementwiseOpsFusable(&operand) ||
            !isFusionAllowed(&operand))
          continue;
        // The fused op goes where the consumer is (the pattern driver's
        // insertion point for the upstream pattern).
        rewriter.setInsertionPoint(consumer);
        FailureOr<linalg::ElementwiseOpFusionResult> fused =
            linalg::fuseElementwiseOps(rewriter, &operand);
        if (failed(fused))
          continue;
        for (auto [original, replacement] : fused->replacements)
          rewriter.replaceUsesWithIf(
              original, replacement, [&](OpOperand &use) {
                return use.get().getDefiningOp() != producer;
              });
        touched.insert(consumer);
        touched.insert(producer);
        touched.insert(fused->fusedOp);
        rewriter.eraseOp(consumer);
        if (producer->use_empty())
          rewriter.eraseOp(producer);
        changed = true;
        break;
      }
    }
  }
}

/// The fusion patterns with the linalg/tensor canonicalizations that keep
/// them applicable. Built once per pass instance (in `initialize`): collecting
/// every op's canonicalization patterns costs more than fusing a small
/// kernel, and a chain of 100k ops has thousands of kernels.
static FrozenRewritePatternSet buildFusionPatterns(MLIRContext *context) {
  RewritePatternSet patterns(context);
  linalg::populateLinalgNamedOpsGeneralizationPatterns(patterns);
  linalg::ControlFusionFn control = isFusionAllowed;
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
  return FrozenRewritePatternSet(std::move(patterns));
}

/// A contraction kernel may return a value of its epilogue as well as the
/// epilogue's end: LLaMA's query projection returns the head-split product
/// and its product with the RoPE cosines; its output projection returns the
/// residual sum and that sum squared (the next RMSNorm's operand). Fused
/// into its one elementwise consumer, the returned producer becomes a
/// further result of that consumer (upstream's fusion preserves a producer
/// result that has other uses): one epilogue of several results, all
/// computed from the same accumulator element, which the tensor-core kernel
/// stores side by side (MmaContraction::epilogue) and which the SIMT path
/// tiles as one sink. Left as two ops, the kernel would be a contraction
/// with an epilogue chain, which neither the matcher nor the GEMM core
/// builds.
static void mergeReturnedEpilogues(func::FuncOp kernel) {
  auto kind = kernel->getAttrOfType<StringAttr>(kKernelAttr);
  if (!kind || kind.getValue() != "contraction")
    return;
  IRRewriter rewriter(kernel.getContext());
  auto findFusable = [&]() -> OpOperand * {
    for (auto consumer : kernel.front().getOps<linalg::GenericOp>()) {
      if (consumer.getNumReductionLoops() != 0)
        continue;
      for (OpOperand *operand : consumer.getDpsInputOperands()) {
        auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
        if (!producer || producer.getNumReductionLoops() != 0 ||
            !isKernelResult(operand->get()))
          continue;
        // Read by this consumer and returned, nothing else: the fused op
        // replaces both of its uses.
        bool onlyThese =
            llvm::all_of(producer->getUsers(), [&](Operation *user) {
              return user == consumer.getOperation() ||
                     isa<func::ReturnOp>(user);
            });
        if (onlyThese && linalg::areElementwiseOpsFusable(operand))
          return operand;
      }
    }
    return nullptr;
  };
  while (OpOperand *operand = findFusable()) {
    auto consumer = cast<linalg::GenericOp>(operand->getOwner());
    Operation *producer = operand->get().getDefiningOp();
    rewriter.setInsertionPoint(consumer);
    FailureOr<linalg::ElementwiseOpFusionResult> fused =
        linalg::fuseElementwiseOps(rewriter, operand);
    if (failed(fused))
      return;
    for (auto [original, replacement] : fused->replacements)
      rewriter.replaceUsesWithIf(original, replacement, [&](OpOperand &use) {
        return use.getOwner() != consumer.getOperation() &&
               use.getOwner() != producer;
      });
    rewriter.eraseOp(consumer);
    if (producer->use_empty())
      rewriter.eraseOp(producer);
    LLVM_DEBUG(llvm::dbgs() << kernel.getName()
                            << ": a returned epilogue value merged into its "
                               "consumer\n");
  }
}

/// Fuses producers into consumers; reshapes that propagation could not move
/// out of the way are turned into reads and fused on a second round.
static LogicalResult fuseProducers(func::FuncOp kernel,
                                   const FrozenRewritePatternSet &patterns) {
  fuseSingleUseProducersInRounds(kernel);
  if (failed(applyPatternsGreedily(kernel, patterns)))
    return failure();
  convertInternalReshapes(kernel);
  if (failed(applyPatternsGreedily(kernel, patterns)))
    return failure();
  mergeReturnedEpilogues(kernel);
  return success();
}

namespace {
struct FuseKernelBodiesPass
    : public ridge::impl::FuseKernelBodiesPassBase<FuseKernelBodiesPass> {
  LogicalResult initialize(MLIRContext *context) override {
    patterns = buildFusionPatterns(context);
    return success();
  }

  void runOnOperation() override {
    func::FuncOp kernel = getOperation();
    if (!kernel->hasAttr(kKernelAttr) || kernel.isExternal())
      return;
    if (failed(fuseProducers(kernel, patterns)))
      return signalPassFailure();
    ++numFusedKernels;
  }

  FrozenRewritePatternSet patterns;
};
} // namespace
