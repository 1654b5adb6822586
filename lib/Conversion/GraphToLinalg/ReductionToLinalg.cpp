//===- ReductionToLinalg.cpp - reduction and normalization ops -------===//
//
// Lowering of the ridge reduction and normalization ops to linalg on tensors.
// Reductions accumulate narrow floats in f32 and keep the reduced dims out of
// the accumulator; `keepdims` results are tensor.expand_shape views of it.
//
//===----------------------------------------------------------------------===//

#include "GraphToLinalgCommon.h"

#include "mlir/Dialect/Tensor/Utils/Utils.h"

#include <limits>

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::linalg_lowering;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

using Combiner = function_ref<Value(OpBuilder &, Location, Value, Value)>;

/// Whether the ridge element type `type` is an unsigned integer: lowerings
/// see signless types and need the original one to pick unsigned arith.
bool isUnsigned(Type type) { return type.isUnsignedInteger(); }

/// Indexing map of a tensor that holds the dims of a rank-`rank` iteration
/// space except `dropped`.
AffineMap getDroppedDimsMap(int64_t numDims, int64_t rank,
                            ArrayRef<int64_t> dropped, MLIRContext *ctx) {
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < rank; ++i)
    if (!llvm::is_contained(dropped, i))
      exprs.push_back(getAffineDimExpr(i, ctx));
  return AffineMap::get(numDims, 0, exprs, ctx);
}

/// Shape of `type` without the dims in `axes`.
SmallVector<int64_t> getReducedShape(RankedTensorType type,
                                     ArrayRef<int64_t> axes) {
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (!llvm::is_contained(axes, i))
      shape.push_back(type.getDimSize(i));
  return shape;
}

/// `v` converted to the float type `type`, extending or truncating.
Value convertFloat(OpBuilder &b, Location loc, Value v, Type type) {
  if (v.getType() == type)
    return v;
  if (v.getType().getIntOrFloatBitWidth() < type.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, type, v);
  return arith::TruncFOp::create(b, loc, type, v);
}

/// Reduces `input` along `axes` with `combine` into a tensor of `accType`
/// without the reduced dims, starting from `initValue`. Float elements are
/// converted to `accType` before combining.
Value buildReduction(OpBuilder &b, Location loc, Value input,
                     ArrayRef<int64_t> axes, Type accType, TypedAttr initValue,
                     Combiner combine) {
  MLIRContext *ctx = b.getContext();
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t rank = inputType.getRank();
  SmallVector<utils::IteratorType> iterators;
  for (int64_t i = 0; i < rank; ++i)
    iterators.push_back(llvm::is_contained(axes, i)
                            ? utils::IteratorType::reduction
                            : utils::IteratorType::parallel);
  auto reducedType =
      RankedTensorType::get(getReducedShape(inputType, axes), accType);
  Value init = createFilled(b, loc, reducedType, initValue);
  AffineMap inMap = b.getMultiDimIdentityMap(rank);
  AffineMap outMap = getDroppedDimsMap(rank, rank, axes, ctx);
  return linalg::GenericOp::create(
             b, loc, reducedType, input, init,
             ArrayRef<AffineMap>{inMap, outMap}, iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value v = isa<FloatType>(accType)
                             ? convertFloat(nb, nloc, args[0], accType)
                             : args[0];
               linalg::YieldOp::create(nb, nloc, combine(nb, nloc, args[1], v));
             })
      .getResult(0);
}

/// `value` (the reduced dims dropped) viewed with size-1 dims at `axes`, as
/// `target`. No-op when `axes` is empty.
Value expandReducedDims(OpBuilder &b, Location loc, Value value,
                        RankedTensorType target, ArrayRef<int64_t> axes) {
  if (axes.empty())
    return value;
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (int64_t i = 0; i < target.getRank(); ++i) {
    if (llvm::is_contained(axes, i)) {
      // A reduced dim joins the group before it, or the first one.
      if (groups.empty())
        pending.push_back(i);
      else
        groups.back().push_back(i);
      continue;
    }
    pending.push_back(i);
    groups.push_back(pending);
    pending.clear();
  }
  return tensor::ExpandShapeOp::create(b, loc, target, value, groups);
}

TypedAttr getZero(OpBuilder &b, Type type) {
  if (isa<FloatType>(type))
    return b.getFloatAttr(type, 0.0);
  return b.getIntegerAttr(type, 0);
}

/// The value no element can exceed (`highest`) or fall below, for the ridge
/// element type `original` whose signless form is `type`.
TypedAttr getExtreme(OpBuilder &b, Type type, Type original, bool highest) {
  if (auto f = dyn_cast<FloatType>(type))
    return b.getFloatAttr(
        type, APFloat::getInf(f.getFloatSemantics(), /*Negative=*/!highest));
  unsigned width = type.getIntOrFloatBitWidth();
  APInt value =
      isUnsigned(original)
          ? (highest ? APInt::getMaxValue(width) : APInt::getMinValue(width))
          : (highest ? APInt::getSignedMaxValue(width)
                     : APInt::getSignedMinValue(width));
  return b.getIntegerAttr(type, value);
}

