//===- ElementwiseToLinalg.cpp - elementwise ops -------===//
//
// Lowering of the ridge elementwise ops to linalg on tensors.
//
//===----------------------------------------------------------------------===//

#include "GraphToLinalgCommon.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::linalg_lowering;

namespace {

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

/// Per-op scalar computation, given the original (possibly unsigned) element
/// type.
template <typename OpTy>
Value buildScalar(OpBuilder &b, Location loc, Type original, ValueRange args);

#define RIDGE_FLOAT_INT_BINARY(OP, FOP, SIOP, UIOP)                            \
  template <>                                                                  \
  Value buildScalar<OP>(OpBuilder & b, Location loc, Type original,            \
                        ValueRange args) {                                     \
    if (isa<FloatType>(original))                                              \
      return FOP::create(b, loc, args[0], args[1]);                            \
    if (original.isUnsignedInteger())                                          \
      return UIOP::create(b, loc, args[0], args[1]);                           \
    return SIOP::create(b, loc, args[0], args[1]);                             \
  }
RIDGE_FLOAT_INT_BINARY(AddOp, arith::AddFOp, arith::AddIOp, arith::AddIOp)
RIDGE_FLOAT_INT_BINARY(SubOp, arith::SubFOp, arith::SubIOp, arith::SubIOp)
RIDGE_FLOAT_INT_BINARY(MulOp, arith::MulFOp, arith::MulIOp, arith::MulIOp)
RIDGE_FLOAT_INT_BINARY(DivOp, arith::DivFOp, arith::DivSIOp, arith::DivUIOp)
RIDGE_FLOAT_INT_BINARY(MaxOp, arith::MaximumFOp, arith::MaxSIOp, arith::MaxUIOp)
RIDGE_FLOAT_INT_BINARY(MinOp, arith::MinimumFOp, arith::MinSIOp, arith::MinUIOp)
#undef RIDGE_FLOAT_INT_BINARY

template <>
Value buildScalar<PowOp>(OpBuilder &b, Location loc, Type original,
                         ValueRange args) {
  if (isa<FloatType>(original))
    return computeInAccumulatorType(b, loc, args, [&](ValueRange v) -> Value {
      return math::PowFOp::create(b, loc, v[0], v[1]);
    });
  return math::IPowIOp::create(b, loc, args[0], args[1]);
}

template <>
Value buildScalar<ReluOp>(OpBuilder &b, Location loc, Type original,
                          ValueRange args) {
  Type type = args[0].getType();
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
  if (isa<FloatType>(type))
    return arith::MaximumFOp::create(b, loc, args[0], zero);
  if (original.isUnsignedInteger())
    return args[0];
  return arith::MaxSIOp::create(b, loc, args[0], zero);
}

template <>
Value buildScalar<NegOp>(OpBuilder &b, Location loc, Type original,
                         ValueRange args) {
  if (isa<FloatType>(original))
    return arith::NegFOp::create(b, loc, args[0]);
  Value zero =
      arith::ConstantOp::create(b, loc, b.getZeroAttr(args[0].getType()));
  return arith::SubIOp::create(b, loc, zero, args[0]);
}

template <>
Value buildScalar<AbsOp>(OpBuilder &b, Location loc, Type original,
                         ValueRange args) {
  if (isa<FloatType>(original))
    return math::AbsFOp::create(b, loc, args[0]);
  if (original.isUnsignedInteger())
    return args[0];
  return math::AbsIOp::create(b, loc, args[0]);
}

#define RIDGE_FLOAT_UNARY(OP, MATHOP)                                          \
  template <>                                                                  \
  Value buildScalar<OP>(OpBuilder & b, Location loc, Type original,            \
                        ValueRange args) {                                     \
    return computeInAccumulatorType(b, loc, args, [&](ValueRange v) -> Value { \
      return MATHOP::create(b, loc, v[0]);                                     \
    });                                                                        \
  }
RIDGE_FLOAT_UNARY(TanhOp, math::TanhOp)
RIDGE_FLOAT_UNARY(ExpOp, math::ExpOp)
RIDGE_FLOAT_UNARY(LogOp, math::LogOp)
RIDGE_FLOAT_UNARY(SqrtOp, math::SqrtOp)
RIDGE_FLOAT_UNARY(ErfOp, math::ErfOp)
#undef RIDGE_FLOAT_UNARY

template <>
Value buildScalar<SigmoidOp>(OpBuilder &b, Location loc, Type original,
                             ValueRange args) {
  return computeInAccumulatorType(b, loc, args, [&](ValueRange v) -> Value {
    Type type = v[0].getType();
    Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 1.0));
    Value negated = arith::NegFOp::create(b, loc, v[0]);
    Value denom = arith::AddFOp::create(b, loc, one,
                                        math::ExpOp::create(b, loc, negated));
    return arith::DivFOp::create(b, loc, one, denom);
  });
}

template <>
Value buildScalar<ReciprocalOp>(OpBuilder &b, Location loc, Type original,
                                ValueRange args) {
  Value one =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(args[0].getType(), 1.0));
  return arith::DivFOp::create(b, loc, one, args[0]);
}

template <typename OpTy>
struct ElementwiseLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto resultType = dyn_cast_or_null<RankedTensorType>(
        this->getTypeConverter()->convertType(op.getType()));
    if (!resultType || !resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs a static result shape");
    Type original = getElementTypeOrSelf(op->getOperand(0).getType());
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType, adaptor.getOperands(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return buildScalar<OpTy>(b, loc, original, args);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::ridge::linalg_lowering::populateElementwiseToLinalgPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ElementwiseLowering<AddOp>, ElementwiseLowering<SubOp>,
               ElementwiseLowering<MulOp>, ElementwiseLowering<DivOp>,
               ElementwiseLowering<PowOp>, ElementwiseLowering<MaxOp>,
               ElementwiseLowering<MinOp>, ElementwiseLowering<ReluOp>,
               ElementwiseLowering<NegOp>, ElementwiseLowering<AbsOp>,
               ElementwiseLowering<TanhOp>, ElementwiseLowering<ExpOp>,
               ElementwiseLowering<LogOp>, ElementwiseLowering<SqrtOp>,
               ElementwiseLowering<ErfOp>, ElementwiseLowering<SigmoidOp>,
               ElementwiseLowering<ReciprocalOp>>(converter, ctx);
}
