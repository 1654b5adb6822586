//===- NNToLinalg.cpp - spatial neural-network ops -------===//
//
// Lowering of the ridge spatial neural-network ops to linalg on tensors.
//
// Convolutions and pooling are single linalg.generic ops over the output and
// the window (padding materialized with tensor.insert_slice into a filled
// tensor), so that groups, dilations and any number of spatial dims share
// one code path. Resampling (Resize, GridSample, RoiAlign) is in
// ResampleToLinalg.cpp, quantization in QuantizeToLinalg.cpp.
//
//===----------------------------------------------------------------------===//

#include "GraphToLinalgCommon.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::linalg_lowering;

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// A linalg.generic over (result dims..., window dims...) whose window dims
/// reduce into a result filled with `init`. The window dims' extents come from
/// a shape-only tensor.empty of `windowShape`; `body` reads what it needs with
/// linalg.index and tensor.extract (gather form: no scatter, no conflicts).
Value buildWindowReduction(
    OpBuilder &b, Location loc, RankedTensorType resultType,
    ArrayRef<int64_t> windowShape, TypedAttr init,
    function_ref<void(OpBuilder &, Location, ValueRange)> body) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = resultType.getRank();
  int64_t numLoops = rank + windowShape.size();
  Value window =
      tensor::EmptyOp::create(b, loc, windowShape, resultType.getElementType());
  SmallVector<AffineExpr> windowExprs, outExprs;
  for (int64_t i = 0; i < numLoops; ++i)
    (i < rank ? outExprs : windowExprs).push_back(getAffineDimExpr(i, ctx));
  SmallVector<AffineMap> maps{AffineMap::get(numLoops, 0, windowExprs, ctx),
                              AffineMap::get(numLoops, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.append(windowShape.size(), utils::IteratorType::reduction);
  Value filled = createFilled(b, loc, resultType, init);
  return linalg::GenericOp::create(b, loc, resultType, window, filled, maps,
                                   iterators, body)
      .getResult(0);
}

SmallVector<OpFoldResult> indexAttrs(OpBuilder &b, ArrayRef<int64_t> values) {
  return llvm::map_to_vector(
      values, [&](int64_t v) -> OpFoldResult { return b.getIndexAttr(v); });
}

/// A tensor of `type` filled with `fill`, with `source` placed at `offsets`
/// every `strides` elements: zero/-inf padding and stride dilation. Built as
/// a gather (each result element extracts the source element it maps to, if
/// any) because inserting into a filled tensor bufferizes to a strided
/// memref.copy, which the CPU pipeline cannot lower without a runtime call.
Value insertIntoFilled(OpBuilder &b, Location loc, Value source,
                       RankedTensorType type, TypedAttr fill,
                       ArrayRef<int64_t> offsets, ArrayRef<int64_t> strides) {
  auto sourceType = getTensorType(source);
  int64_t rank = type.getRank();
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{}, createEmpty(b, loc, type),
             b.getMultiDimIdentityMap(rank),
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nloc, ValueRange) {
               auto cst = [&](int64_t v) -> Value {
                 return arith::ConstantIndexOp::create(nb, nloc, v);
               };
               Value inside;
               SmallVector<Value> indices;
               for (int64_t d = 0; d < rank; ++d) {
                 Value i = linalg::IndexOp::create(nb, nloc, d);
                 int64_t size = sourceType.getDimSize(d);
                 if (offsets[d] == 0 && strides[d] == 1 &&
                     size == type.getDimSize(d)) {
                   indices.push_back(i);
                   continue;
                 }
                 Value rel =
                     arith::SubIOp::create(nb, nloc, i, cst(offsets[d]));
                 Value q = rel, ok;
                 if (strides[d] != 1) {
                   q = arith::FloorDivSIOp::create(nb, nloc, rel,
                                                   cst(strides[d]));
                   Value back =
                       arith::MulIOp::create(nb, nloc, q, cst(strides[d]));
                   ok = arith::CmpIOp::create(
                       nb, nloc, arith::CmpIPredicate::eq, back, rel);
                 }
                 Value lo = arith::CmpIOp::create(
                     nb, nloc, arith::CmpIPredicate::sge, q, cst(0));
                 Value hi = arith::CmpIOp::create(
                     nb, nloc, arith::CmpIPredicate::slt, q, cst(size));
                 Value inRange = arith::AndIOp::create(nb, nloc, lo, hi);
                 ok = ok ? arith::AndIOp::create(nb, nloc, ok, inRange)
                         : inRange;
                 inside =
                     inside ? arith::AndIOp::create(nb, nloc, inside, ok) : ok;
                 Value clamped = arith::MaxSIOp::create(
                     nb, nloc,
                     arith::MinSIOp::create(nb, nloc, q, cst(size - 1)),
                     cst(0));
                 indices.push_back(clamped);
               }
               Value v = tensor::ExtractOp::create(nb, nloc, source, indices);
               if (inside)
                 v = arith::SelectOp::create(
                     nb, nloc, inside, v,
                     arith::ConstantOp::create(nb, nloc, fill));
               linalg::YieldOp::create(nb, nloc, v);
             })
      .getResult(0);
}

/// Reassociation that keeps dims apart except `[first, first + 1]`.
SmallVector<ReassociationIndices> mergeTwo(int64_t rank, int64_t first) {
  SmallVector<ReassociationIndices> result;
  for (int64_t i = 0; i < rank; ++i) {
    if (i == first + 1)
      continue;
    if (i == first)
      result.push_back({i, i + 1});
    else
      result.push_back({i});
  }
  return result;
}

Value addValues(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  if (isa<FloatType>(lhs.getType()))
    return arith::AddFOp::create(b, loc, lhs, rhs);
  return arith::AddIOp::create(b, loc, lhs, rhs);
}