Value createAdd(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::AddFOp::create(b, loc, x, y);
  return arith::AddIOp::create(b, loc, x, y);
}

Value createMul(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::MulFOp::create(b, loc, x, y);
  return arith::MulIOp::create(b, loc, x, y);
}

Value createIndex(OpBuilder &b, Location loc, int64_t dim) {
  Value index = linalg::IndexOp::create(b, loc, dim);
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
}

RankedTensorType convertType(const TypeConverter *converter, Type type) {
  return cast<RankedTensorType>(converter->convertType(type));
}

/// Row maps for ops working along one axis: the identity over the input's
/// dims, and the map of a tensor without `axis`.
struct AxisMaps {
  AffineMap identity, row;
  SmallVector<utils::IteratorType> parallel;
};
AxisMaps getAxisMaps(OpBuilder &b, int64_t rank, int64_t axis) {
  AxisMaps maps;
  maps.identity = b.getMultiDimIdentityMap(rank);
  maps.row = getDroppedDimsMap(rank, rank, {axis}, b.getContext());
  maps.parallel.assign(rank, utils::IteratorType::parallel);
  return maps;
}

//===----------------------------------------------------------------------===//
// Reduce
//===----------------------------------------------------------------------===//

struct ReduceLowering : OpConversionPattern<ReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    Type original = op.getInput().getType().getElementType();
    Type element = inputType.getElementType();
    Type acc = getAccumulatorType(element);
    bool isFloat = isa<FloatType>(acc);
    bool isUns = isUnsigned(original);
    ArrayRef<int64_t> axes = op.getAxes();
    ReduceKind kind = op.getKind();

    TypedAttr init;
    std::function<Value(OpBuilder &, Location, Value, Value)> combine;
    switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      init = getZero(rewriter, acc);
      combine = createAdd;
      break;
    case ReduceKind::Prod:
      init = isFloat ? TypedAttr(rewriter.getFloatAttr(acc, 1.0))
                     : TypedAttr(rewriter.getIntegerAttr(acc, 1));
      combine = createMul;
      break;
    case ReduceKind::Max:
      init = getExtreme(rewriter, acc, original, /*highest=*/false);
      combine = [=](OpBuilder &b, Location l, Value x, Value y) -> Value {
        if (isFloat)
          return arith::MaximumFOp::create(b, l, x, y);
        if (isUns)
          return arith::MaxUIOp::create(b, l, x, y);
        return arith::MaxSIOp::create(b, l, x, y);
      };
      break;
    case ReduceKind::Min:
      init = getExtreme(rewriter, acc, original, /*highest=*/true);
      combine = [=](OpBuilder &b, Location l, Value x, Value y) -> Value {
        if (isFloat)
          return arith::MinimumFOp::create(b, l, x, y);
        if (isUns)
          return arith::MinUIOp::create(b, l, x, y);
        return arith::MinSIOp::create(b, l, x, y);
      };
      break;
    }
    Value reduced =
        buildReduction(rewriter, loc, input, axes, acc, init, combine);

    // Finish: divide by the count for mean and return to the element type.
    int64_t count = 1;
    for (int64_t axis : axes)
      count *= inputType.getDimSize(axis);
    auto reducedType = cast<RankedTensorType>(reduced.getType());
    if (kind == ReduceKind::Mean || acc != element) {
      auto resultType = RankedTensorType::get(reducedType.getShape(), element);
      reduced = buildElementwise(
          rewriter, loc, resultType, reduced,
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            Value v = args[0];
            if (kind == ReduceKind::Mean) {
              if (isFloat) {
                Value n = arith::ConstantOp::create(
                    b, l, b.getFloatAttr(acc, static_cast<double>(count)));
                v = arith::DivFOp::create(b, l, v, n);
              } else {
                Value n = arith::ConstantOp::create(
                    b, l, b.getIntegerAttr(acc, count));
                v = isUns ? arith::DivUIOp::create(b, l, v, n).getResult()
                          : arith::DivSIOp::create(b, l, v, n).getResult();
              }
            }
            return isFloat ? truncateTo(b, l, v, element) : v;
          });
    }
    if (op.getKeepdims())
      reduced = expandReducedDims(rewriter, loc, reduced,
                                  convertType(getTypeConverter(), op.getType()),
                                  axes);
    rewriter.replaceOp(op, reduced);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// ArgReduce, Hardmax
//===----------------------------------------------------------------------===//

