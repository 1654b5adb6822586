//===- AssignChannelsLast.cpp - Tensor-core convolutions channels-last ----===//
//
// Mechanism only: the layout policy (LayoutPolicy.h) picks the
// convolutions; this pass rewrites each into ConvOp's channels_last form,
//
//   %x' = ridge.transpose %x, [0, 2, 3, 1]     // [N, H, W, C]
//   %y' = ridge.conv %x', %w' {channels_last}  // w' = [M, kh, kw, C]
//   %y  = ridge.transpose %y', [0, 3, 1, 2]    // [N, M, OH, OW]
//
// the weights permuted at compile time (and, where the policy pads the input
// channels to a whole 16-byte piece, %x' padded with zero channels by a
// ridge.pad and the weights with zeros), then moves the transposes it made
// forward through elementwise ops and poolings and cancels the pairs that
// meet:
//
//   relu(T(a))               -> T(relu(a))
//   add(T(a), T(b))          -> T(add(a, b))
//   mul(T(a), s[1, C, 1, 1]) -> T(mul(a, s'[1, 1, 1, C]))   (s' a reshape)
//   pool(T(a))               -> T(pool{channels_last}(a))
//   pad(T(a))                -> T(pad'(a))                (pads permuted)
//   transpose(T(a), p^-1)    -> a
//
// (T(x) = transpose(x, p), p back to channels-second), so that in a ResNet
// block the activations stay channels-last from one convolution to the next,
// and a transpose remains only where the chain meets an op that reads the
// channels second (a reshape, a matmul). A transpose that moves only dimensions
// of size 1 (a global pooling's [N, 1, 1, C]; a per-channel operand) is a
// reshape, a view. Its transposes are marked (kLayoutTransposeAttr): the
// model's own are left where the exporter put them. A convolution the policy
// leaves off tensor cores then follows its input when the moves made that
// channels-last (a ResNet's downsampling 1x1 reads the block's channels-last
// sum), and the moves run again.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Analysis/LayoutPolicy.h"
#include "ridgeline/Dialect/Ridge/IR/ConstantElements.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h"

#include "ConstantWeights.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-assign-channels-last"