Value mulValues(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  if (isa<FloatType>(lhs.getType()))
    return arith::MulFOp::create(b, loc, lhs, rhs);
  return arith::MulIOp::create(b, loc, lhs, rhs);
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

/// A convolution's sums: sum over the reductions of `iterators` of input x
/// weight, read through `maps`, into a zero-filled `accType` (narrow floats
/// accumulate in f32; a non-null `roundTo`, the op's ridge.precision, rounds
/// each operand right before the multiply).
static Value buildConvSum(OpBuilder &b, Location loc, Value input, Value weight,
                          ArrayRef<AffineMap> maps,
                          ArrayRef<utils::IteratorType> iterators,
                          RankedTensorType accType, Type roundTo) {
  Type acc = accType.getElementType();
  Value init = createFilled(b, loc, accType, b.getZeroAttr(acc));
  return linalg::GenericOp::create(
             b, loc, accType, ValueRange{input, weight}, init, maps, iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value x = args[0], w = args[1];
               if (isa<FloatType>(acc)) {
                 x = extendTo(nb, nloc, roundThrough(nb, nloc, x, roundTo),
                              acc);
                 w = extendTo(nb, nloc, roundThrough(nb, nloc, w, roundTo),
                              acc);
               }
               linalg::YieldOp::create(
                   nb, nloc,
                   addValues(nb, nloc, args[2], mulValues(nb, nloc, x, w)));
             })
      .getResult(0);
}

/// A convolution's epilogue over its sums `sum` (in the accumulator type
/// `acc`): the bias, broadcast along dimension `channelDim` of the result,
/// then the narrowing to `resultType`'s element type.
static Value buildConvEpilogue(OpBuilder &b, Location loc, Value sum,
                               Value bias, int64_t channelDim,
                               RankedTensorType resultType, Type acc) {
  Type element = resultType.getElementType();
  if (!bias && acc == element)
    return sum;
  int64_t rank = resultType.getRank();
  SmallVector<Value> inputs{sum};
  SmallVector<AffineMap> epilogueMaps{b.getMultiDimIdentityMap(rank)};
  if (bias) {
    inputs.push_back(bias);
    epilogueMaps.push_back(
        AffineMap::get(rank, 0, getAffineDimExpr(channelDim, b.getContext())));
  }
  epilogueMaps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> parallel(rank,
                                            utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, resultType, inputs, createEmpty(b, loc, resultType),
             epilogueMaps, parallel,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value v = args[0];
               if (bias) {
                 Value bv = args[1];
                 if (isa<FloatType>(acc))
                   bv = extendTo(nb, nloc, bv, acc);
                 v = addValues(nb, nloc, v, bv);
               }
               if (isa<FloatType>(acc))
                 v = truncateTo(nb, nloc, v, element);
               linalg::YieldOp::create(nb, nloc, v);
             })
      .getResult(0);
}

/// The indexing of a channels-second convolution's window sums.
struct ConvWindow {
  SmallVector<AffineMap> maps;
  SmallVector<utils::IteratorType> iterators;
};

/// The maps (input, weight, output) and iterators of window sums whose loops
/// are the output's (`firstOutputLoop` leading ones, then one a spatial
/// dim), the input channel, then the window: `inExprs`, `wExprs` and
/// `outExprs` index the channel dims, and each spatial dim i appends
/// o * stride + k * dilation, k and o.
static ConvWindow
buildConvWindow(MLIRContext *ctx, SmallVector<AffineExpr> inExprs,
                SmallVector<AffineExpr> wExprs,
                SmallVector<AffineExpr> outExprs, int64_t firstOutputLoop,
                ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations) {
  int64_t spatial = strides.size();
  int64_t numParallel = firstOutputLoop + spatial;
  int64_t numLoops = numParallel + 1 + spatial;
  for (int64_t i = 0; i < spatial; ++i) {
    AffineExpr o = getAffineDimExpr(firstOutputLoop + i, ctx);
    AffineExpr k = getAffineDimExpr(numParallel + 1 + i, ctx);
    inExprs.push_back(o * strides[i] + k * dilations[i]);
    wExprs.push_back(k);
    outExprs.push_back(o);
  }
  ConvWindow window;
  window.maps = {AffineMap::get(numLoops, 0, inExprs, ctx),
                 AffineMap::get(numLoops, 0, wExprs, ctx),
                 AffineMap::get(numLoops, 0, outExprs, ctx)};
  window.iterators.assign(numParallel, utils::IteratorType::parallel);
  window.iterators.append(1 + spatial, utils::IteratorType::reduction);
  return window;
}

/// out[n, g*OCg + oc, o...] = bias + sum_{ic, k} input[n, g*ICg + ic,
/// o*stride + k*dilation] * weight[g*OCg + oc, ic, k] over an already padded
/// `input` [N, C, P...] and `weight` [M, ICg, K...]. The channel dims are
/// viewed as (group, per-group) so that every map stays a projection plus
/// window sums; narrow floats accumulate in f32. A non-null `roundTo` (the
/// op's ridge.precision) rounds each f32 operand to it in the body, right
/// before the multiply.
///
/// With one group, or one output channel a group (a depthwise convolution),
/// one of the two is a unit dimension: the sums are then built over the
/// result's own dims (loops n, m, o..., ic, k...; input channel ic, or
/// m*ICg + ic), with no reshape between them and the epilogue. A reshape
/// there would stop ridge-tile-kernel-bodies from fusing the convolution
/// into its epilogue's loop (bias, BatchNorm, activation: one kernel), and
/// each op would run as a kernel of its own.
Value buildGroupedConv(OpBuilder &b, Location loc, Value input, Value weight,
                       Value bias, ArrayRef<int64_t> strides,
                       ArrayRef<int64_t> dilations, int64_t group,
                       RankedTensorType resultType, Type roundTo = {}) {
  MLIRContext *ctx = b.getContext();
  auto inType = getTensorType(input), wType = getTensorType(weight);
  int64_t rank = inType.getRank(), spatial = rank - 2;
  int64_t icg = wType.getDimSize(1), ocg = wType.getDimSize(0) / group;
  Type element = resultType.getElementType();
  Type acc = getAccumulatorType(element);
  auto dim = [&](int64_t i) { return getAffineDimExpr(i, ctx); };

  if (group == 1 || ocg == 1) {
    // Loops: n, m, o..., ic, k...
    AffineExpr n = dim(0), m = dim(1), ic = dim(2 + spatial);
    ConvWindow window =
        buildConvWindow(ctx, {n, group == 1 ? ic : m * icg + ic}, {m, ic},
                        {n, m}, /*firstOutputLoop=*/2, strides, dilations);
    Value sum = buildConvSum(
        b, loc, input, weight, window.maps, window.iterators,
        RankedTensorType::get(resultType.getShape(), acc), roundTo);
    return buildConvEpilogue(b, loc, sum, bias, /*channelDim=*/1, resultType,
                             acc);
  }

  SmallVector<int64_t> inShape{inType.getDimSize(0), group, icg};
  llvm::append_range(inShape, inType.getShape().drop_front(2));
  Value inView = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(inShape, inType.getElementType()), input,
      mergeTwo(rank + 1, 1));
  SmallVector<int64_t> wShape{group, ocg, icg};
  llvm::append_range(wShape, wType.getShape().drop_front(2));
  Value wView = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(wShape, wType.getElementType()), weight,
      mergeTwo(rank + 1, 0));
  SmallVector<int64_t> outShape{resultType.getDimSize(0), group, ocg};
  llvm::append_range(outShape, resultType.getShape().drop_front(2));
  auto accType = RankedTensorType::get(outShape, acc);

  // Loops: n, g, oc, o..., ic, k...
  AffineExpr n = dim(0), g = dim(1), oc = dim(2), ic = dim(3 + spatial);
  ConvWindow window =
      buildConvWindow(ctx, {n, g, ic}, {g, oc, ic}, {n, g, oc},
                      /*firstOutputLoop=*/3, strides, dilations);
  Value sum = buildConvSum(b, loc, inView, wView, window.maps, window.iterators,
                           accType, roundTo);
  Value collapsed = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(resultType.getShape(), acc), sum,
      mergeTwo(rank + 1, 1));
  return buildConvEpilogue(b, loc, collapsed, bias, /*channelDim=*/1,
                           resultType, acc);
}