/// Position (i64) of the extreme element along `axis`, the axis dropped.
Value buildArgReduction(OpBuilder &b, Location loc, Value input, Type original,
                        int64_t axis, bool isMax, bool selectLast) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  Type element = type.getElementType();
  Type acc = getAccumulatorType(element);
  bool isFloat = isa<FloatType>(acc);
  bool isUns = isUnsigned(original);
  SmallVector<int64_t> reducedShape = getReducedShape(type, {axis});
  auto valueType = RankedTensorType::get(reducedShape, acc);
  auto indexType = RankedTensorType::get(reducedShape, b.getI64Type());
  Value values = createFilled(b, loc, valueType,
                              getExtreme(b, acc, original, /*highest=*/!isMax));
  Value indices = createFilled(b, loc, indexType, b.getI64IntegerAttr(0));
  AxisMaps maps = getAxisMaps(b, rank, axis);
  SmallVector<utils::IteratorType> iterators = maps.parallel;
  iterators[axis] = utils::IteratorType::reduction;
  // Ties keep the earlier position (strict compare) unless the last one is
  // wanted. The identity start value loses every strict compare, so an
  // all-extreme row still answers 0 (or the last position).
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{valueType, indexType}, input,
      ValueRange{values, indices},
      ArrayRef<AffineMap>{maps.identity, maps.row, maps.row}, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value v = isFloat ? extendTo(nb, l, args[0], acc) : args[0];
        Value better;
        if (isFloat) {
          auto pred = isMax ? (selectLast ? arith::CmpFPredicate::OGE
                                          : arith::CmpFPredicate::OGT)
                            : (selectLast ? arith::CmpFPredicate::OLE
                                          : arith::CmpFPredicate::OLT);
          better = arith::CmpFOp::create(nb, l, pred, v, args[1]);
        } else {
          arith::CmpIPredicate pred;
          if (isMax)
            pred = selectLast ? (isUns ? arith::CmpIPredicate::uge
                                       : arith::CmpIPredicate::sge)
                              : (isUns ? arith::CmpIPredicate::ugt
                                       : arith::CmpIPredicate::sgt);
          else
            pred = selectLast ? (isUns ? arith::CmpIPredicate::ule
                                       : arith::CmpIPredicate::sle)
                              : (isUns ? arith::CmpIPredicate::ult
                                       : arith::CmpIPredicate::slt);
          better = arith::CmpIOp::create(nb, l, pred, v, args[1]);
        }
        Value index = createIndex(nb, l, axis);
        Value newValue = arith::SelectOp::create(nb, l, better, v, args[1]);
        Value newIndex = arith::SelectOp::create(nb, l, better, index, args[2]);
        linalg::YieldOp::create(nb, l, ValueRange{newValue, newIndex});
      });
  return generic.getResult(1);
}

struct ArgReduceLowering : OpConversionPattern<ArgReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ArgReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    int64_t axis = op.getAxis();
    Value indices = buildArgReduction(
        rewriter, op.getLoc(), adaptor.getInput(),
        op.getInput().getType().getElementType(), axis,
        op.getKind() == ArgReduceKind::ArgMax, op.getSelectLastIndex());
    if (op.getKeepdims())
      indices = expandReducedDims(rewriter, op.getLoc(), indices, op.getType(),
                                  {axis});
    rewriter.replaceOp(op, indices);
    return success();
  }
};

struct HardmaxLowering : OpConversionPattern<HardmaxOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(HardmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t axis = op.getAxis();
    auto type = cast<RankedTensorType>(adaptor.getInput().getType());
    Value indices = buildArgReduction(rewriter, loc, adaptor.getInput(),
                                      op.getInput().getType().getElementType(),
                                      axis, /*isMax=*/true,
                                      /*selectLast=*/false);
    AxisMaps maps = getAxisMaps(rewriter, type.getRank(), axis);
    Type element = type.getElementType();
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, type, indices, createEmpty(rewriter, loc, type),
            ArrayRef<AffineMap>{maps.row, maps.identity}, maps.parallel,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value hit =
                  arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                        createIndex(b, l, axis), args[0]);
              TypedAttr one = isa<FloatType>(element)
                                  ? TypedAttr(b.getFloatAttr(element, 1.0))
                                  : TypedAttr(b.getIntegerAttr(element, 1));
              Value oneV = arith::ConstantOp::create(b, l, one);
              Value zeroV =
                  arith::ConstantOp::create(b, l, getZero(b, element));
              linalg::YieldOp::create(
                  b, l,
                  arith::SelectOp::create(b, l, hit, oneV, zeroV).getResult());
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Softmax, LogSoftmax
//===----------------------------------------------------------------------===//

