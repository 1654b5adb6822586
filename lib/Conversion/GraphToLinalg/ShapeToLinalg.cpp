//===- ShapeToLinalg.cpp - shape and data-movement ops -------===//
//
// Lowering of the ridge shape and data-movement ops to linalg on tensors.
//
// Windows and joins become tensor.extract_slice/insert_slice; broadcasts and
// repeats become linalg.generic with projected indexing maps; indexed reads
// (gathers, reversed slices, reflect/edge padding) become linalg.generic
// over the result whose body computes the source index from linalg.index
// and reads it with tensor.extract. Data-dependent indices are wrapped
// (negative ones count from the end) and then clamped, so a bad index can
// never read or write outside a tensor. Scatters are sequential by nature
// (later updates win or accumulate): they become scf.for loop nests that
// thread the result tensor through tensor.insert.
//
//===----------------------------------------------------------------------===//

#include "GraphToLinalgCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <functional>

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::linalg_lowering;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

/// `raw` (an integer scalar read from an index tensor) as an index into a
/// dimension of size `dim`: negative values count from the end, and the
/// result is clamped into [0, dim - 1] so that no access leaves the tensor.
Value normalizeIndex(OpBuilder &b, Location loc, Value raw, int64_t dim) {
  Value index = raw;
  if (!raw.getType().isIndex())
    index = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
  Value zero = indexConstant(b, loc, 0);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index, zero);
  Value wrapped =
      arith::AddIOp::create(b, loc, index, indexConstant(b, loc, dim));
  index = arith::SelectOp::create(b, loc, negative, wrapped, index);
  index = arith::MaxSIOp::create(b, loc, index, zero);
  return arith::MinSIOp::create(
      b, loc, index, indexConstant(b, loc, std::max<int64_t>(dim - 1, 0)));
}

using IndexedBody = function_ref<Value(OpBuilder &, Location, ValueRange args,
                                       ArrayRef<Value> ivs)>;

/// A parallel linalg.generic producing `resultType`, reading `inputs` through
/// `inputMaps`; `body` gets the input elements and the iteration indices
/// (linalg.index of every result dimension) and returns the result element.
Value buildIndexedGeneric(OpBuilder &b, Location loc,
                          RankedTensorType resultType, ValueRange inputs,
                          ArrayRef<AffineMap> inputMaps, IndexedBody body) {
  int64_t rank = resultType.getRank();
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, inputs, createEmpty(b, loc, resultType), maps,
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        SmallVector<Value> ivs;
        for (int64_t d = 0; d < rank; ++d)
          ivs.push_back(linalg::IndexOp::create(nb, nloc, d));
        Value result = body(nb, nloc, args.drop_back(), ivs);
        linalg::YieldOp::create(nb, nloc, result);
      });
  return generic.getResult(0);
}

RankedTensorType convertedType(const TypeConverter *converter, Type type) {
  return cast<RankedTensorType>(converter->convertType(type));
}

//===----------------------------------------------------------------------===//
// Concat and slice
//===----------------------------------------------------------------------===//

/// `then(b, loc)` where `condition` holds, `otherwise(b, loc)` elsewhere, as
/// an scf.if yielding one value, so that only the taken branch reads memory.
Value buildIf(OpBuilder &b, Location loc, Value condition,
              function_ref<Value(OpBuilder &, Location)> then,
              function_ref<Value(OpBuilder &, Location)> otherwise) {
  auto ifOp = scf::IfOp::create(
      b, loc, condition,
      [&](OpBuilder &nb, Location l) {
        scf::YieldOp::create(nb, l, then(nb, l));
      },
      [&](OpBuilder &nb, Location l) {
        scf::YieldOp::create(nb, l, otherwise(nb, l));
      });
  return ifOp.getResult(0);
}