/// The channels_last form of buildGroupedConv (group 1): out[n, o..., m] =
/// bias[m] + sum_{k..., c} input[n, o*stride + k*dilation, c] * weight[m,
/// k..., c] over an already padded `input` [N, P..., C] and `weight` [M,
/// K..., C]. The loops are (n, o..., m, k..., c): the channels are the
/// innermost reduction, so that an implicit GEMM's k runs along the
/// contiguous channels of each window position. A `depthwise` convolution
/// (weight [1, K..., C]) has no c loop: channel m reads input channel m and
/// weight[0, k..., m], and m, the innermost parallel loop, runs along the
/// contiguous channels of both.
Value buildChannelsLastConv(OpBuilder &b, Location loc, Value input,
                            Value weight, Value bias, ArrayRef<int64_t> strides,
                            ArrayRef<int64_t> dilations,
                            RankedTensorType resultType, bool depthwise,
                            Type roundTo = {}) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = resultType.getRank(), spatial = rank - 2;
  Type element = resultType.getElementType();
  Type acc = getAccumulatorType(element);
  auto accType = RankedTensorType::get(resultType.getShape(), acc);

  // Loops: n, o..., m, k..., c (no c when depthwise).
  int64_t numLoops = depthwise ? 2 * rank - 2 : 2 * rank - 1;
  auto dim = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  AffineExpr n = dim(0), m = dim(1 + spatial);
  AffineExpr c = depthwise ? m : dim(numLoops - 1);
  SmallVector<AffineExpr> inExprs{n}, outExprs{n};
  SmallVector<AffineExpr> wExprs{depthwise ? getAffineConstantExpr(0, ctx) : m};
  for (int64_t i = 0; i < spatial; ++i) {
    AffineExpr o = dim(1 + i), k = dim(2 + spatial + i);
    inExprs.push_back(o * strides[i] + k * dilations[i]);
    wExprs.push_back(k);
    outExprs.push_back(o);
  }
  inExprs.push_back(c);
  wExprs.push_back(c);
  outExprs.push_back(m);
  SmallVector<AffineMap> maps{AffineMap::get(numLoops, 0, inExprs, ctx),
                              AffineMap::get(numLoops, 0, wExprs, ctx),
                              AffineMap::get(numLoops, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.append(numLoops - rank, utils::IteratorType::reduction);
  Value sum =
      buildConvSum(b, loc, input, weight, maps, iterators, accType, roundTo);
  return buildConvEpilogue(b, loc, sum, bias, /*channelDim=*/rank - 1,
                           resultType, acc);
}

struct ConvLowering : OpConversionPattern<ConvOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    FailureOr<Type> roundTo = getOperandRoundingType(op);
    if (failed(roundTo))
      return failure();
    Value input =
        getStoredOperand(rewriter, loc, op, op.getInput(), adaptor.getInput());
    auto inType = getTensorType(input);
    int64_t rank = inType.getRank(), spatial = rank - 2;
    int64_t firstSpatial = op.getFirstSpatialDim();
    ArrayRef<int64_t> pads = op.getPads();
    if (llvm::any_of(pads, [](int64_t p) { return p != 0; })) {
      SmallVector<int64_t> shape(inType.getShape());
      SmallVector<int64_t> offsets(rank, 0);
      for (int64_t i = 0; i < spatial; ++i) {
        shape[i + firstSpatial] += pads[i] + pads[i + spatial];
        offsets[i + firstSpatial] = pads[i];
      }
      input = insertIntoFilled(
          rewriter, loc, input,
          RankedTensorType::get(shape, inType.getElementType()),
          rewriter.getZeroAttr(inType.getElementType()), offsets,
          SmallVector<int64_t>(rank, 1));
    }
    Value weight = getStoredOperand(rewriter, loc, op, op.getWeight(),
                                    adaptor.getWeight());
    if (op.getChannelsLast()) {
      rewriter.replaceOp(
          op,
          buildChannelsLastConv(rewriter, loc, input, weight, adaptor.getBias(),
                                op.getStrides(), op.getDilations(), resultType,
                                /*depthwise=*/op.isDepthwise(), *roundTo));
      return success();
    }
    rewriter.replaceOp(op, buildGroupedConv(rewriter, loc, input, weight,
                                            adaptor.getBias(), op.getStrides(),
                                            op.getDilations(), op.getGroup(),
                                            resultType, *roundTo));
    return success();
  }
};