/// softmax (or, with `isLog`, log-softmax) of `input` along `axis`.
Value buildSoftmax(OpBuilder &b, Location loc, Value input, int64_t axis,
                   bool isLog) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  Type element = type.getElementType();
  Type acc = getAccumulatorType(element);
  auto accFloat = cast<FloatType>(acc);

  Value rowMax = buildReduction(
      b, loc, input, {axis}, acc,
      b.getFloatAttr(acc, APFloat::getInf(accFloat.getFloatSemantics(),
                                          /*Negative=*/true)),
      [](OpBuilder &nb, Location l, Value a, Value v) -> Value {
        return arith::MaximumFOp::create(nb, l, a, v);
      });
  // The reduced operands broadcast back along `axis`.
  AxisMaps maps = getAxisMaps(b, rank, axis);
  auto accType = RankedTensorType::get(type.getShape(), acc);
  Value exps =
      linalg::GenericOp::create(
          b, loc, accType, ValueRange{input, rowMax},
          createEmpty(b, loc, accType),
          ArrayRef<AffineMap>{maps.identity, maps.row, maps.identity},
          maps.parallel,
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value x = extendTo(nb, l, args[0], acc);
            Value shifted = arith::SubFOp::create(nb, l, x, args[1]);
            linalg::YieldOp::create(
                nb, l, math::ExpOp::create(nb, l, shifted).getResult());
          })
          .getResult(0);
  Value rowSum =
      buildReduction(b, loc, exps, {axis}, acc, b.getFloatAttr(acc, 0.0),
                     [](OpBuilder &nb, Location l, Value a, Value v) -> Value {
                       return arith::AddFOp::create(nb, l, a, v);
                     });
  if (!isLog)
    return linalg::GenericOp::create(
               b, loc, type, ValueRange{exps, rowSum},
               createEmpty(b, loc, type),
               ArrayRef<AffineMap>{maps.identity, maps.row, maps.identity},
               maps.parallel,
               [&](OpBuilder &nb, Location l, ValueRange args) {
                 Value q = arith::DivFOp::create(nb, l, args[0], args[1]);
                 linalg::YieldOp::create(nb, l, truncateTo(nb, l, q, element));
               })
        .getResult(0);
  // x - max - log(sum): never takes the log of an underflowed exp.
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{input, rowMax, rowSum},
             createEmpty(b, loc, type),
             ArrayRef<AffineMap>{maps.identity, maps.row, maps.row,
                                 maps.identity},
             maps.parallel,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value x = extendTo(nb, l, args[0], acc);
               Value shifted = arith::SubFOp::create(nb, l, x, args[1]);
               Value logSum = math::LogOp::create(nb, l, args[2]);
               Value r = arith::SubFOp::create(nb, l, shifted, logSum);
               linalg::YieldOp::create(nb, l, truncateTo(nb, l, r, element));
             })
      .getResult(0);
}

struct SoftmaxLowering : OpConversionPattern<SoftmaxOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SoftmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, buildSoftmax(rewriter, op.getLoc(),
                                        adaptor.getInput(), op.getAxis(),
                                        /*isLog=*/false));
    return success();
  }
};

struct LogSoftmaxLowering : OpConversionPattern<LogSoftmaxOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LogSoftmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, buildSoftmax(rewriter, op.getLoc(),
                                        adaptor.getInput(), op.getAxis(),
                                        /*isLog=*/true));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