namespace mlir::ridge {
#define GEN_PASS_DEF_ASSIGNCHANNELSLASTPASS
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

/// Marks the transposes this pass makes: only they are moved and cancelled.
static constexpr llvm::StringLiteral kLayoutTransposeAttr =
    "ridge.layout_transpose";

/// [0, 2, ..., r - 1, 1]: channels second to channels last.
static SmallVector<int64_t> getToChannelsLast(int64_t rank) {
  SmallVector<int64_t> perm{0};
  for (int64_t i = 2; i < rank; ++i)
    perm.push_back(i);
  perm.push_back(1);
  return perm;
}

/// The permutation that undoes `perm`.
static SmallVector<int64_t> invert(ArrayRef<int64_t> perm) {
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  return inverse;
}

/// `type` ([N, C, spatial...]) channels-last: [N, spatial..., C].
static RankedTensorType getChannelsLastType(RankedTensorType type) {
  return RankedTensorType::get(
      getPermutedShape(type.getShape(), getToChannelsLast(type.getRank())),
      type.getElementType());
}

static TransposeOp createLayoutTranspose(OpBuilder &b, Location loc,
                                         Value input, ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(input.getType());
  auto result = RankedTensorType::get(getPermutedShape(type.getShape(), perm),
                                      type.getElementType());
  auto transpose =
      TransposeOp::create(b, loc, result, input, b.getDenseI64ArrayAttr(perm));
  transpose->setAttr(kLayoutTransposeAttr, b.getUnitAttr());
  return transpose;
}

/// [0, r - 1, 1, ..., r - 2]: channels last back to channels second.
static SmallVector<int64_t> getToChannelsSecond(int64_t rank) {
  return invert(getToChannelsLast(rank));
}

/// The pass's transpose by `perm` that `value` is, or null.
static TransposeOp getLayoutTranspose(Value value, ArrayRef<int64_t> perm) {
  auto transpose = value.getDefiningOp<TransposeOp>();
  if (!transpose || !transpose->hasAttr(kLayoutTransposeAttr) ||
      transpose.getPerm() != perm)
    return nullptr;
  return transpose;
}

/// Whether transposing `shape` by `perm` moves only dimensions of size 1,
/// so that the transpose is a reshape.
static bool movesOnlyUnitDims(ArrayRef<int64_t> shape, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> moved;
  for (int64_t p : perm)
    if (shape[p] != 1)
      moved.push_back(p);
  return llvm::is_sorted(moved);
}

/// The location of an op (a Transpose, a Pad) made for the convolution at
/// `convLoc`: an `opType` named `<node>/<suffix>` (what the report shows)
/// that keeps the convolution's node (what a kernel lists).
static Location getLayoutLoc(Location convLoc, StringRef suffix,
                             StringRef opType = "Transpose") {
  OnnxNodeRef node = getOnnxNode(convLoc);
  std::string name = (node.name.empty() ? StringRef("conv") : node.name).str() +
                     "/" + suffix.str();
  return getMatchedNodesLoc(convLoc.getContext(), name, opType, {convLoc});
}

/// `value` with zeros after its dimension `dim` up to `size`.
static Value padDim(OpBuilder &b, Location loc, Value value, int64_t dim,
                    int64_t size) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> pads(2 * rank, 0);
  pads[rank + dim] = size - type.getDimSize(dim);
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = size;
  return PadOp::create(b, loc, type.clone(shape), value, /*value=*/Value(),
                       b.getDenseI64ArrayAttr(pads),
                       b.getStringAttr("constant"))
      .getResult();
}

/// Rewrites `conv` channels-last (the file comment's form), its input
/// channels padded with zeros to `paddedChannels` when that is not 0.
static void rewriteChannelsLast(RewriterBase &rewriter, ConvOp conv,
                                int64_t paddedChannels) {
  Location loc = conv.getLoc();
  Location toLastLoc = getLayoutLoc(loc, "to_channels_last");
  rewriter.setInsertionPoint(conv);
  int64_t rank = cast<RankedTensorType>(conv.getType()).getRank();
  SmallVector<int64_t> toLast = getToChannelsLast(rank);
  // The zero channels are padded channels-second: the transpose after the
  // pad is its kernel's epilogue (a transpose cannot be a pad's prologue).
  // Where the input is the pass's transpose back from channels-last, the
  // pad moves before it (SinkTransposeThroughPad) and the transposes cancel.
  Location padLoc = getLayoutLoc(loc, "pad_channels", "Pad");
  Value input = conv.getInput();
  if (paddedChannels)
    input = padDim(rewriter, padLoc, input, 1, paddedChannels);
  input = createLayoutTranspose(rewriter, toLastLoc, input, toLast);
  // A depthwise weight [C, 1, K...] becomes [1, K..., C] (ConvOp's
  // channels-last depthwise form), the others [M, K..., C].
  SmallVector<int64_t> weightPerm = toLast;
  if (conv.isDepthwise()) {
    weightPerm = llvm::to_vector(llvm::seq<int64_t>(1, rank));
    weightPerm.push_back(0);
  }
  Value weight = permuteConstantWeight(rewriter, loc, conv.getWeight(),
                                       weightPerm, paddedChannels);
  if (!weight) {
    weight = createLayoutTranspose(rewriter, toLastLoc, conv.getWeight(),
                                   weightPerm);
    if (paddedChannels)
      weight = padDim(rewriter, padLoc, weight, rank - 1, paddedChannels);
  }
  auto resultType = cast<RankedTensorType>(conv.getType());
  RankedTensorType lastType = getChannelsLastType(resultType);
  SmallVector<Value> operands{input, weight};
  if (Value bias = conv.getBias())
    operands.push_back(bias);
  auto last = ConvOp::create(rewriter, loc, TypeRange{lastType}, operands,
                             conv->getAttrs());
  last.setChannelsLast(true);
  rewriter.replaceOp(
      conv,
      createLayoutTranspose(rewriter, getLayoutLoc(loc, "to_channels_second"),
                            last, invert(toLast)));
}