/// A transposed convolution is a stride-1 convolution, with the flipped and
/// transposed kernel, over the input dilated by the stride (stride - 1 zeros
/// between elements) and padded by dilation * (K - 1) - pad_begin. Input
/// elements that fall outside that buffer (negative or large pads) are
/// sliced off first.
struct ConvTransposeLowering : OpConversionPattern<ConvTransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConvTransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    auto resultType =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    Value input = adaptor.getInput(), weight = adaptor.getWeight();
    auto inType = getTensorType(input), wType = getTensorType(weight);
    int64_t rank = inType.getRank(), spatial = rank - 2;
    int64_t group = op.getGroup();
    int64_t channels = inType.getDimSize(1), icg = channels / group,
            ocg = wType.getDimSize(1);
    ArrayRef<int64_t> strides = op.getStrides(), pads = op.getPads(),
                      dilations = op.getDilations();
    ArrayRef<int64_t> kernel = wType.getShape().drop_front(2);
    Type wElement = wType.getElementType();

    // Weight [C, OCg, K...] -> [M, ICg, K...] with flipped spatial dims.
    SmallVector<int64_t> expandedShape{group, icg, ocg};
    llvm::append_range(expandedShape, kernel);
    Value wView = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(expandedShape, wElement), weight,
        mergeTwo(rank + 1, 0));
    SmallVector<int64_t> flippedShape{group, ocg, icg};
    llvm::append_range(flippedShape, kernel);
    auto flippedType = RankedTensorType::get(flippedShape, wElement);
    SmallVector<AffineExpr> readExprs{getAffineDimExpr(0, ctx),
                                      getAffineDimExpr(2, ctx),
                                      getAffineDimExpr(1, ctx)};
    for (int64_t i = 0; i < spatial; ++i)
      readExprs.push_back(kernel[i] - 1 - getAffineDimExpr(3 + i, ctx));
    SmallVector<AffineMap> maps{AffineMap::get(rank + 1, 0, readExprs, ctx),
                                rewriter.getMultiDimIdentityMap(rank + 1)};
    Value flipped = linalg::GenericOp::create(
                        rewriter, loc, flippedType, wView,
                        createEmpty(rewriter, loc, flippedType), maps,
                        SmallVector<utils::IteratorType>(
                            rank + 1, utils::IteratorType::parallel),
                        [](OpBuilder &nb, Location nloc, ValueRange args) {
                          linalg::YieldOp::create(nb, nloc, args[0]);
                        })
                        .getResult(0);
    SmallVector<int64_t> convWeightShape{group * ocg, icg};
    llvm::append_range(convWeightShape, kernel);
    Value convWeight = tensor::CollapseShapeOp::create(
        rewriter, loc, RankedTensorType::get(convWeightShape, wElement),
        flipped, mergeTwo(rank + 1, 0));

    // The dilated, padded input buffer.
    SmallVector<int64_t> bufferShape(inType.getShape().take_front(2));
    SmallVector<int64_t> sliceOffsets(rank, 0), sliceSizes(inType.getShape()),
        insertOffsets(rank, 0), insertStrides(rank, 1);
    bool empty = false, whole = true;
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t size = inType.getDimSize(i + 2);
      int64_t begin = dilations[i] * (kernel[i] - 1) - pads[i];
      int64_t buffer =
          resultType.getDimSize(i + 2) + (kernel[i] - 1) * dilations[i];
      int64_t first = begin >= 0 ? 0 : ceilDiv(-begin, strides[i]);
      int64_t position = begin + first * strides[i];
      int64_t count = 0;
      if (first < size && position < buffer)
        count =
            std::min(size - first, (buffer - 1 - position) / strides[i] + 1);
      empty |= count == 0;
      whole &= first == 0 && count == size;
      bufferShape.push_back(buffer);
      sliceOffsets[i + 2] = first;
      sliceSizes[i + 2] = count;
      insertOffsets[i + 2] = position;
      insertStrides[i + 2] = strides[i];
    }
    auto bufferType =
        RankedTensorType::get(bufferShape, inType.getElementType());
    TypedAttr zero = rewriter.getZeroAttr(inType.getElementType());
    Value buffer;
    if (empty) {
      buffer = createFilled(rewriter, loc, bufferType, zero);
    } else {
      Value slice = input;
      if (!whole)
        slice = tensor::ExtractSliceOp::create(
            rewriter, loc, input, indexAttrs(rewriter, sliceOffsets),
            indexAttrs(rewriter, sliceSizes),
            indexAttrs(rewriter, SmallVector<int64_t>(rank, 1)));
      buffer = insertIntoFilled(rewriter, loc, slice, bufferType, zero,
                                insertOffsets, insertStrides);
    }
    rewriter.replaceOp(op, buildGroupedConv(rewriter, loc, buffer, convWeight,
                                            adaptor.getBias(),
                                            SmallVector<int64_t>(spatial, 1),
                                            dilations, group, resultType));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