struct LayerNormLowering : OpConversionPattern<LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    int64_t rank = type.getRank(), axis = op.getAxis();
    Type element = type.getElementType();
    Type stash = op.getMean().getType().getElementType();
    // Statistics in the stash precision, but never below f32.
    Type acc = getAccumulatorType(stash);
    SmallVector<int64_t> axes;
    int64_t count = 1;
    for (int64_t i = axis; i < rank; ++i) {
      axes.push_back(i);
      count *= type.getDimSize(i);
    }
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    AffineMap rowMap = getDroppedDimsMap(rank, rank, axes, ctx);
    auto rowType = RankedTensorType::get(getReducedShape(type, axes), acc);
    auto convert = [&](OpBuilder &b, Location l, Value v) -> Value {
      return convertFloat(b, l, v, acc);
    };
    auto constant = [&](OpBuilder &b, Location l, double v) -> Value {
      return arith::ConstantOp::create(b, l, b.getFloatAttr(acc, v));
    };

    // mean = sum(x) / count.
    Value sum = buildReduction(
        rewriter, loc, input, axes, acc, rewriter.getFloatAttr(acc, 0.0),
        [&](OpBuilder &b, Location l, Value a, Value v) -> Value {
          return arith::AddFOp::create(b, l, a, v);
        });
    Value mean = buildElementwise(
        rewriter, loc, rowType, sum,
        [&](OpBuilder &b, Location l, ValueRange args) {
          return arith::DivFOp::create(b, l, args[0], constant(b, l, count));
        });
    // inv_std_dev = 1 / sqrt(sum((x - mean)^2) / count + epsilon).
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    for (int64_t i : axes)
      iterators[i] = utils::IteratorType::reduction;
    Value squares =
        linalg::GenericOp::create(
            rewriter, loc, rowType, ValueRange{input, mean},
            createFilled(rewriter, loc, rowType,
                         rewriter.getFloatAttr(acc, 0.0)),
            ArrayRef<AffineMap>{identity, rowMap, rowMap}, iterators,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value d =
                  arith::SubFOp::create(b, l, convert(b, l, args[0]), args[1]);
              Value sq = arith::MulFOp::create(b, l, d, d);
              linalg::YieldOp::create(
                  b, l, arith::AddFOp::create(b, l, args[2], sq).getResult());
            })
            .getResult(0);
    double epsilon = op.getEpsilon().convertToDouble();
    Value invStd = buildElementwise(
        rewriter, loc, rowType, squares,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value var =
              arith::DivFOp::create(b, l, args[0], constant(b, l, count));
          Value sum = arith::AddFOp::create(b, l, var, constant(b, l, epsilon));
          // 1 / sqrt rather than math.rsqrt, which has no CPU libm symbol.
          return arith::DivFOp::create(b, l, constant(b, l, 1.0),
                                       math::SqrtOp::create(b, l, sum));
        });

    // y = (x - mean) * inv_std_dev * scale + bias.
    SmallVector<Value> inputs{input, mean, invStd, adaptor.getScale()};
    SmallVector<AffineMap> maps{identity, rowMap, rowMap};
    maps.push_back(
        getBroadcastMap(cast<RankedTensorType>(adaptor.getScale().getType()),
                        type.getShape(), ctx));
    if (Value bias = adaptor.getBias()) {
      inputs.push_back(bias);
      maps.push_back(getBroadcastMap(cast<RankedTensorType>(bias.getType()),
                                     type.getShape(), ctx));
    }
    maps.push_back(identity);
    Value y =
        linalg::GenericOp::create(
            rewriter, loc, type, inputs, createEmpty(rewriter, loc, type), maps,
            SmallVector<utils::IteratorType>(rank,
                                             utils::IteratorType::parallel),
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value d =
                  arith::SubFOp::create(b, l, convert(b, l, args[0]), args[1]);
              Value r = arith::MulFOp::create(b, l, d, args[2]);
              r = arith::MulFOp::create(b, l, r, convert(b, l, args[3]));
              if (args.size() > 5)
                r = arith::AddFOp::create(b, l, r, convert(b, l, args[4]));
              linalg::YieldOp::create(b, l, convertFloat(b, l, r, element));
            })
            .getResult(0);

    // The statistics in the stash type, normalized dims kept as size 1.
    auto toStash = [&](Value row, Type resultType) -> Value {
      auto statType = RankedTensorType::get(rowType.getShape(), stash);
      if (stash != acc)
        row = buildElementwise(rewriter, loc, statType, row,
                               [&](OpBuilder &b, Location l, ValueRange args) {
                                 return truncateTo(b, l, args[0], stash);
                               });
      return expandReducedDims(rewriter, loc, row,
                               cast<RankedTensorType>(resultType), axes);
    };
    rewriter.replaceOp(op, {y, toStash(mean, op.getMean().getType()),
                            toStash(invStd, op.getInvStdDev().getType())});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// LRN
//===----------------------------------------------------------------------===//