/// Concat is one generic over the result: the position along `axis` picks
/// the input to read. (tensor.insert_slice would bufferize to strided
/// memref.copy, which the CPU runtime cannot link.)
struct ConcatLowering : OpConversionPattern<ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType resultType =
        convertedType(getTypeConverter(), op.getType());
    if (!resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs static shapes");
    int64_t axis = op.getAxis();
    SmallVector<Value> inputs;
    SmallVector<int64_t> offsets;
    int64_t offset = 0;
    for (Value input : adaptor.getInputs()) {
      int64_t size = cast<RankedTensorType>(input.getType()).getDimSize(axis);
      if (size == 0)
        continue;
      inputs.push_back(input);
      offsets.push_back(offset);
      offset += size;
    }
    if (inputs.empty()) {
      rewriter.replaceOp(op, createEmpty(rewriter, op.getLoc(), resultType));
      return success();
    }
    Value result = buildIndexedGeneric(
        rewriter, op.getLoc(), resultType, {}, {},
        [&](OpBuilder &b, Location l, ValueRange, ArrayRef<Value> ivs) {
          // A binary search over the inputs' ranges along `axis`: inputs
          // [lo, hi) hold the position, split at mid. The scf.if nest is
          // log2(#inputs) deep, so a Concat of thousands of inputs neither
          // recurses once per input here nor nests that deep for the passes
          // that walk the body.
          std::function<Value(OpBuilder &, Location, size_t, size_t)> pick =
              [&](OpBuilder &nb, Location nl, size_t lo, size_t hi) -> Value {
            if (hi - lo == 1) {
              SmallVector<Value> coords(ivs);
              coords[axis] = arith::SubIOp::create(
                  nb, nl, ivs[axis], indexConstant(nb, nl, offsets[lo]));
              return tensor::ExtractOp::create(nb, nl, inputs[lo], coords);
            }
            size_t mid = lo + (hi - lo) / 2;
            Value below = arith::CmpIOp::create(
                nb, nl, arith::CmpIPredicate::slt, ivs[axis],
                indexConstant(nb, nl, offsets[mid]));
            return buildIf(
                nb, nl, below,
                [&](OpBuilder &tb, Location tl) {
                  return pick(tb, tl, lo, mid);
                },
                [&](OpBuilder &ob, Location ol) {
                  return pick(ob, ol, mid, hi);
                });
          };
          return pick(b, l, 0, inputs.size());
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A strided window (start + step * i per dimension, steps of either sign)
/// read into a fresh tensor. The reads are tensor.extract in the body: as an
/// input indexing map, a dimension with start 0 and step 1 would be a plain
/// loop dimension and make linalg infer the loop range from the input.
struct SliceLowering : OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType resultType =
        convertedType(getTypeConverter(), op.getType());
    Value input = adaptor.getInput();
    ArrayRef<int64_t> starts = op.getStarts(), steps = op.getSteps();
    Value result = buildIndexedGeneric(
        rewriter, op.getLoc(), resultType, {}, {},
        [&](OpBuilder &b, Location l, ValueRange, ArrayRef<Value> ivs) {
          SmallVector<Value> coords;
          for (auto [d, iv] : llvm::enumerate(ivs)) {
            Value index = iv;
            if (steps[d] != 1)
              index = arith::MulIOp::create(b, l, index,
                                            indexConstant(b, l, steps[d]));
            if (starts[d] != 0)
              index = arith::AddIOp::create(b, l, index,
                                            indexConstant(b, l, starts[d]));
            coords.push_back(index);
          }
          return tensor::ExtractOp::create(b, l, input, coords).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Gathers
//===----------------------------------------------------------------------===//

struct GatherLowering : OpConversionPattern<GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = getContext();
    RankedTensorType resultType =
        convertedType(getTypeConverter(), op.getType());
    Value data = adaptor.getData(), indices = adaptor.getIndices();
    auto dataType = cast<RankedTensorType>(data.getType());
    int64_t axis = op.getAxis();
    int64_t q = cast<RankedTensorType>(indices.getType()).getRank();
    SmallVector<AffineExpr> indexExprs;
    for (int64_t i = 0; i < q; ++i)
      indexExprs.push_back(getAffineDimExpr(axis + i, ctx));
    AffineMap indexMap =
        AffineMap::get(resultType.getRank(), 0, indexExprs, ctx);
    Value result = buildIndexedGeneric(
        rewriter, op.getLoc(), resultType, indices, indexMap,
        [&](OpBuilder &b, Location l, ValueRange args, ArrayRef<Value> ivs) {
          SmallVector<Value> coords(ivs.take_front(axis));
          coords.push_back(
              normalizeIndex(b, l, args[0], dataType.getDimSize(axis)));
          llvm::append_range(coords, ivs.drop_front(axis + q));
          return tensor::ExtractOp::create(b, l, data, coords).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct GatherElementsLowering : OpConversionPattern<GatherElementsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherElementsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType resultType =
        convertedType(getTypeConverter(), op.getType());
    Value data = adaptor.getData();
    auto dataType = cast<RankedTensorType>(data.getType());
    int64_t axis = op.getAxis();
    Value result = buildIndexedGeneric(
        rewriter, op.getLoc(), resultType, adaptor.getIndices(),
        rewriter.getMultiDimIdentityMap(resultType.getRank()),
        [&](OpBuilder &b, Location l, ValueRange args, ArrayRef<Value> ivs) {
          SmallVector<Value> coords(ivs);
          coords[axis] =
              normalizeIndex(b, l, args[0], dataType.getDimSize(axis));
          return tensor::ExtractOp::create(b, l, data, coords).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct GatherNDLowering : OpConversionPattern<GatherNDOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherNDOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType resultType =
        convertedType(getTypeConverter(), op.getType());
    Value data = adaptor.getData(), indices = adaptor.getIndices();
    auto dataType = cast<RankedTensorType>(data.getType());
    auto indicesType = cast<RankedTensorType>(indices.getType());
    int64_t batch = op.getBatchDims(), q = indicesType.getRank();
    int64_t k = indicesType.getShape().back();
    // Result dims: indices.shape[:-1] (the first `batch` of them also index
    // data), then the data dims after the tuple.
    Value result = buildIndexedGeneric(
        rewriter, op.getLoc(), resultType, {}, {},
        [&](OpBuilder &b, Location l, ValueRange, ArrayRef<Value> ivs) {
          SmallVector<Value> coords(ivs.take_front(batch));
          SmallVector<Value> tuple(ivs.take_front(q - 1));
          tuple.push_back(Value());
          for (int64_t j = 0; j < k; ++j) {
            tuple.back() = indexConstant(b, l, j);
            Value raw = tensor::ExtractOp::create(b, l, indices, tuple);
            coords.push_back(
                normalizeIndex(b, l, raw, dataType.getDimSize(batch + j)));
          }
          llvm::append_range(coords, ivs.drop_front(q - 1));
          return tensor::ExtractOp::create(b, l, data, coords).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Scatters
//===----------------------------------------------------------------------===//

/// Combines the element already in place with an update.
Value combineScatter(OpBuilder &b, Location loc, StringRef reduction,
                     Type original, Value old, Value update) {
  if (reduction == "none")
    return update;
  if (isa<FloatType>(original))
    return computeInAccumulatorType(
        b, loc, {old, update}, [&](ValueRange v) -> Value {
          if (reduction == "add")
            return arith::AddFOp::create(b, loc, v[0], v[1]);
          if (reduction == "mul")
            return arith::MulFOp::create(b, loc, v[0], v[1]);
          if (reduction == "max")
            return arith::MaximumFOp::create(b, loc, v[0], v[1]);
          return arith::MinimumFOp::create(b, loc, v[0], v[1]);
        });
  bool isUnsigned = original.isUnsignedInteger() || original.isInteger(1);
  if (reduction == "add")
    return arith::AddIOp::create(b, loc, old, update);
  if (reduction == "mul")
    return arith::MulIOp::create(b, loc, old, update);
  if (reduction == "max")
    return isUnsigned ? arith::MaxUIOp::create(b, loc, old, update).getResult()
                      : arith::MaxSIOp::create(b, loc, old, update).getResult();
  return isUnsigned ? arith::MinUIOp::create(b, loc, old, update).getResult()
                    : arith::MinSIOp::create(b, loc, old, update).getResult();
}

/// Loops over every position of `updates` in row-major order, threading the
/// result (initially `data`) through tensor.insert at `target(ivs)`.
Value buildScatterLoops(
    OpBuilder &b, Location loc, Value data, Value updates, StringRef reduction,
    Type original,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>
        target) {
  auto updatesType = cast<RankedTensorType>(updates.getType());
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t dim : updatesType.getShape()) {
    lbs.push_back(indexConstant(b, loc, 0));
    ubs.push_back(indexConstant(b, loc, dim));
    steps.push_back(indexConstant(b, loc, 1));
  }
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, ValueRange{data},
      [&](OpBuilder &nb, Location l, ValueRange ivs,
          ValueRange iterArgs) -> scf::ValueVector {
        SmallVector<Value> coords = target(nb, l, ivs);
        Value update = tensor::ExtractOp::create(nb, l, updates, ivs);
        if (reduction != "none") {
          Value old = tensor::ExtractOp::create(nb, l, iterArgs[0], coords);
          update = combineScatter(nb, l, reduction, original, old, update);
        }
        return {tensor::InsertOp::create(nb, l, update, iterArgs[0], coords)
                    .getResult()};
      });
  return nest.results.front();
}

struct ScatterElementsLowering : OpConversionPattern<ScatterElementsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScatterElementsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value indices = adaptor.getIndices();
    auto dataType = cast<RankedTensorType>(adaptor.getData().getType());
    int64_t axis = op.getAxis();
    Value result = buildScatterLoops(
        rewriter, op.getLoc(), adaptor.getData(), adaptor.getUpdates(),
        op.getReduction(), op.getType().getElementType(),
        [&](OpBuilder &b, Location l, ValueRange ivs) {
          SmallVector<Value> coords(ivs);
          Value raw = tensor::ExtractOp::create(b, l, indices, ivs);
          coords[axis] = normalizeIndex(b, l, raw, dataType.getDimSize(axis));
          return coords;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ScatterNDLowering : OpConversionPattern<ScatterNDOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScatterNDOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value indices = adaptor.getIndices();
    auto dataType = cast<RankedTensorType>(adaptor.getData().getType());
    auto indicesType = cast<RankedTensorType>(indices.getType());
    int64_t q = indicesType.getRank(), k = indicesType.getShape().back();
    Value result = buildScatterLoops(
        rewriter, op.getLoc(), adaptor.getData(), adaptor.getUpdates(),
        op.getReduction(), op.getType().getElementType(),
        [&](OpBuilder &b, Location l, ValueRange ivs) {
          SmallVector<Value> coords;
          SmallVector<Value> tuple(ivs.take_front(q - 1));
          tuple.push_back(Value());
          for (int64_t j = 0; j < k; ++j) {
            tuple.back() = indexConstant(b, l, j);
            Value raw = tensor::ExtractOp::create(b, l, indices, tuple);
            coords.push_back(normalizeIndex(b, l, raw, dataType.getDimSize(j)));
          }
          llvm::append_range(coords, ivs.drop_front(q - 1));
          return coords;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Gather form: each cache element picks the update element written to it,
/// if any, else keeps the past value.
struct TensorScatterLowering : OpConversionPattern<TensorScatterOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TensorScatterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto resultType = convertedType(getTypeConverter(), op.getType());
    Value update = adaptor.getUpdate(), indices = adaptor.getWriteIndices();
    int64_t rank = resultType.getRank(), axis = op.getAxis();
    int64_t maxLength = resultType.getDimSize(axis);
    int64_t length = cast<RankedTensorType>(update.getType()).getDimSize(axis);
    bool circular = op.getCircular();
    Value result = buildIndexedGeneric(
        rewriter, op.getLoc(), resultType, adaptor.getPast(),
        rewriter.getMultiDimIdentityMap(rank),
        [&](OpBuilder &b, Location l, ValueRange args, ArrayRef<Value> ivs) {
          Value relative = ivs[axis];
          if (indices) {
            Value start = tensor::ExtractOp::create(b, l, indices, ivs[0]);
            start = arith::IndexCastOp::create(b, l, b.getIndexType(), start);
            relative = arith::SubIOp::create(b, l, relative, start);
          }
          if (circular && maxLength > 0) {
            // Floor modulo: positions before the start wrap around.
            Value size = indexConstant(b, l, maxLength);
            Value rem = arith::RemSIOp::create(b, l, relative, size);
            relative = arith::RemSIOp::create(
                b, l, arith::AddIOp::create(b, l, rem, size), size);
          }
          Value zero = indexConstant(b, l, 0);
          Value inRange = arith::AndIOp::create(
              b, l,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, relative,
                                    zero),
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, relative,
                                    indexConstant(b, l, length)));
          if (length == 0)
            return args[0];
          SmallVector<Value> coords(ivs);
          coords[axis] = arith::MaxSIOp::create(
              b, l,
              arith::MinSIOp::create(b, l, relative,
                                     indexConstant(b, l, length - 1)),
              zero);
          Value written = tensor::ExtractOp::create(b, l, update, coords);
          return arith::SelectOp::create(b, l, inRange, written, args[0])
              .getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Broadcasts, repeats and padding
//===----------------------------------------------------------------------===//

struct ExpandLowering : OpConversionPattern<ExpandOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ExpandOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType resultType =
        convertedType(getTypeConverter(), op.getType());
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType, adaptor.getInput(),
        [](OpBuilder &, Location, ValueRange args) { return args[0]; });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct TileLowering : OpConversionPattern<TileOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TileOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    RankedTensorType resultType =
        convertedType(getTypeConverter(), op.getType());
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t rank = inputType.getRank();
    if (rank == 0) {
      rewriter.replaceOp(op, input);
      return success();
    }
    // Broadcast into [r0, d0, r1, d1, ...] (the input read through the odd
    // dims), then collapse each (r, d) pair: result[i] = input[i mod d].
    SmallVector<int64_t> expandedShape;
    SmallVector<AffineExpr> inputExprs;
    SmallVector<ReassociationIndices> pairs;
    for (int64_t d = 0; d < rank; ++d) {
      expandedShape.push_back(op.getRepeats()[d]);
      expandedShape.push_back(inputType.getDimSize(d));
      inputExprs.push_back(getAffineDimExpr(2 * d + 1, ctx));
      pairs.push_back({2 * d, 2 * d + 1});
    }
    auto expandedType =
        RankedTensorType::get(expandedShape, resultType.getElementType());
    Value expanded =
        buildIndexedGeneric(rewriter, loc, expandedType, input,
                            AffineMap::get(2 * rank, 0, inputExprs, ctx),
                            [](OpBuilder &, Location, ValueRange args,
                               ArrayRef<Value>) { return args[0]; });
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(op, resultType,
                                                         expanded, pairs);
    return success();
  }
};

/// The source index along one padded dimension of size `dim` for the
/// result index `iv`, for the non-constant pad modes.
Value padSourceIndex(OpBuilder &b, Location loc, StringRef mode, Value iv,
                     int64_t low, int64_t dim) {
  Value j = arith::SubIOp::create(b, loc, iv, indexConstant(b, loc, low));
  Value zero = indexConstant(b, loc, 0);
  // ((j mod m) + m) mod m: a non-negative remainder.
  auto positiveMod = [&](Value v, int64_t m) -> Value {
    Value mv = indexConstant(b, loc, m);
    Value r = arith::RemSIOp::create(b, loc, v, mv);
    Value shifted = arith::AddIOp::create(b, loc, r, mv);
    return arith::RemSIOp::create(b, loc, shifted, mv);
  };
  if (mode == "edge") {
    Value clamped = arith::MaxSIOp::create(b, loc, j, zero);
    return arith::MinSIOp::create(b, loc, clamped,
                                  indexConstant(b, loc, dim - 1));
  }
  if (mode == "wrap")
    return positiveMod(j, dim);
  // reflect: mirror about the borders without repeating them, which is
  // periodic with period 2 * (dim - 1).
  if (dim == 1)
    return zero;
  int64_t period = 2 * (dim - 1);
  Value m = positiveMod(j, period);
  Value mirrored =
      arith::SubIOp::create(b, loc, indexConstant(b, loc, period), m);
  Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, m,
                                       indexConstant(b, loc, dim));
  return arith::SelectOp::create(b, loc, inside, m, mirrored);
}

struct PadLowering : OpConversionPattern<PadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType =
        convertedType(getTypeConverter(), op.getType());
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t rank = inputType.getRank();
    ArrayRef<int64_t> pads = op.getPads();
    StringRef mode = op.getMode();
    if (mode == "constant") {
      // One generic over the result: positions inside the input's window read
      // it, the others take the padding value.
      Value value = adaptor.getValue();
      Value result = buildIndexedGeneric(
          rewriter, loc, resultType, {}, {},
          [&](OpBuilder &b, Location l, ValueRange, ArrayRef<Value> ivs) {
            Value inside;
            SmallVector<Value> coords;
            for (int64_t d = 0; d < rank; ++d) {
              if (pads[d] == 0 && pads[d + rank] == 0) {
                coords.push_back(ivs[d]);
                continue;
              }
              Value j = arith::SubIOp::create(b, l, ivs[d],
                                              indexConstant(b, l, pads[d]));
              coords.push_back(j);
              // 0 <= j < dim as one unsigned comparison.
              Value in = arith::CmpIOp::create(
                  b, l, arith::CmpIPredicate::ult, j,
                  indexConstant(b, l, inputType.getDimSize(d)));
              inside = inside ? arith::AndIOp::create(b, l, inside, in) : in;
            }
            auto padValue = [&](OpBuilder &pb, Location pl) -> Value {
              if (!value)
                return arith::ConstantOp::create(
                    pb, pl, pb.getZeroAttr(resultType.getElementType()));
              auto valueType = cast<RankedTensorType>(value.getType());
              SmallVector<Value> zeros(valueType.getRank(),
                                       indexConstant(pb, pl, 0));
              return tensor::ExtractOp::create(pb, pl, value, zeros);
            };
            auto read = [&](OpBuilder &rb, Location rl) -> Value {
              return tensor::ExtractOp::create(rb, rl, input, coords);
            };
            if (!inside)
              return read(b, l);
            return buildIf(b, l, inside, read, padValue);
          });
      rewriter.replaceOp(op, result);
      return success();
    }
    Value result = buildIndexedGeneric(
        rewriter, loc, resultType, {}, {},
        [&](OpBuilder &b, Location l, ValueRange, ArrayRef<Value> ivs) {
          SmallVector<Value> coords;
          for (int64_t d = 0; d < rank; ++d) {
            if (pads[d] == 0 && pads[d + rank] == 0)
              coords.push_back(ivs[d]);
            else
              coords.push_back(padSourceIndex(b, l, mode, ivs[d], pads[d],
                                              inputType.getDimSize(d)));
          }
          return tensor::ExtractOp::create(b, l, input, coords).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Index-pattern ops: trilu, one_hot, eye, reverse_sequence
//===----------------------------------------------------------------------===//

struct TriluLowering : OpConversionPattern<TriluOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TriluOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType resultType =
        convertedType(getTypeConverter(), op.getType());
    int64_t rank = resultType.getRank(), k = op.getK();
    bool upper = op.getUpper();
    Value result = buildIndexedGeneric(
        rewriter, op.getLoc(), resultType, adaptor.getInput(),
        rewriter.getMultiDimIdentityMap(rank),
        [&](OpBuilder &b, Location l, ValueRange args, ArrayRef<Value> ivs) {
          Value diff =
              arith::SubIOp::create(b, l, ivs[rank - 1], ivs[rank - 2]);
          Value keep = arith::CmpIOp::create(b, l,
                                             upper ? arith::CmpIPredicate::sge
                                                   : arith::CmpIPredicate::sle,
                                             diff, indexConstant(b, l, k));
          Value zero =
              arith::ConstantOp::create(b, l, b.getZeroAttr(args[0].getType()));
          return arith::SelectOp::create(b, l, keep, args[0], zero).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// `v` (an element of the original type `original`) as i64, truncating
/// floats toward zero.
Value toI64(OpBuilder &b, Location loc, Value v, Type original) {
  Type i64 = b.getI64Type();
  Type type = v.getType();
  if (isa<FloatType>(type))
    return arith::FPToSIOp::create(b, loc, i64, v);
  unsigned width = type.getIntOrFloatBitWidth();
  if (width == 64)
    return v;
  if (width > 64)
    return arith::TruncIOp::create(b, loc, i64, v);
  if (original.isUnsignedInteger() || original.isInteger(1))
    return arith::ExtUIOp::create(b, loc, i64, v);
  return arith::ExtSIOp::create(b, loc, i64, v);
}

struct OneHotLowering : OpConversionPattern<OneHotOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OneHotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    RankedTensorType resultType =
        convertedType(getTypeConverter(), op.getType());
    int64_t axis = op.getAxis(), depth = op.getDepth();
    int64_t rank = resultType.getRank();
    Type original = op.getIndices().getType().getElementType();
    Value values = adaptor.getValues();
    Value off = tensor::ExtractOp::create(rewriter, loc, values,
                                          indexConstant(rewriter, loc, 0));
    Value on = tensor::ExtractOp::create(rewriter, loc, values,
                                         indexConstant(rewriter, loc, 1));
    SmallVector<AffineExpr> indexExprs;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis)
        indexExprs.push_back(getAffineDimExpr(d, ctx));
    Value result = buildIndexedGeneric(
        rewriter, loc, resultType, adaptor.getIndices(),
        AffineMap::get(rank, 0, indexExprs, ctx),
        [&](OpBuilder &b, Location l, ValueRange args, ArrayRef<Value> ivs) {
          Value index = toI64(b, l, args[0], original);
          Value zero = arith::ConstantOp::create(b, l, b.getI64IntegerAttr(0));
          Value negative = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::slt, index, zero);
          Value wrapped = arith::AddIOp::create(
              b, l, index,
              arith::ConstantOp::create(b, l, b.getI64IntegerAttr(depth)));
          index = arith::SelectOp::create(b, l, negative, wrapped, index);
          Value position =
              arith::IndexCastOp::create(b, l, b.getI64Type(), ivs[axis]);
          Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                            index, position);
          return arith::SelectOp::create(b, l, hit, on, off).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct EyeLowering : OpConversionPattern<EyeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(EyeOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType resultType =
        convertedType(getTypeConverter(), op.getType());
    Type element = resultType.getElementType();
    int64_t k = op.getK();
    Value result = buildIndexedGeneric(
        rewriter, op.getLoc(), resultType, {}, {},
        [&](OpBuilder &b, Location l, ValueRange, ArrayRef<Value> ivs) {
          Value diff = arith::SubIOp::create(b, l, ivs[1], ivs[0]);
          Value onDiagonal = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::eq, diff, indexConstant(b, l, k));
          TypedAttr oneAttr = isa<FloatType>(element)
                                  ? TypedAttr(b.getFloatAttr(element, 1.0))
                                  : TypedAttr(b.getIntegerAttr(element, 1));
          Value one = arith::ConstantOp::create(b, l, oneAttr);
          Value zero = arith::ConstantOp::create(b, l, b.getZeroAttr(element));
          return arith::SelectOp::create(b, l, onDiagonal, one, zero)
              .getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ReverseSequenceLowering : OpConversionPattern<ReverseSequenceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReverseSequenceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType resultType =
        convertedType(getTypeConverter(), op.getType());
    Value input = adaptor.getInput(), lens = adaptor.getSequenceLens();
    int64_t batchAxis = op.getBatchAxis(), timeAxis = op.getTimeAxis();
    int64_t steps = resultType.getDimSize(timeAxis);
    Value result = buildIndexedGeneric(
        rewriter, op.getLoc(), resultType, {}, {},
        [&](OpBuilder &b, Location l, ValueRange, ArrayRef<Value> ivs) {
          // Lengths come from runtime data: clamp them to [0, steps].
          Value rawLen = tensor::ExtractOp::create(b, l, lens, ivs[batchAxis]);
          Value len =
              arith::IndexCastOp::create(b, l, b.getIndexType(), rawLen);
          len = arith::MaxSIOp::create(b, l, len, indexConstant(b, l, 0));
          len = arith::MinSIOp::create(b, l, len, indexConstant(b, l, steps));
          Value t = ivs[timeAxis];
          Value reversed = arith::SubIOp::create(
              b, l, arith::SubIOp::create(b, l, len, indexConstant(b, l, 1)),
              t);
          Value inside =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, t, len);
          SmallVector<Value> coords(ivs);
          coords[timeAxis] = arith::SelectOp::create(b, l, inside, reversed, t);
          return tensor::ExtractOp::create(b, l, input, coords).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

struct ReshapeLowering : OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    if (!inputType.hasStaticShape() || !resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs static shapes");
    // Any static reshape is a collapse to 1-D followed by an expand; both are
    // views, so no data moves.
    auto all = [](int64_t rank) {
      ReassociationIndices indices;
      for (int64_t i = 0; i < rank; ++i)
        indices.push_back(i);
      return SmallVector<ReassociationIndices>{indices};
    };
    if (inputType.getRank() == 0 || resultType.getRank() == 0) {
      SmallVector<ReassociationIndices> none;
      Value result = inputType.getRank() == 0
                         ? tensor::ExpandShapeOp::create(
                               rewriter, loc, resultType, input, none)
                               .getResult()
                         : tensor::CollapseShapeOp::create(
                               rewriter, loc, resultType, input, none)
                               .getResult();
      rewriter.replaceOp(op, result);
      return success();
    }
    Value flat = input;
    if (inputType.getRank() != 1)
      flat = tensor::CollapseShapeOp::create(rewriter, loc, input,
                                             all(inputType.getRank()));
    Value result = flat;
    if (resultType.getRank() != 1)
      result = tensor::ExpandShapeOp::create(rewriter, loc, resultType, flat,
                                             all(resultType.getRank()));
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct TransposeLowering : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto resultType =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    Value init = createEmpty(rewriter, op.getLoc(), resultType);
    auto transpose = linalg::TransposeOp::create(
        rewriter, op.getLoc(), adaptor.getInput(), init, op.getPerm());
    rewriter.replaceOp(op, transpose->getResult(0));
    return success();
  }
};

} // namespace

void mlir::ridge::linalg_lowering::populateShapeToLinalgPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns
      .add<ReshapeLowering, TransposeLowering, ConcatLowering, SliceLowering,
           GatherLowering, GatherElementsLowering, GatherNDLowering,
           ScatterElementsLowering, ScatterNDLowering, ExpandLowering,
           TileLowering, PadLowering, TriluLowering, OneHotLowering,
           EyeLowering, ReverseSequenceLowering, TensorScatterLowering>(
          converter, ctx);
}