struct PoolLowering : OpConversionPattern<PoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    OpBuilder &b = rewriter;
    auto resultType = cast<RankedTensorType>(
        getTypeConverter()->convertType(op.getResult().getType()));
    Value input = adaptor.getInput();
    auto inType = getTensorType(input);
    Type element = inType.getElementType();
    bool isUnsigned =
        getElementTypeOrSelf(op.getInput().getType()).isUnsignedInteger();
    StringRef kind = op.getKind();
    bool isMax = kind == "max", isAvg = kind == "avg";
    int64_t rank = inType.getRank(), spatial = rank - 2;
    // Spatial dim i of the input and the result: [N, C, D...] or
    // channels-last [N, D..., C].
    int64_t firstSpatial = op.getFirstSpatialDim();
    ArrayRef<int64_t> kernel = op.getKernelShape(), strides = op.getStrides(),
                      pads = op.getPads(), dilations = op.getDilations();
    Type acc = isMax ? element : getAccumulatorType(element);

    // The value padding contributes nothing with.
    TypedAttr padValue;
    if (!isMax)
      padValue = b.getZeroAttr(element);
    else if (auto floatType = dyn_cast<FloatType>(element))
      padValue = b.getFloatAttr(
          element, APFloat::getInf(floatType.getFloatSemantics(), true));
    else if (isUnsigned)
      padValue = b.getZeroAttr(element);
    else
      padValue = b.getIntegerAttr(
          element, APInt::getSignedMinValue(element.getIntOrFloatBitWidth()));

    // Pad to cover every window, including ceil_mode's partial ones.
    SmallVector<int64_t> paddedShape(inType.getShape());
    SmallVector<int64_t> offsets(rank, 0);
    bool needsPad = false;
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t size = inType.getDimSize(i + firstSpatial);
      int64_t needed =
          (resultType.getDimSize(i + firstSpatial) - 1) * strides[i] +
          (kernel[i] - 1) * dilations[i] + 1;
      int64_t padded = std::max(size + pads[i] + pads[i + spatial], needed);
      paddedShape[i + firstSpatial] = padded;
      offsets[i + firstSpatial] = pads[i];
      needsPad |= padded != size;
    }
    if (needsPad)
      input = insertIntoFilled(
          b, loc, input, RankedTensorType::get(paddedShape, element), padValue,
          offsets, SmallVector<int64_t>(rank, 1));

    // Loops: the result's dims in order (n, c, o... or n, o..., c: the
    // channels innermost when they are the contiguous dim), then the window
    // k...; the window operand only carries the kernel extent (as in
    // linalg's named pooling ops).
    int64_t numLoops = 2 + 2 * spatial;
    auto dim = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    SmallVector<AffineExpr> inExprs, windowExprs, outExprs;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t i = d - firstSpatial;
      bool isSpatial = i >= 0 && i < spatial;
      inExprs.push_back(isSpatial ? dim(d) * strides[i] +
                                        dim(2 + spatial + i) * dilations[i]
                                  : dim(d));
      outExprs.push_back(dim(d));
    }
    for (int64_t i = 0; i < spatial; ++i)
      windowExprs.push_back(dim(2 + spatial + i));
    AffineMap outMap = AffineMap::get(numLoops, 0, outExprs, ctx);
    SmallVector<AffineMap> maps{AffineMap::get(numLoops, 0, inExprs, ctx),
                                AffineMap::get(numLoops, 0, windowExprs, ctx),
                                outMap};
    SmallVector<utils::IteratorType> iterators(2 + spatial,
                                               utils::IteratorType::parallel);
    iterators.append(spatial, utils::IteratorType::reduction);
    Value window = tensor::EmptyOp::create(b, loc, kernel, element);
    auto accType = RankedTensorType::get(resultType.getShape(), acc);

    if (op.getWithIndices()) {
      rewriter.replaceOp(op, buildMaxWithIndices(b, loc, op, input, window,
                                                 maps, iterators, accType,
                                                 padValue, inType));
      return success();
    }

    Value init =
        createFilled(b, loc, accType, isMax ? padValue : b.getZeroAttr(acc));
    int64_t p = op.getP();
    Value reduced =
        linalg::GenericOp::create(
            b, loc, accType, ValueRange{input, window}, init, maps, iterators,
            [&](OpBuilder &nb, Location nloc, ValueRange args) {
              Value x = args[0], cur = args[2], next;
              if (isMax) {
                if (isa<FloatType>(element))
                  next = arith::MaximumFOp::create(nb, nloc, cur, x);
                else if (isUnsigned)
                  next = arith::MaxUIOp::create(nb, nloc, cur, x);
                else
                  next = arith::MaxSIOp::create(nb, nloc, cur, x);
              } else {
                x = extendTo(nb, nloc, x, acc);
                if (!isAvg) {
                  x = math::AbsFOp::create(nb, nloc, x);
                  if (p == 2)
                    x = arith::MulFOp::create(nb, nloc, x, x);
                  else if (p != 1)
                    x = math::PowFOp::create(
                        nb, nloc, x,
                        arith::ConstantOp::create(
                            nb, nloc, nb.getFloatAttr(acc, double(p))));
                }
                next = arith::AddFOp::create(nb, nloc, cur, x);
              }
              linalg::YieldOp::create(nb, nloc, next);
            })
            .getResult(0);
    if (isMax) {
      rewriter.replaceOp(op, reduced);
      return success();
    }

    // Epilogue: average (divide by the per-dim window counts) or p-th root.
    SmallVector<Value> inputs{reduced};
    SmallVector<AffineMap> epilogueMaps{b.getMultiDimIdentityMap(rank)};
    if (isAvg) {
      for (int64_t i = 0; i < spatial; ++i) {
        int64_t size = inType.getDimSize(i + firstSpatial);
        int64_t lo = op.getCountIncludePad() ? -pads[i] : 0;
        int64_t hi = op.getCountIncludePad() ? size + pads[i + spatial] : size;
        int64_t outSize = resultType.getDimSize(i + firstSpatial);
        SmallVector<double> counts;
        for (int64_t o = 0; o < outSize; ++o) {
          int64_t count = 0;
          for (int64_t k = 0; k < kernel[i]; ++k) {
            int64_t pos = o * strides[i] - pads[i] + k * dilations[i];
            count += pos >= lo && pos < hi;
          }
          counts.push_back(static_cast<double>(std::max<int64_t>(count, 1)));
        }
        inputs.push_back(arith::ConstantOp::create(
            b, loc,
            DenseElementsAttr::get(
                RankedTensorType::get({outSize}, b.getF64Type()),
                ArrayRef<double>(counts))));
        epilogueMaps.push_back(
            AffineMap::get(rank, 0, dim(firstSpatial + i), ctx));
      }
    }
    epilogueMaps.push_back(b.getMultiDimIdentityMap(rank));
    Value result =
        linalg::GenericOp::create(
            b, loc, resultType, inputs, createEmpty(b, loc, resultType),
            epilogueMaps,
            SmallVector<utils::IteratorType>(rank,
                                             utils::IteratorType::parallel),
            [&](OpBuilder &nb, Location nloc, ValueRange args) {
              Value v = args[0];
              if (isAvg) {
                Value count = args[1];
                for (Value c : args.drop_front(2).drop_back())
                  count = arith::MulFOp::create(nb, nloc, count, c);
                if (acc.getIntOrFloatBitWidth() < 64)
                  count = arith::TruncFOp::create(nb, nloc, acc, count);
                v = arith::DivFOp::create(nb, nloc, v, count);
              } else if (p == 2) {
                v = math::SqrtOp::create(nb, nloc, v);
              } else if (p != 1) {
                v = math::PowFOp::create(
                    nb, nloc, v,
                    arith::ConstantOp::create(
                        nb, nloc, nb.getFloatAttr(acc, 1.0 / double(p))));
              }
              linalg::YieldOp::create(nb, nloc,
                                      truncateTo(nb, nloc, v, element));
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }

  /// Max pooling that also yields the flattened input index of the first
  /// maximum of each window; padding never wins.
  SmallVector<Value>
  buildMaxWithIndices(OpBuilder &b, Location loc, PoolOp op, Value input,
                      Value window, SmallVector<AffineMap> maps,
                      ArrayRef<utils::IteratorType> iterators,
                      RankedTensorType valueType, TypedAttr padValue,
                      RankedTensorType inType) const {
    auto indexType =
        RankedTensorType::get(valueType.getShape(), b.getI64Type());
    maps.push_back(maps.back());
    Value values = createFilled(b, loc, valueType, padValue);
    Value indices = createFilled(b, loc, indexType, b.getI64IntegerAttr(-1));
    int64_t rank = inType.getRank(), spatial = rank - 2;
    ArrayRef<int64_t> strides = op.getStrides(), pads = op.getPads(),
                      dilations = op.getDilations();
    bool columnMajor = op.getStorageOrder() == 1;
    Type element = valueType.getElementType();
    bool isUnsigned =
        getElementTypeOrSelf(op.getInput().getType()).isUnsignedInteger();
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{valueType, indexType}, ValueRange{input, window},
        ValueRange{values, indices}, maps, iterators,
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          auto cst = [&](int64_t v) -> Value {
            return arith::ConstantIndexOp::create(nb, nloc, v);
          };
          Value inBounds;
          SmallVector<Value> position;
          for (int64_t i = 0; i < spatial; ++i) {
            Value o = linalg::IndexOp::create(nb, nloc, 2 + i);
            Value k = linalg::IndexOp::create(nb, nloc, 2 + spatial + i);
            Value pos = arith::AddIOp::create(
                nb, nloc, arith::MulIOp::create(nb, nloc, o, cst(strides[i])),
                arith::MulIOp::create(nb, nloc, k, cst(dilations[i])));
            pos = arith::SubIOp::create(nb, nloc, pos, cst(pads[i]));
            position.push_back(pos);
            Value lo = arith::CmpIOp::create(
                nb, nloc, arith::CmpIPredicate::sge, pos, cst(0));
            Value hi =
                arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::slt, pos,
                                      cst(inType.getDimSize(i + 2)));
            Value both = arith::AndIOp::create(nb, nloc, lo, hi);
            inBounds = inBounds
                           ? arith::AndIOp::create(nb, nloc, inBounds, both)
                           : both;
          }
          Value x = args[0], cur = args[2], curIndex = args[3];
          Value greater;
          if (isa<FloatType>(element))
            greater = arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OGT,
                                            x, cur);
          else
            greater =
                arith::CmpIOp::create(nb, nloc,
                                      isUnsigned ? arith::CmpIPredicate::ugt
                                                 : arith::CmpIPredicate::sgt,
                                      x, cur);
          // The first in-bounds element always replaces the initial -1.
          Value unset = arith::CmpIOp::create(
              nb, nloc, arith::CmpIPredicate::slt, curIndex,
              arith::ConstantOp::create(nb, nloc, nb.getI64IntegerAttr(0)));
          Value take = arith::AndIOp::create(
              nb, nloc, inBounds,
              arith::OrIOp::create(nb, nloc, greater, unset));
          // Flattened index: (n * C + c) * spatial size + position within
          // the spatial dims (row- or column-major).
          Value flat = arith::AddIOp::create(
              nb, nloc,
              arith::MulIOp::create(nb, nloc,
                                    linalg::IndexOp::create(nb, nloc, 0),
                                    cst(inType.getDimSize(1))),
              linalg::IndexOp::create(nb, nloc, 1));
          SmallVector<int64_t> order;
          for (int64_t i = 0; i < spatial; ++i)
            order.push_back(columnMajor ? spatial - 1 - i : i);
          for (int64_t i : order)
            flat = arith::AddIOp::create(
                nb, nloc,
                arith::MulIOp::create(nb, nloc, flat,
                                      cst(inType.getDimSize(i + 2))),
                position[i]);
          Value flat64 =
              arith::IndexCastOp::create(nb, nloc, nb.getI64Type(), flat);
          Value newValue = arith::SelectOp::create(nb, nloc, take, x, cur);
          Value newIndex =
              arith::SelectOp::create(nb, nloc, take, flat64, curIndex);
          linalg::YieldOp::create(nb, nloc, ValueRange{newValue, newIndex});
        });
    return {generic.getResult(0), generic.getResult(1)};
  }
};