/// Rewrites the patchify `conv` ([N, C, H, W] by [M, C, kh, kw], kernel =
/// stride) as a GEMM over its patches:
///
///   %p = reshape(transpose(reshape(%x, [N, C, OH, kh, OW, kw]),
///                          [0, 2, 4, 1, 3, 5]), [N, OH x OW, C x kh x kw])
///   %y = ridge.matmul %p, %w'          // w' = [C x kh x kw, M]
///   %r = reshape(transpose(%y + %b, [0, 2, 1]), [N, M, OH, OW])
///
/// the weights permuted at compile time (`<weight>.kn`). A flatten +
/// transpose of the result (a ViT's patch embedding) cancels the last
/// transpose.
static void rewritePatchMatmul(RewriterBase &rewriter, ConvOp conv) {
  Location loc = conv.getLoc();
  auto inputType = cast<RankedTensorType>(conv.getInput().getType());
  auto weightType = cast<RankedTensorType>(conv.getWeight().getType());
  auto resultType = cast<RankedTensorType>(conv.getType());
  Type element = inputType.getElementType();
  int64_t n = inputType.getDimSize(0), c = inputType.getDimSize(1);
  int64_t m = weightType.getDimSize(0), kh = weightType.getDimSize(2),
          kw = weightType.getDimSize(3);
  int64_t oh = resultType.getDimSize(2), ow = resultType.getDimSize(3);
  int64_t pixels = oh * ow, k = c * kh * kw;
  rewriter.setInsertionPoint(conv);
  Location patchLoc = getLayoutLoc(loc, "patches");
  Value split = ReshapeOp::create(
      rewriter, patchLoc,
      RankedTensorType::get({n, c, oh, kh, ow, kw}, element), conv.getInput());
  Value gathered =
      createLayoutTranspose(rewriter, patchLoc, split, {0, 2, 4, 1, 3, 5});
  Value patches = ReshapeOp::create(
      rewriter, patchLoc, RankedTensorType::get({n, pixels, k}, element),
      gathered);
  // A constant weight is permuted into a [k, m] constant itself, so that
  // the precision policy stores it in the multiply type like any MatMul's.
  SmallVector<int64_t> toKn{1, 2, 3, 0};
  auto knType = RankedTensorType::get({k, m}, element);
  Value weight =
      permuteConstantWeight(rewriter, loc, conv.getWeight(), toKn,
                            /*lastDimSize=*/0, ".kn", knType.getShape());
  if (!weight)
    weight = ReshapeOp::create(
        rewriter, loc, knType,
        createLayoutTranspose(rewriter, loc, conv.getWeight(), toKn));
  auto productType = RankedTensorType::get({n, pixels, m}, element);
  auto product = MatMulOp::create(rewriter, loc, productType, patches, weight);
  if (Attribute precision = conv->getAttr(kPrecisionAttr))
    product->setAttr(kPrecisionAttr, precision);
  Value sum = product.getResult();
  if (Value bias = conv.getBias())
    sum = AddOp::create(rewriter, loc, productType, sum, bias).getResult();
  Location outLoc = getLayoutLoc(loc, "to_channels_second");
  Value channelsSecond =
      createLayoutTranspose(rewriter, outLoc, sum, {0, 2, 1});
  rewriter.replaceOpWithNewOp<ReshapeOp>(conv, resultType, channelsSecond);
}

