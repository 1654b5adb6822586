//===- QuantizeToLinalg.cpp - QuantizeLinear and DequantizeLinear ---------===//
//
// Lowering of the ridge quantization ops to linalg on tensors: elementwise
// generics with the scale and zero point broadcast per tensor or per axis,
// rounding half to even and saturating as ONNX defines, computed in f32 (f64
// for f64 data). Float8 data (stored as i8 bits) converts through Float8.cpp.
//
//===----------------------------------------------------------------------===//

#include "GraphToLinalgCommon.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::linalg_lowering;

namespace {

//===----------------------------------------------------------------------===//
// Quantization
//===----------------------------------------------------------------------===//

/// Map reading a quantization parameter: scalar or 1-D along `axis`.
AffineMap getParamMap(RankedTensorType param, int64_t axis, int64_t rank,
                      MLIRContext *ctx) {
  if (param.getNumElements() == 1)
    return AffineMap::get(
        rank, 0,
        SmallVector<AffineExpr>(param.getRank(), getAffineConstantExpr(0, ctx)),
        ctx);
  return AffineMap::get(rank, 0, getAffineDimExpr(axis, ctx), ctx);
}

/// Integer (in `intType`, signed or not) to float `floatType`.
Value intToFloat(OpBuilder &b, Location loc, Value v, Type floatType,
                 bool isUnsigned) {
  if (isUnsigned)
    return arith::UIToFPOp::create(b, loc, floatType, v);
  return arith::SIToFPOp::create(b, loc, floatType, v);
}

/// saturate(round_half_even(x / scale) + zeroPoint) in `compute` precision,
/// converted to the integer type `target` (signed or not).
Value quantizeScalar(OpBuilder &b, Location loc, Value x, Value scale,
                     Value zeroPoint, Type target, bool isUnsigned) {
  Type compute = x.getType();
  Value q = math::RoundEvenOp::create(b, loc,
                                      arith::DivFOp::create(b, loc, x, scale));
  q = arith::AddFOp::create(b, loc, q,
                            intToFloat(b, loc, zeroPoint, compute, isUnsigned));
  unsigned width = target.getIntOrFloatBitWidth();
  double lo = isUnsigned ? 0.0 : -std::ldexp(1.0, static_cast<int>(width) - 1);
  double hi = isUnsigned ? std::ldexp(1.0, static_cast<int>(width)) - 1
                         : std::ldexp(1.0, static_cast<int>(width) - 1) - 1;
  q = arith::MaximumFOp::create(
      b, loc, q,
      arith::ConstantOp::create(b, loc, b.getFloatAttr(compute, lo)));
  q = arith::MinimumFOp::create(
      b, loc, q,
      arith::ConstantOp::create(b, loc, b.getFloatAttr(compute, hi)));
  if (isUnsigned)
    return arith::FPToUIOp::create(b, loc, target, q);
  return arith::FPToSIOp::create(b, loc, target, q);
}

/// The f32 (f64 for f64 data) type quantization arithmetic runs in.
Type getQuantComputeType(Type element) {
  return element.isF64() ? element : Float32Type::get(element.getContext());
}

struct QuantizeLinearLowering : OpConversionPattern<QuantizeLinearOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(QuantizeLinearOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    auto resultType =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    bool isUnsigned = getElementTypeOrSelf(op.getType()).isUnsignedInteger();
    int64_t rank = resultType.getRank(), axis = op.getAxis();
    Value scale = adaptor.getScale(), zeroPoint = adaptor.getZeroPoint();
    SmallVector<AffineMap> maps{
        rewriter.getMultiDimIdentityMap(rank),
        getParamMap(getTensorType(scale), axis, rank, ctx),
        getParamMap(getTensorType(zeroPoint), axis, rank, ctx),
        rewriter.getMultiDimIdentityMap(rank)};
    Type compute =
        getQuantComputeType(getElementTypeOrSelf(op.getInput().getType()));
    Type target = resultType.getElementType();
    // A float8 result is x / scale rounded into it (the zero point is zero).
    auto float8 = dyn_cast<FloatType>(getElementTypeOrSelf(op.getType()));
    if (float8 && !isOnnxFloat8(float8))
      float8 = nullptr;
    bool saturate = op.getSaturate();
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, resultType,
            ValueRange{adaptor.getInput(), scale, zeroPoint},
            createEmpty(rewriter, loc, resultType), maps,
            SmallVector<utils::IteratorType>(rank,
                                             utils::IteratorType::parallel),
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value x = extendTo(b, l, args[0], compute);
              Value s = args[1];
              if (s.getType() != compute)
                s = s.getType().getIntOrFloatBitWidth() <
                            compute.getIntOrFloatBitWidth()
                        ? extendTo(b, l, s, compute)
                        : truncateTo(b, l, s, compute);
              if (float8) {
                linalg::YieldOp::create(
                    b, l,
                    encodeFloat8(b, l, arith::DivFOp::create(b, l, x, s),
                                 float8, saturate));
                return;
              }
              linalg::YieldOp::create(
                  b, l,
                  quantizeScalar(b, l, x, s, args[2], target, isUnsigned));
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct DequantizeLinearLowering : OpConversionPattern<DequantizeLinearOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DequantizeLinearOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    auto resultType =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    Type inElement = getElementTypeOrSelf(op.getInput().getType());
    bool isUnsigned = inElement.isUnsignedInteger();
    unsigned width = inElement.getIntOrFloatBitWidth();
    int64_t rank = resultType.getRank(), axis = op.getAxis();
    Value scale = adaptor.getScale(), zeroPoint = adaptor.getZeroPoint();
    SmallVector<AffineMap> maps{
        rewriter.getMultiDimIdentityMap(rank),
        getParamMap(getTensorType(scale), axis, rank, ctx),
        getParamMap(getTensorType(zeroPoint), axis, rank, ctx),
        rewriter.getMultiDimIdentityMap(rank)};
    Type element = resultType.getElementType();
    Type compute = getQuantComputeType(element);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, resultType,
            ValueRange{adaptor.getInput(), scale, zeroPoint},
            createEmpty(rewriter, loc, resultType), maps,
            SmallVector<utils::IteratorType>(rank,
                                             utils::IteratorType::parallel),
            [&](OpBuilder &b, Location l, ValueRange args) {
              if (auto float8 = dyn_cast<FloatType>(inElement)) {
                // x * scale (the zero point is zero), in f32 as the ONNX
                // reference computes it.
                Value real = extendTo(b, l, decodeFloat8(b, l, args[0], float8),
                                      compute);
                Value product = arith::MulFOp::create(
                    b, l, real, extendTo(b, l, args[1], compute));
                linalg::YieldOp::create(b, l,
                                        truncateTo(b, l, product, element));
                return;
              }
              // x - zero_point is exact in a wider integer.
              Type wide = b.getIntegerType(std::max(2 * width, 32u));
              auto widen = [&](Value v) -> Value {
                if (v.getType() == wide)
                  return v;
                if (isUnsigned)
                  return arith::ExtUIOp::create(b, l, wide, v);
                return arith::ExtSIOp::create(b, l, wide, v);
              };
              Value diff =
                  arith::SubIOp::create(b, l, widen(args[0]), widen(args[2]));
              Value real = arith::SIToFPOp::create(b, l, compute, diff);
              Value product = arith::MulFOp::create(
                  b, l, real, extendTo(b, l, args[1], compute));
              linalg::YieldOp::create(b, l, truncateTo(b, l, product, element));
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// min/max of the data (widened to include 0) give the scale and zero point;
/// then the data quantizes with them.
struct DynamicQuantizeLinearLowering
    : OpConversionPattern<DynamicQuantizeLinearOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DynamicQuantizeLinearOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    OpBuilder &b = rewriter;
    Value input = adaptor.getInput();
    auto inType = getTensorType(input);
    int64_t rank = inType.getRank();
    Type element = inType.getElementType();
    auto floatType = cast<FloatType>(element);
    const llvm::fltSemantics &sem = floatType.getFloatSemantics();
    auto scalarType = RankedTensorType::get({}, element);
    Value minInit = createFilled(b, loc, scalarType,
                                 b.getFloatAttr(element, APFloat::getInf(sem)));
    Value maxInit = createFilled(
        b, loc, scalarType,
        b.getFloatAttr(element, APFloat::getInf(sem, /*Negative=*/true)));
    AffineMap toScalar = AffineMap::get(rank, 0, {}, ctx);
    auto minMax = linalg::GenericOp::create(
        b, loc, TypeRange{scalarType, scalarType}, input,
        ValueRange{minInit, maxInit},
        ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank), toScalar, toScalar},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::reduction),
        [&](OpBuilder &nb, Location l, ValueRange args) {
          linalg::YieldOp::create(
              nb, l,
              ValueRange{arith::MinimumFOp::create(nb, l, args[1], args[0]),
                         arith::MaximumFOp::create(nb, l, args[2], args[0])});
        });
    Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(element, 0));
    Value lo = arith::MinimumFOp::create(
        b, loc, tensor::ExtractOp::create(b, loc, minMax.getResult(0)), zero);
    Value hi = arith::MaximumFOp::create(
        b, loc, tensor::ExtractOp::create(b, loc, minMax.getResult(1)), zero);
    Value scale = arith::DivFOp::create(
        b, loc, arith::SubFOp::create(b, loc, hi, lo),
        arith::ConstantOp::create(b, loc, b.getFloatAttr(element, 255.0)));
    // zero_point = saturate(round(0 - lo / scale)); quantizing 0 with a zero
    // zero point computes exactly that.
    Type u8 = b.getI8Type();
    Value zeroU8 = arith::ConstantOp::create(b, loc, b.getIntegerAttr(u8, 0));
    Value negLo = arith::NegFOp::create(b, loc, lo);
    Value zeroPoint =
        quantizeScalar(b, loc, negLo, scale, zeroU8, u8, /*isUnsigned=*/true);
    auto resultType = inType.clone(u8);
    Value result =
        linalg::GenericOp::create(
            b, loc, resultType, input, createEmpty(b, loc, resultType),
            ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank),
                                b.getMultiDimIdentityMap(rank)},
            SmallVector<utils::IteratorType>(rank,
                                             utils::IteratorType::parallel),
            [&](OpBuilder &nb, Location l, ValueRange args) {
              linalg::YieldOp::create(nb, l,
                                      quantizeScalar(nb, l, args[0], scale,
                                                     zeroPoint, u8,
                                                     /*isUnsigned=*/true));
            })
            .getResult(0);
    Value scaleTensor =
        tensor::FromElementsOp::create(b, loc, scalarType, scale);
    Value zeroPointTensor = tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({}, u8), zeroPoint);
    rewriter.replaceOp(op, ValueRange{result, scaleTensor, zeroPointTensor});
    return success();
  }
};

} // namespace

void mlir::ridge::linalg_lowering::populateQuantizeToLinalgPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<QuantizeLinearLowering, DequantizeLinearLowering,
               DynamicQuantizeLinearLowering>(converter, patterns.getContext());
}