/// A gather over the result: each element looks for the input element,
/// among those of the windows covering it, whose index names it.
struct MaxUnpoolLowering : OpConversionPattern<MaxUnpoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaxUnpoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    Value input = adaptor.getInput(), indices = adaptor.getIndices();
    auto inType = getTensorType(input);
    Type indexElement = getTensorType(indices).getElementType();
    int64_t rank = inType.getRank(), spatial = rank - 2;
    ArrayRef<int64_t> kernel = op.getKernelShape(), strides = op.getStrides(),
                      pads = op.getPads();
    SmallVector<int64_t> windows;
    for (int64_t i = 0; i < spatial; ++i)
      windows.push_back(ceilDiv(kernel[i], strides[i]));
    Type element = resultType.getElementType();
    Value result = buildWindowReduction(
        rewriter, loc, resultType, windows, rewriter.getZeroAttr(element),
        [&](OpBuilder &b, Location l, ValueRange args) {
          auto cst = [&](int64_t v) -> Value {
            return arith::ConstantIndexOp::create(b, l, v);
          };
          Value n = linalg::IndexOp::create(b, l, 0);
          Value c = linalg::IndexOp::create(b, l, 1);
          SmallVector<Value> source{n, c};
          Value flat = arith::AddIOp::create(
              b, l, arith::MulIOp::create(b, l, n, cst(inType.getDimSize(1))),
              c);
          Value valid;
          for (int64_t i = 0; i < spatial; ++i) {
            Value p = linalg::IndexOp::create(b, l, 2 + i);
            Value j = linalg::IndexOp::create(b, l, rank + i);
            // Indices address the default-size unpooled tensor; a larger
            // output_shape only adds zeros at the end.
            int64_t size = (inType.getDimSize(2 + i) - 1) * strides[i] +
                           kernel[i] - pads[i] - pads[i + spatial];
            flat = arith::AddIOp::create(
                b, l, arith::MulIOp::create(b, l, flat, cst(size)), p);
            Value inFrame = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::slt, p, cst(size));
            valid =
                valid ? arith::AndIOp::create(b, l, valid, inFrame) : inFrame;
            Value shifted = arith::AddIOp::create(b, l, p, cst(pads[i]));
            Value o = arith::SubIOp::create(
                b, l, arith::DivUIOp::create(b, l, shifted, cst(strides[i])),
                j);
            Value offset = arith::SubIOp::create(
                b, l, shifted, arith::MulIOp::create(b, l, o, cst(strides[i])));
            Value ok = arith::AndIOp::create(
                b, l,
                arith::AndIOp::create(
                    b, l,
                    arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, o,
                                          cst(0)),
                    arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, o,
                                          cst(inType.getDimSize(2 + i)))),
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, offset,
                                      cst(kernel[i])));
            valid = valid ? arith::AndIOp::create(b, l, valid, ok) : ok;
            source.push_back(arith::MaxSIOp::create(
                b, l,
                arith::MinSIOp::create(b, l, o,
                                       cst(inType.getDimSize(2 + i) - 1)),
                cst(0)));
          }
          Value index = tensor::ExtractOp::create(b, l, indices, source);
          Value flatValue =
              arith::IndexCastOp::create(b, l, indexElement, flat);
          Value match = arith::AndIOp::create(
              b, l, valid,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, index,
                                    flatValue));
          Value x = tensor::ExtractOp::create(b, l, input, source);
          linalg::YieldOp::create(
              b, l,
              arith::SelectOp::create(b, l, match, x, args[1]).getResult());
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// DeformConv
//===----------------------------------------------------------------------===//