namespace {
/// transpose(transpose(a, p), q) of which one is the pass's: a when q undoes
/// p, else one transpose.
struct CancelTransposes : OpRewritePattern<TransposeOp> {
  CancelTransposes(MLIRContext *ctx, llvm::Statistic &cancelled)
      : OpRewritePattern(ctx, /*benefit=*/2), cancelled(cancelled) {}
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<TransposeOp>();
    if (!inner || (!op->hasAttr(kLayoutTransposeAttr) &&
                   !inner->hasAttr(kLayoutTransposeAttr)))
      return failure();
    ArrayRef<int64_t> p = inner.getPerm(), q = op.getPerm();
    SmallVector<int64_t> composed;
    for (int64_t j : q)
      composed.push_back(p[j]);
    if (llvm::equal(composed, llvm::seq<int64_t>(0, composed.size()))) {
      rewriter.replaceOp(op, inner.getInput());
      ++cancelled;
      return success();
    }
    TransposeOp merged = createLayoutTranspose(rewriter, op.getLoc(),
                                               inner.getInput(), composed);
    rewriter.replaceOp(op, merged);
    return success();
  }
  llvm::Statistic &cancelled;
};

/// The pass's transpose that moves only dimensions of size 1 (a global
/// pooling's channels-last [N, 1, 1, C] back to [N, C, 1, 1]) is a reshape.
/// Below the cancellation: a pair that meets cancels first.
struct LayoutTransposeToReshape : OpRewritePattern<TransposeOp> {
  LayoutTransposeToReshape(MLIRContext *ctx)
      : OpRewritePattern(ctx, /*benefit=*/1) {}
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getInput().getType());
    if (!op->hasAttr(kLayoutTransposeAttr) || !type || !type.hasStaticShape() ||
        !movesOnlyUnitDims(type.getShape(), op.getPerm()))
      return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), op.getInput());
    return success();
  }
};

/// A pooling of the pass's transpose back to channels-second: the pooling
/// channels-last, then the transpose (by then often of a global pooling's
/// [N, 1, 1, C], a reshape). The indices form stays channels-second.
struct SinkTransposeThroughPool : OpRewritePattern<PoolOp> {
  SinkTransposeThroughPool(MLIRContext *ctx, llvm::Statistic &sunk)
      : OpRewritePattern(ctx), sunk(sunk) {}
  LogicalResult matchAndRewrite(PoolOp op,
                                PatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    int64_t rank = resultType.getRank();
    SmallVector<int64_t> perm = getToChannelsSecond(rank);
    TransposeOp transpose = getLayoutTranspose(op.getInput(), perm);
    if (op.getChannelsLast() || op.getWithIndices() || !transpose)
      return failure();
    RankedTensorType lastType = getChannelsLastType(resultType);
    auto last =
        PoolOp::create(rewriter, op.getLoc(), TypeRange{lastType},
                       ValueRange{transpose.getInput()}, op->getAttrs());
    last.setChannelsLast(true);
    rewriter.replaceOp(op, createLayoutTranspose(rewriter, transpose.getLoc(),
                                                 last.getResult(), perm));
    ++sunk;
    return success();
  }
  llvm::Statistic &sunk;
};

/// A pad of the pass's transpose back to channels-second (a padded
/// convolution's input that the moves made channels-last): the pad on the
/// channels-last tensor, its pads permuted, then the transpose, which the
/// transpose to channels-last after the pad then cancels.
struct SinkTransposeThroughPad : OpRewritePattern<PadOp> {
  SinkTransposeThroughPad(MLIRContext *ctx, llvm::Statistic &sunk)
      : OpRewritePattern(ctx), sunk(sunk) {}
  LogicalResult matchAndRewrite(PadOp op,
                                PatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    int64_t rank = resultType.getRank();
    SmallVector<int64_t> perm = getToChannelsSecond(rank);
    TransposeOp transpose = getLayoutTranspose(op.getInput(), perm);
    if (!transpose)
      return failure();
    // Result dim i of the transpose is its input's dim perm[i]: the pads of
    // dim i move to perm[i].
    ArrayRef<int64_t> pads = op.getPads();
    SmallVector<int64_t> movedPads(2 * rank);
    for (int64_t i = 0; i < rank; ++i) {
      movedPads[perm[i]] = pads[i];
      movedPads[rank + perm[i]] = pads[rank + i];
    }
    RankedTensorType lastType = getChannelsLastType(resultType);
    auto last = PadOp::create(
        rewriter, op.getLoc(), lastType, transpose.getInput(), op.getValue(),
        rewriter.getDenseI64ArrayAttr(movedPads), op.getModeAttr());
    rewriter.replaceOp(op, createLayoutTranspose(rewriter, transpose.getLoc(),
                                                 last.getResult(), perm));
    ++sunk;
    return success();
  }
  llvm::Statistic &sunk;
};