struct LRNLowering : OpConversionPattern<LRNOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LRNOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    int64_t rank = type.getRank(), size = op.getSize();
    Type element = type.getElementType();
    Type acc = getAccumulatorType(element);
    auto accType = RankedTensorType::get(type.getShape(), acc);

    // sum over the window w of x[n, c - lo + w, ...]^2, skipping channels
    // outside [0, C). The window operand only gives the w loop its bound, as
    // in linalg's pooling ops; x is read with tensor.extract.
    int64_t lo = (size - 1) / 2, channels = type.getDimSize(1);
    AffineMap outMap =
        AffineMap::getMultiDimIdentityMap(rank + 1, ctx).getMajorSubMap(rank);
    AffineMap windowMap =
        AffineMap::get(rank + 1, 0, getAffineDimExpr(rank, ctx));
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    Value window = tensor::EmptyOp::create(rewriter, loc, {size}, acc);
    Value sums =
        linalg::GenericOp::create(
            rewriter, loc, accType, window,
            createFilled(rewriter, loc, accType, rewriter.getFloatAttr(acc, 0)),
            ArrayRef<AffineMap>{windowMap, outMap}, iterators,
            [&](OpBuilder &b, Location l, ValueRange args) {
              auto index = [&](int64_t v) -> Value {
                return arith::ConstantIndexOp::create(b, l, v);
              };
              Value c =
                  arith::AddIOp::create(b, l, linalg::IndexOp::create(b, l, 1),
                                        linalg::IndexOp::create(b, l, rank));
              c = arith::SubIOp::create(b, l, c, index(lo));
              Value inside = arith::AndIOp::create(
                  b, l,
                  arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, c,
                                        index(0)),
                  arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, c,
                                        index(channels)));
              Value clamped =
                  arith::SelectOp::create(b, l, inside, c, index(0));
              SmallVector<Value> indices;
              for (int64_t i = 0; i < rank; ++i)
                indices.push_back(
                    i == 1 ? clamped
                           : linalg::IndexOp::create(b, l, i).getResult());
              Value x = extendTo(
                  b, l, tensor::ExtractOp::create(b, l, input, indices), acc);
              Value sq = arith::MulFOp::create(b, l, x, x);
              Value zero =
                  arith::ConstantOp::create(b, l, b.getFloatAttr(acc, 0));
              Value term = arith::SelectOp::create(b, l, inside, sq, zero);
              linalg::YieldOp::create(
                  b, l, arith::AddFOp::create(b, l, args[1], term).getResult());
            })
            .getResult(0);

    // y = x / (bias + alpha / size * sum) ^ beta.
    double alpha = op.getAlpha().convertToDouble();
    double beta = op.getBeta().convertToDouble();
    double bias = op.getBias().convertToDouble();
    Value result = buildElementwise(
        rewriter, loc, type, ValueRange{input, sums},
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          auto c = [&](double v) -> Value {
            return arith::ConstantOp::create(b, l, b.getFloatAttr(acc, v));
          };
          Value scaled = arith::MulFOp::create(b, l, args[1], c(alpha / size));
          Value base = arith::AddFOp::create(b, l, scaled, c(bias));
          Value denom = math::PowFOp::create(b, l, base, c(beta));
          Value q =
              arith::DivFOp::create(b, l, extendTo(b, l, args[0], acc), denom);
          return truncateTo(b, l, q, element);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// CumSum
//===----------------------------------------------------------------------===//

/// CumSum and CumProd: the same scan with another combiner and identity.
template <typename OpTy, bool IsProduct>
struct CumulativeLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = this->getContext();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    int64_t rank = type.getRank(), axis = op.getAxis();
    Type element = type.getElementType();
    Type acc = getAccumulatorType(element);
    auto accType = RankedTensorType::get(type.getShape(), acc);
    bool exclusive = op.getExclusive(), reverse = op.getReverse();

    // out[..., i, ...] = sum (product) over j of (j included for i) ?
    // x[..., j, ...] : 0 (1), with j an extra reduction loop: O(n^2) along
    // the axis, no loop-carried state.
    auto identity = [&](OpBuilder &b) -> TypedAttr {
      if (!IsProduct)
        return getZero(b, acc);
      if (isa<FloatType>(acc))
        return b.getFloatAttr(acc, 1.0);
      return b.getIntegerAttr(acc, 1);
    };
    SmallVector<AffineExpr> inExprs;
    for (int64_t i = 0; i < rank; ++i)
      inExprs.push_back(getAffineDimExpr(i == axis ? rank : i, ctx));
    AffineMap inMap = AffineMap::get(rank + 1, 0, inExprs, ctx);
    AffineMap outMap =
        AffineMap::getMultiDimIdentityMap(rank + 1, ctx).getMajorSubMap(rank);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    arith::CmpIPredicate pred = reverse
                                    ? (exclusive ? arith::CmpIPredicate::sgt
                                                 : arith::CmpIPredicate::sge)
                                    : (exclusive ? arith::CmpIPredicate::slt
                                                 : arith::CmpIPredicate::sle);
    Value sums =
        linalg::GenericOp::create(
            rewriter, loc, accType, input,
            createFilled(rewriter, loc, accType, identity(rewriter)),
            ArrayRef<AffineMap>{inMap, outMap}, iterators,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value i = linalg::IndexOp::create(b, l, axis);
              Value j = linalg::IndexOp::create(b, l, rank);
              Value take = arith::CmpIOp::create(b, l, pred, j, i);
              Value x =
                  isa<FloatType>(acc) ? extendTo(b, l, args[0], acc) : args[0];
              Value unit = arith::ConstantOp::create(b, l, identity(b));
              Value term = arith::SelectOp::create(b, l, take, x, unit);
              linalg::YieldOp::create(b, l,
                                      IsProduct
                                          ? createMul(b, l, args[1], term)
                                          : createAdd(b, l, args[1], term));
            })
            .getResult(0);
    if (acc != element)
      sums = buildElementwise(rewriter, loc, type, sums,
                              [&](OpBuilder &b, Location l, ValueRange args) {
                                return truncateTo(b, l, args[0], element);
                              });
    rewriter.replaceOp(op, sums);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// TopK
//===----------------------------------------------------------------------===//

/// Up to this k, TopK selects one element per pass over the axis (O(k * n));
/// above it, it ranks all elements against each other (O(n^2)).
constexpr int64_t kMaxTopKSelectionPasses = 32;

/// The order TopK outputs elements in: `a` (value, position) comes before `b`
/// if its value is better, or equal at a lower position.
Value buildPrecedes(OpBuilder &b, Location l, Value va, Value ia, Value vb,
                    Value ib, bool largest, bool isUns) {
  Value better, equal;
  if (isa<FloatType>(va.getType())) {
    better = arith::CmpFOp::create(
        b, l, largest ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT,
        va, vb);
    equal = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, va, vb);
  } else {
    arith::CmpIPredicate pred =
        largest
            ? (isUns ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
            : (isUns ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt);
    better = arith::CmpIOp::create(b, l, pred, va, vb);
    equal = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, va, vb);
  }
  Value earlier =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, ia, ib);
  return arith::OrIOp::create(b, l, better,
                              arith::AndIOp::create(b, l, equal, earlier));
}