/// One generic over (n, m, oh, ow) with (input channel in group, kh, kw) as
/// reductions: each tap reads its offset and mask, interpolates the input
/// bilinearly (zero outside) and accumulates weight * mask * value in f32
/// (f64 for f64); the bias is added at the end.
struct DeformConvLowering : OpConversionPattern<DeformConvOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DeformConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    auto resultType =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    Value input = adaptor.getInput(), weight = adaptor.getWeight(),
          offset = adaptor.getOffset(), mask = adaptor.getMask(),
          bias = adaptor.getBias();
    auto inType = getTensorType(input), wType = getTensorType(weight);
    int64_t height = inType.getDimSize(2), width = inType.getDimSize(3);
    int64_t channels = inType.getDimSize(1);
    int64_t perGroup = wType.getDimSize(1), kh = wType.getDimSize(2),
            kw = wType.getDimSize(3);
    int64_t outPerGroup = resultType.getDimSize(1) / op.getGroup();
    int64_t perOffsetGroup = channels / op.getOffsetGroup();
    int64_t taps = kh * kw;
    ArrayRef<int64_t> strides = op.getStrides(), pads = op.getPads(),
                      dilations = op.getDilations();
    Type element = resultType.getElementType();
    Type ft = element.isF64() ? element : rewriter.getF32Type();
    auto accType = RankedTensorType::get(resultType.getShape(), ft);
    SmallVector<int64_t> windowShape{perGroup, kh, kw};
    Value window = tensor::EmptyOp::create(rewriter, loc, windowShape, element);
    SmallVector<AffineExpr> windowExprs, outExprs;
    for (int64_t i = 0; i < 7; ++i)
      (i < 4 ? outExprs : windowExprs).push_back(getAffineDimExpr(i, ctx));
    SmallVector<AffineMap> maps{AffineMap::get(7, 0, windowExprs, ctx),
                                AffineMap::get(7, 0, outExprs, ctx)};
    SmallVector<utils::IteratorType> iterators(4,
                                               utils::IteratorType::parallel);
    iterators.append(3, utils::IteratorType::reduction);
    Value init = createFilled(rewriter, loc, accType, rewriter.getZeroAttr(ft));
    Value acc =
        linalg::GenericOp::create(
            rewriter, loc, accType, window, init, maps, iterators,
            [&](OpBuilder &b, Location l, ValueRange args) {
              auto idx = [&](int64_t v) -> Value {
                return arith::ConstantIndexOp::create(b, l, v);
              };
              auto fcst = [&](double v) -> Value {
                return arith::ConstantOp::create(b, l, b.getFloatAttr(ft, v));
              };
              auto iadd = [&](Value x, Value y) -> Value {
                return arith::AddIOp::create(b, l, x, y);
              };
              auto imul = [&](Value x, int64_t y) -> Value {
                return arith::MulIOp::create(b, l, x, idx(y));
              };
              auto fadd = [&](Value x, Value y) -> Value {
                return arith::AddFOp::create(b, l, x, y);
              };
              auto fsub = [&](Value x, Value y) -> Value {
                return arith::SubFOp::create(b, l, x, y);
              };
              auto fmul = [&](Value x, Value y) -> Value {
                return arith::MulFOp::create(b, l, x, y);
              };
              Value n = linalg::IndexOp::create(b, l, 0);
              Value m = linalg::IndexOp::create(b, l, 1);
              Value oh = linalg::IndexOp::create(b, l, 2);
              Value ow = linalg::IndexOp::create(b, l, 3);
              Value ic = linalg::IndexOp::create(b, l, 4);
              Value i = linalg::IndexOp::create(b, l, 5);
              Value j = linalg::IndexOp::create(b, l, 6);
              Value g = arith::DivUIOp::create(b, l, m, idx(outPerGroup));
              Value c = iadd(imul(g, perGroup), ic);
              Value og = arith::DivUIOp::create(b, l, c, idx(perOffsetGroup));
              Value tap = iadd(imul(og, taps), iadd(imul(i, kw), j));
              Value dy = tensor::ExtractOp::create(
                  b, l, offset, ValueRange{n, imul(tap, 2), oh, ow});
              Value dx = tensor::ExtractOp::create(
                  b, l, offset,
                  ValueRange{n, iadd(imul(tap, 2), idx(1)), oh, ow});
              Value scale = tensor::ExtractOp::create(
                  b, l, mask, ValueRange{n, tap, oh, ow});
              auto toFloat = [&](Value index) -> Value {
                Value i64 =
                    arith::IndexCastOp::create(b, l, b.getI64Type(), index);
                return arith::SIToFPOp::create(b, l, ft, i64);
              };
              // Tap position: oh * stride - pad + i * dilation + dy.
              Value y = fadd(
                  toFloat(iadd(imul(oh, strides[0]), imul(i, dilations[0]))),
                  fadd(fcst(-static_cast<double>(pads[0])),
                       extendTo(b, l, dy, ft)));
              Value x = fadd(
                  toFloat(iadd(imul(ow, strides[1]), imul(j, dilations[1]))),
                  fadd(fcst(-static_cast<double>(pads[1])),
                       extendTo(b, l, dx, ft)));
              Value y0 = math::FloorOp::create(b, l, y);
              Value x0 = math::FloorOp::create(b, l, x);
              Value ty = fsub(y, y0), tx = fsub(x, x0);
              auto corner = [&](Value cy, Value cx) -> Value {
                auto inside = [&](Value v, int64_t size) -> Value {
                  Value lo = arith::CmpFOp::create(
                      b, l, arith::CmpFPredicate::OGE, v, fcst(0));
                  Value hi = arith::CmpFOp::create(
                      b, l, arith::CmpFPredicate::OLE, v, fcst(size - 1));
                  return arith::AndIOp::create(b, l, lo, hi);
                };
                auto toIndex = [&](Value v, int64_t size) -> Value {
                  Value clamped = arith::MinimumFOp::create(
                      b, l, arith::MaximumFOp::create(b, l, v, fcst(0)),
                      fcst(size - 1));
                  Value i64 =
                      arith::FPToSIOp::create(b, l, b.getI64Type(), clamped);
                  return arith::IndexCastOp::create(b, l, b.getIndexType(),
                                                    i64);
                };
                Value ok = arith::AndIOp::create(b, l, inside(cy, height),
                                                 inside(cx, width));
                Value v = tensor::ExtractOp::create(
                    b, l, input,
                    ValueRange{n, c, toIndex(cy, height), toIndex(cx, width)});
                return arith::SelectOp::create(b, l, ok, extendTo(b, l, v, ft),
                                               fcst(0));
              };
              Value y1 = fadd(y0, fcst(1)), x1 = fadd(x0, fcst(1));
              Value uy = fsub(fcst(1), ty), ux = fsub(fcst(1), tx);
              Value value = fadd(fadd(fmul(corner(y0, x0), fmul(uy, ux)),
                                      fmul(corner(y0, x1), fmul(uy, tx))),
                                 fadd(fmul(corner(y1, x0), fmul(ty, ux)),
                                      fmul(corner(y1, x1), fmul(ty, tx))));
              Value w = tensor::ExtractOp::create(b, l, weight,
                                                  ValueRange{m, ic, i, j});
              Value term =
                  fmul(fmul(extendTo(b, l, w, ft), extendTo(b, l, scale, ft)),
                       value);
              linalg::YieldOp::create(b, l, fadd(args[1], term));
            })
            .getResult(0);
    // Epilogue: + bias[m], back to the element type.
    auto biasMap = AffineMap::get(4, 0, getAffineDimExpr(1, ctx), ctx);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, resultType, ValueRange{acc, bias},
            createEmpty(rewriter, loc, resultType),
            ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(4), biasMap,
                                rewriter.getMultiDimIdentityMap(4)},
            SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value sum = arith::AddFOp::create(b, l, args[0],
                                                extendTo(b, l, args[1], ft));
              linalg::YieldOp::create(b, l, truncateTo(b, l, sum, element));
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Col2Im
//===----------------------------------------------------------------------===//