/// An elementwise op of one result whose operands are each the pass's
/// transpose back to channels-second (by p), a value it transposes elsewhere
/// to channels-last (by p^-1: read channels-last there too), a tensor of
/// ones in every dimension (a broadcast scalar), or a broadcast operand
/// whose transpose is a reshape (a per-channel [1, C, 1, 1] scale): the op
/// on the channels-last operands, then one transpose by p.
struct SinkTransposeThroughElementwise
    : OpTraitRewritePattern<FusionTrait::ElementwiseFusion> {
  SinkTransposeThroughElementwise(MLIRContext *ctx, llvm::Statistic &sunk)
      : OpTraitRewritePattern(ctx), sunk(sunk) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    // (Trilu reads the positions of its elements, not just their values.)
    if (op->getNumResults() != 1 || op->getNumRegions() != 0 ||
        isa<TriluOp>(op))
      return failure();
    auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!resultType || !resultType.hasStaticShape())
      return failure();
    // Only the transposes back to channels-second move, forward: the ones
    // to channels-last stay before the op that reads them. (Moving both
    // would move an op's result back and forth between the two forms.)
    SmallVector<int64_t> inverse = getToChannelsLast(resultType.getRank());
    SmallVector<int64_t> perm = getToChannelsSecond(resultType.getRank());
    auto sunk = llvm::find_if(op->getOperands(), [&](Value operand) {
      return getLayoutTranspose(operand, perm) != nullptr;
    });
    if (sunk == op->operand_end())
      return failure();
    Location sunkLoc = (*sunk).getDefiningOp()->getLoc();
    SmallVector<Value> operands;
    SmallVector<size_t> viewed;
    for (Value operand : op->getOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      if (!type)
        return failure();
      if (llvm::all_of(type.getShape(), [](int64_t d) { return d == 1; })) {
        operands.push_back(operand);
        continue;
      }
      if (type.getShape() != resultType.getShape()) {
        // A broadcast operand of the same rank whose channels-last form is
        // a view of it.
        if (type.getRank() != resultType.getRank() || !type.hasStaticShape() ||
            !llvm::all_of(llvm::zip(type.getShape(), resultType.getShape()),
                          [](auto dims) {
                            auto [d, r] = dims;
                            return d == 1 || d == r;
                          }) ||
            !movesOnlyUnitDims(type.getShape(), inverse))
          return failure();
        // (Reshaped below, once every operand has matched.)
        viewed.push_back(operands.size());
        operands.push_back(operand);
        continue;
      }
      if (TransposeOp transpose = getLayoutTranspose(operand, perm)) {
        operands.push_back(transpose.getInput());
        continue;
      }
      // Read channels-last elsewhere: that transpose serves here too.
      TransposeOp elsewhere;
      for (Operation *user : operand.getUsers())
        if (auto transpose = dyn_cast<TransposeOp>(user);
            transpose && getLayoutTranspose(transpose, inverse) &&
            transpose->getBlock() == op->getBlock()) {
          elsewhere = transpose;
          break;
        }
      if (!elsewhere)
        return failure();
      operands.push_back(elsewhere);
    }
    // A transpose read from elsewhere that comes later moves up to the op
    // (its operand, the op's, is defined before the op).
    for (Value operand : operands)
      if (auto transpose = operand.getDefiningOp<TransposeOp>();
          transpose && transpose->getBlock() == op->getBlock() &&
          op->isBeforeInBlock(transpose))
        rewriter.moveOpBefore(transpose, op);
    rewriter.setInsertionPoint(op);
    for (size_t i : viewed) {
      Value &operand = operands[i];
      auto type = cast<RankedTensorType>(operand.getType());
      operand = ReshapeOp::create(
          rewriter, operand.getLoc(),
          RankedTensorType::get(getPermutedShape(type.getShape(), inverse),
                                type.getElementType()),
          operand);
    }
    Operation *moved = rewriter.clone(*op);
    moved->setOperands(operands);
    moved->getResult(0).setType(
        RankedTensorType::get(getPermutedShape(resultType.getShape(), inverse),
                              resultType.getElementType()));
    rewriter.setInsertionPointAfter(moved);
    rewriter.replaceOp(op, createLayoutTranspose(rewriter, sunkLoc,
                                                 moved->getResult(0), perm));
    ++sunk;
    return success();
  }
  llvm::Statistic &sunk;
};