/// TopK for small k: pass r picks the first element (in output order) that
/// comes after the one pass r - 1 picked; a last generic gathers the k
/// picks into the output slots.
std::pair<Value, Value> buildTopKByPasses(OpBuilder &b, Location loc,
                                          Value input, Type original,
                                          int64_t axis, int64_t k,
                                          bool largest) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  Type element = type.getElementType();
  bool isUns = isUnsigned(original);
  Type i64 = b.getI64Type();
  AxisMaps maps = getAxisMaps(b, rank, axis);
  SmallVector<int64_t> rowShape = getReducedShape(type, {axis});
  auto rowValueType = RankedTensorType::get(rowShape, element);
  auto rowIndexType = RankedTensorType::get(rowShape, i64);
  SmallVector<utils::IteratorType> iterators = maps.parallel;
  iterators[axis] = utils::IteratorType::reduction;

  SmallVector<Value> values, indices;
  for (int64_t r = 0; r < k; ++r) {
    SmallVector<Value> inputs{input};
    SmallVector<AffineMap> indexing{maps.identity};
    if (r > 0) {
      inputs.append({values.back(), indices.back()});
      indexing.append({maps.row, maps.row});
    }
    indexing.append({maps.row, maps.row});
    // Start from a sentinel every element precedes: the worst value at an
    // impossible position.
    Value initValue =
        createFilled(b, loc, rowValueType,
                     getExtreme(b, element, original, /*highest=*/!largest));
    Value initIndex =
        createFilled(b, loc, rowIndexType,
                     b.getI64IntegerAttr(std::numeric_limits<int64_t>::max()));
    auto pass = linalg::GenericOp::create(
        b, loc, TypeRange{rowValueType, rowIndexType}, inputs,
        ValueRange{initValue, initIndex}, indexing, iterators,
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Value x = args[0], i = createIndex(nb, l, axis);
          Value accValue = args[args.size() - 2];
          Value accIndex = args.back();
          Value take =
              buildPrecedes(nb, l, x, i, accValue, accIndex, largest, isUns);
          if (r > 0)
            take = arith::AndIOp::create(
                nb, l, take,
                buildPrecedes(nb, l, args[1], args[2], x, i, largest, isUns));
          linalg::YieldOp::create(
              nb, l,
              ValueRange{arith::SelectOp::create(nb, l, take, x, accValue),
                         arith::SelectOp::create(nb, l, take, i, accIndex)});
        });
    values.push_back(pass.getResult(0));
    indices.push_back(pass.getResult(1));
  }

  SmallVector<int64_t> outShape(type.getShape());
  outShape[axis] = k;
  auto valuesType = RankedTensorType::get(outShape, element);
  auto indicesType = RankedTensorType::get(outShape, i64);
  if (k == 0)
    return {createEmpty(b, loc, valuesType), createEmpty(b, loc, indicesType)};
  SmallVector<Value> inputs(values);
  inputs.append(indices);
  SmallVector<AffineMap> indexing(2 * k, maps.row);
  indexing.append({maps.identity, maps.identity});
  auto gather = linalg::GenericOp::create(
      b, loc, TypeRange{valuesType, indicesType}, inputs,
      ValueRange{createEmpty(b, loc, valuesType),
                 createEmpty(b, loc, indicesType)},
      indexing, maps.parallel, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value slot = linalg::IndexOp::create(nb, l, axis);
        Value v = args[k - 1], i = args[2 * k - 1];
        for (int64_t r = k - 2; r >= 0; --r) {
          Value hit =
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, slot,
                                    arith::ConstantIndexOp::create(nb, l, r));
          v = arith::SelectOp::create(nb, l, hit, args[r], v);
          i = arith::SelectOp::create(nb, l, hit, args[k + r], i);
        }
        linalg::YieldOp::create(nb, l, ValueRange{v, i});
      });
  return {gather.getResult(0), gather.getResult(1)};
}