/// A gather over (n, c, image..., block...) with the block offsets as
/// reduction loops: image element i receives block offset j from the block
/// at position (i + pad - j * dilation) / stride when that divides evenly
/// and lies in range. No scatter, so no write conflicts.
struct Col2ImLowering : OpConversionPattern<Col2ImOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(Col2ImOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    Value input = adaptor.getInput();
    int64_t rank = resultType.getRank(), spatial = rank - 2;
    ArrayRef<int64_t> block = op.getBlockShape(), strides = op.getStrides(),
                      dilations = op.getDilations(), pads = op.getPads();
    SmallVector<int64_t> positions;
    int64_t blockSize = 1;
    for (int64_t d = 0; d < spatial; ++d) {
      blockSize *= block[d];
      int64_t padded =
          resultType.getDimSize(2 + d) + pads[d] + pads[spatial + d];
      positions.push_back(
          (padded - dilations[d] * (block[d] - 1) - 1) / strides[d] + 1);
    }
    Type element = resultType.getElementType();
    Type acc = getAccumulatorType(element);
    auto accType = RankedTensorType::get(resultType.getShape(), acc);
    Value result = buildWindowReduction(
        rewriter, loc, accType, block, rewriter.getZeroAttr(acc),
        [&](OpBuilder &b, Location l, ValueRange args) {
          auto cst = [&](int64_t v) -> Value {
            return arith::ConstantIndexOp::create(b, l, v);
          };
          Value n = linalg::IndexOp::create(b, l, 0);
          Value c = linalg::IndexOp::create(b, l, 1);
          Value offset = cst(0), column = cst(0), valid;
          for (int64_t d = 0; d < spatial; ++d) {
            Value i = linalg::IndexOp::create(b, l, 2 + d);
            Value j = linalg::IndexOp::create(b, l, rank + d);
            // Offset within the block, row-major over the block dims.
            offset = arith::AddIOp::create(
                b, l, arith::MulIOp::create(b, l, offset, cst(block[d])), j);
            Value t = arith::SubIOp::create(
                b, l, arith::AddIOp::create(b, l, i, cst(pads[d])),
                arith::MulIOp::create(b, l, j, cst(dilations[d])));
            Value p = arith::FloorDivSIOp::create(b, l, t, cst(strides[d]));
            Value ok = arith::AndIOp::create(
                b, l,
                arith::CmpIOp::create(
                    b, l, arith::CmpIPredicate::eq,
                    arith::MulIOp::create(b, l, p, cst(strides[d])), t),
                arith::AndIOp::create(
                    b, l,
                    arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, p,
                                          cst(0)),
                    arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, p,
                                          cst(positions[d]))));
            valid = valid ? arith::AndIOp::create(b, l, valid, ok) : ok;
            Value clamped = arith::MaxSIOp::create(
                b, l, arith::MinSIOp::create(b, l, p, cst(positions[d] - 1)),
                cst(0));
            column = arith::AddIOp::create(
                b, l, arith::MulIOp::create(b, l, column, cst(positions[d])),
                clamped);
          }
          Value channel = arith::AddIOp::create(
              b, l, arith::MulIOp::create(b, l, c, cst(blockSize)), offset);
          Value x = tensor::ExtractOp::create(b, l, input,
                                              ValueRange{n, channel, column});
          x = extendTo(b, l, x, acc);
          Value sum = arith::AddFOp::create(b, l, args[1], x);
          linalg::YieldOp::create(
              b, l,
              arith::SelectOp::create(b, l, valid, sum, args[1]).getResult());
        });
    if (acc != element)
      result = buildElementwise(rewriter, loc, resultType, result,
                                [&](OpBuilder &b, Location l, ValueRange args) {
                                  return truncateTo(b, l, args[0], element);
                                });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::ridge::linalg_lowering::populateNNToLinalgPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ConvLowering, ConvTransposeLowering, PoolLowering,
               MaxUnpoolLowering, Col2ImLowering, DeformConvLowering>(converter,
                                                                      ctx);
}