struct AssignChannelsLastPass
    : public ridge::impl::AssignChannelsLastPassBase<AssignChannelsLastPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    FailureOr<TargetSpec> target = getTargetForPass(func);
    if (failed(target))
      return signalPassFailure();

    // The tensor-core convolutions first; then, until none is left, those
    // that follow a channels-last input (a transpose back to channels-second
    // once the first are rewritten and their transposes moved).
    FrozenRewritePatternSet patterns = [&] {
      RewritePatternSet set(&getContext());
      set.add<CancelTransposes>(&getContext(), numCancelled);
      set.add<SinkTransposeThroughElementwise, SinkTransposeThroughPool,
              SinkTransposeThroughPad>(&getContext(), numSunk);
      set.add<LayoutTransposeToReshape>(&getContext());
      return FrozenRewritePatternSet(std::move(set));
    }();
    IRRewriter rewriter(&getContext());
    while (true) {
      SmallVector<std::pair<ConvOp, int64_t>> convs;
      SmallVector<ConvOp> patchConvs;
      SmallVector<std::pair<ConvOp, std::string>> left;
      func.walk([&](ConvOp conv) {
        int64_t rank = cast<RankedTensorType>(conv.getType()).getRank();
        bool inputChannelsLast =
            getLayoutTranspose(conv.getInput(), getToChannelsSecond(rank)) !=
            nullptr;
        ConvLayoutDecision decision =
            decideConvolutionLayout(conv, *target, inputChannelsLast);
        LLVM_DEBUG(llvm::dbgs() << "conv at " << conv.getLoc() << ": "
                                << decision.explanation << "\n");
        if (decision.channelsLast)
          convs.emplace_back(conv, decision.paddedChannels);
        else if (decision.patchMatmul)
          patchConvs.push_back(conv);
        else if (decision.reason != ConvLayoutReason::AlreadyChannelsLast)
          left.emplace_back(conv, std::move(decision.explanation));
      });
      if (convs.empty() && patchConvs.empty()) {
        if (remarks)
          for (auto &[conv, explanation] : left)
            conv.emitRemark("convolution left channels-second: ")
                << explanation;
        return;
      }
      for (ConvOp conv : patchConvs) {
        rewritePatchMatmul(rewriter, conv);
        ++numPatchMatmuls;
      }
      for (auto [conv, paddedChannels] : convs) {
        rewriteChannelsLast(rewriter, conv, paddedChannels);
        ++numChannelsLast;
        if (paddedChannels)
          ++numPadded;
      }
      if (failed(applyPatternsGreedily(func, patterns)))
        return signalPassFailure();
    }
  }
};
} // namespace