struct TopKLowering : OpConversionPattern<TopKOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TopKOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    int64_t rank = type.getRank(), axis = op.getAxis();
    Type element = type.getElementType();
    Type original = op.getInput().getType().getElementType();
    bool isFloat = isa<FloatType>(element);
    bool isUns = isUnsigned(original), largest = op.getLargest();
    Type i64 = rewriter.getI64Type();
    int64_t k = op.getK();
    if (k <= kMaxTopKSelectionPasses) {
      auto [values, indices] =
          buildTopKByPasses(rewriter, loc, input, original, axis, k, largest);
      rewriter.replaceOp(op, {values, indices});
      return success();
    }

    // Two loops along the axis: `own` (dim `axis`) and `other` (dim `rank`).
    SmallVector<AffineExpr> otherExprs;
    for (int64_t i = 0; i < rank; ++i)
      otherExprs.push_back(getAffineDimExpr(i == axis ? rank : i, ctx));
    AffineMap otherMap = AffineMap::get(rank + 1, 0, otherExprs, ctx);
    AffineMap ownMap =
        AffineMap::getMultiDimIdentityMap(rank + 1, ctx).getMajorSubMap(rank);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);

    // rank[own] = number of elements that come before it in the order
    // (better value, or equal value at a lower position). Ranks are unique.
    auto rankType = RankedTensorType::get(type.getShape(), i64);
    Value ranks =
        linalg::GenericOp::create(
            rewriter, loc, rankType, ValueRange{input, input},
            createFilled(rewriter, loc, rankType,
                         rewriter.getI64IntegerAttr(0)),
            ArrayRef<AffineMap>{ownMap, otherMap, ownMap}, iterators,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value own = args[0], other = args[1];
              Value better, equal;
              if (isFloat) {
                better =
                    arith::CmpFOp::create(b, l,
                                          largest ? arith::CmpFPredicate::OGT
                                                  : arith::CmpFPredicate::OLT,
                                          other, own);
                equal = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                              other, own);
              } else {
                arith::CmpIPredicate pred =
                    largest ? (isUns ? arith::CmpIPredicate::ugt
                                     : arith::CmpIPredicate::sgt)
                            : (isUns ? arith::CmpIPredicate::ult
                                     : arith::CmpIPredicate::slt);
                better = arith::CmpIOp::create(b, l, pred, other, own);
                equal = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                              other, own);
              }
              Value earlier =
                  arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult,
                                        linalg::IndexOp::create(b, l, rank),
                                        linalg::IndexOp::create(b, l, axis));
              Value before = arith::OrIOp::create(
                  b, l, better, arith::AndIOp::create(b, l, equal, earlier));
              Value inc = arith::ExtUIOp::create(b, l, i64, before);
              linalg::YieldOp::create(
                  b, l, arith::AddIOp::create(b, l, args[2], inc).getResult());
            })
            .getResult(0);

    // out[slot] = the element whose rank is `slot` (dim `axis` now counts
    // slots 0..k-1; dim `rank` runs over the input positions).
    auto valuesType = convertType(getTypeConverter(), op.getValues().getType());
    auto indicesType = op.getIndices().getType();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{valuesType, indicesType},
        ValueRange{input, ranks},
        ValueRange{
            createFilled(rewriter, loc, valuesType, getZero(rewriter, element)),
            createFilled(rewriter, loc, indicesType,
                         rewriter.getI64IntegerAttr(0))},
        ArrayRef<AffineMap>{otherMap, otherMap, ownMap, ownMap}, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                            args[1], createIndex(b, l, axis));
          Value v = arith::SelectOp::create(b, l, hit, args[0], args[2]);
          Value i = arith::SelectOp::create(b, l, hit, createIndex(b, l, rank),
                                            args[3]);
          linalg::YieldOp::create(b, l, ValueRange{v, i});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//

struct EinsumLowering : OpConversionPattern<EinsumOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(EinsumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<AffineMap> maps;
    SmallVector<int64_t> loopSizes;
    int64_t numOutputLoops;
    if (failed(op.getLoopStructure(maps, loopSizes, numOutputLoops)))
      return rewriter.notifyMatchFailure(op, "invalid einsum equation");
    auto type = convertType(getTypeConverter(), op.getType());
    Type element = type.getElementType();
    Type acc = getAccumulatorType(element);
    auto accType = RankedTensorType::get(type.getShape(), acc);
    SmallVector<utils::IteratorType> iterators;
    for (int64_t i = 0; i < static_cast<int64_t>(loopSizes.size()); ++i)
      iterators.push_back(i < numOutputLoops ? utils::IteratorType::parallel
                                             : utils::IteratorType::reduction);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, accType, adaptor.getInputs(),
            createFilled(rewriter, loc, accType, getZero(rewriter, acc)), maps,
            iterators,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value product;
              for (Value v : args.drop_back()) {
                if (isa<FloatType>(acc))
                  v = extendTo(b, l, v, acc);
                product = product ? createMul(b, l, product, v) : v;
              }
              linalg::YieldOp::create(b, l,
                                      createAdd(b, l, args.back(), product));
            })
            .getResult(0);
    if (acc != element)
      result = buildElementwise(rewriter, loc, type, result,
                                [&](OpBuilder &b, Location l, ValueRange args) {
                                  return truncateTo(b, l, args[0], element);
                                });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::ridge::linalg_lowering::populateReductionToLinalgPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns
      .add<SoftmaxLowering, LogSoftmaxLowering, ReduceLowering,
           ArgReduceLowering, HardmaxLowering, LayerNormLowering, LRNLowering,
           CumulativeLowering<CumSumOp, false>,
           CumulativeLowering<CumProdOp, true>, TopKLowering, EinsumLowering>(
          converter, ctx);
}
