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

/// Per-op scalar computation, given the op (for its attributes) and the
/// original (possibly unsigned) element type of its data operands.
template <typename OpTy>
Value buildScalar(OpTy op, OpBuilder &b, Location loc, Type original,
                  ValueRange args);

#define RIDGE_FLOAT_INT_BINARY(OP, FOP, SIOP, UIOP)                            \
  template <>                                                                  \
  Value buildScalar<OP>(OP, OpBuilder & b, Location loc, Type original,        \
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
RIDGE_FLOAT_INT_BINARY(MaxOp, arith::MaximumFOp, arith::MaxSIOp, arith::MaxUIOp)
RIDGE_FLOAT_INT_BINARY(MinOp, arith::MinimumFOp, arith::MinSIOp, arith::MinUIOp)
#undef RIDGE_FLOAT_INT_BINARY

/// A divisor for which integer division cannot trap: 0 (division by zero)
/// and, for signed types, -1 (INT_MIN / -1 overflows) become 1. Callers fix
/// up those lanes with the `isZero` and `isMinusOne` predicates.
struct SafeDivisor {
  Value divisor;
  Value isZero;
  Value isMinusOne; // null for unsigned types
};

SafeDivisor getSafeDivisor(OpBuilder &b, Location loc, Value y, Type original) {
  Type type = y.getType();
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
  Value one = arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, 1));
  SafeDivisor safe;
  safe.isZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y, zero);
  Value unsafe = safe.isZero;
  if (!original.isUnsignedInteger()) {
    Value minusOne =
        arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, -1));
    safe.isMinusOne =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y, minusOne);
    unsafe = arith::OrIOp::create(b, loc, unsafe, safe.isMinusOne);
  }
  safe.divisor = arith::SelectOp::create(b, loc, unsafe, one, y);
  return safe;
}

/// Integer division truncates toward zero; x / -1 is -x (wrapping for
/// INT_MIN) and x / 0 is 0 (ONNX leaves it undefined; it must not trap).
template <>
Value buildScalar<DivOp>(DivOp, OpBuilder &b, Location loc, Type original,
                         ValueRange args) {
  if (isa<FloatType>(original))
    return arith::DivFOp::create(b, loc, args[0], args[1]);
  Value x = args[0];
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(x.getType()));
  SafeDivisor safe = getSafeDivisor(b, loc, args[1], original);
  Value quotient;
  if (original.isUnsignedInteger()) {
    quotient = arith::DivUIOp::create(b, loc, x, safe.divisor);
  } else {
    quotient = arith::DivSIOp::create(b, loc, x, safe.divisor);
    Value negated = arith::SubIOp::create(b, loc, zero, x);
    quotient =
        arith::SelectOp::create(b, loc, safe.isMinusOne, negated, quotient);
  }
  return arith::SelectOp::create(b, loc, safe.isZero, zero, quotient);
}

template <>
Value buildScalar<PowOp>(PowOp, OpBuilder &b, Location loc, Type original,
                         ValueRange args) {
  if (isa<FloatType>(original))
    return computeInAccumulatorType(b, loc, args, [&](ValueRange v) -> Value {
      return math::PowFOp::create(b, loc, v[0], v[1]);
    });
  // Integer power by squaring, unrolled over the exponent's bits into
  // straight-line code: math.ipowi becomes a library function call that GPU
  // kernels cannot make. Products wrap around.
  Value base = args[0], exponent = args[1];
  Type type = base.getType();
  unsigned width = type.getIntOrFloatBitWidth();
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
  };
  Value zero = constant(0), one = constant(1);
  Value result = one, square = base;
  for (unsigned bit = 0; bit < width; ++bit) {
    Value shifted = arith::ShRUIOp::create(b, loc, exponent, constant(bit));
    Value isSet = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(b, loc, shifted, one), zero);
    Value product = arith::MulIOp::create(b, loc, result, square);
    result = arith::SelectOp::create(b, loc, isSet, product, result);
    if (bit + 1 < width)
      square = arith::MulIOp::create(b, loc, square, square);
  }
  if (original.isUnsignedInteger())
    return result;
  // A negative exponent gives the truncated reciprocal: 1 for base 1, +-1 for
  // base -1 by the exponent's parity, 0 otherwise.
  Value minusOne = constant(-1);
  Value odd =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                            arith::AndIOp::create(b, loc, exponent, one), zero);
  Value baseIsOne =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, base, one);
  Value baseIsMinusOne =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, base, minusOne);
  Value minusOnePower = arith::SelectOp::create(b, loc, odd, minusOne, one);
  Value reciprocal = arith::SelectOp::create(
      b, loc, baseIsOne, one,
      arith::SelectOp::create(b, loc, baseIsMinusOne, minusOnePower, zero));
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, exponent, zero);
  return arith::SelectOp::create(b, loc, negative, reciprocal, result);
}

template <>
Value buildScalar<ReluOp>(ReluOp, OpBuilder &b, Location loc, Type original,
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
Value buildScalar<NegOp>(NegOp, OpBuilder &b, Location loc, Type original,
                         ValueRange args) {
  if (isa<FloatType>(original))
    return arith::NegFOp::create(b, loc, args[0]);
  Value zero =
      arith::ConstantOp::create(b, loc, b.getZeroAttr(args[0].getType()));
  return arith::SubIOp::create(b, loc, zero, args[0]);
}

template <>
Value buildScalar<AbsOp>(AbsOp, OpBuilder &b, Location loc, Type original,
                         ValueRange args) {
  if (isa<FloatType>(original))
    return math::AbsFOp::create(b, loc, args[0]);
  if (original.isUnsignedInteger())
    return args[0];
  // max(x, -x) in arith rather than math.absi, which the CPU pipeline cannot
  // lower; INT_MIN stays INT_MIN (wrapping, as numpy).
  Value zero =
      arith::ConstantOp::create(b, loc, b.getZeroAttr(args[0].getType()));
  Value negated = arith::SubIOp::create(b, loc, zero, args[0]);
  return arith::MaxSIOp::create(b, loc, args[0], negated);
}

#define RIDGE_FLOAT_UNARY(OP, MATHOP)                                          \
  template <>                                                                  \
  Value buildScalar<OP>(OP, OpBuilder & b, Location loc, Type original,        \
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
RIDGE_FLOAT_UNARY(SinOp, math::SinOp)
RIDGE_FLOAT_UNARY(CosOp, math::CosOp)
RIDGE_FLOAT_UNARY(TanOp, math::TanOp)
RIDGE_FLOAT_UNARY(AsinOp, math::AsinOp)
RIDGE_FLOAT_UNARY(AcosOp, math::AcosOp)
RIDGE_FLOAT_UNARY(AtanOp, math::AtanOp)
RIDGE_FLOAT_UNARY(SinhOp, math::SinhOp)
RIDGE_FLOAT_UNARY(CoshOp, math::CoshOp)
RIDGE_FLOAT_UNARY(AsinhOp, math::AsinhOp)
RIDGE_FLOAT_UNARY(AcoshOp, math::AcoshOp)
RIDGE_FLOAT_UNARY(AtanhOp, math::AtanhOp)
RIDGE_FLOAT_UNARY(FloorOp, math::FloorOp)
RIDGE_FLOAT_UNARY(CeilOp, math::CeilOp)
RIDGE_FLOAT_UNARY(RoundOp, math::RoundEvenOp)
#undef RIDGE_FLOAT_UNARY

template <>
Value buildScalar<SigmoidOp>(SigmoidOp, OpBuilder &b, Location loc,
                             Type original, ValueRange args) {
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
Value buildScalar<ReciprocalOp>(ReciprocalOp, OpBuilder &b, Location loc,
                                Type original, ValueRange args) {
  Value one =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(args[0].getType(), 1.0));
  return arith::DivFOp::create(b, loc, one, args[0]);
}

template <>
Value buildScalar<SignOp>(SignOp, OpBuilder &b, Location loc, Type original,
                          ValueRange args) {
  Value x = args[0];
  Type type = x.getType();
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
  if (isa<FloatType>(type)) {
    Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 1.0));
    Value minusOne =
        arith::ConstantOp::create(b, loc, b.getFloatAttr(type, -1.0));
    Value positive =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
    Value negative =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
    // Zeros and NaNs pass through.
    Value low = arith::SelectOp::create(b, loc, negative, minusOne, x);
    return arith::SelectOp::create(b, loc, positive, one, low);
  }
  Value nonZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x, zero);
  if (original.isUnsignedInteger())
    return arith::ExtUIOp::create(b, loc, type, nonZero);
  // (x > 0) - (x < 0).
  Value positive =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, x, zero);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, zero);
  return arith::SubIOp::create(b, loc,
                               arith::ExtUIOp::create(b, loc, type, positive),
                               arith::ExtUIOp::create(b, loc, type, negative));
}

template <>
Value buildScalar<NotOp>(NotOp, OpBuilder &b, Location loc, Type original,
                         ValueRange args) {
  // Flipping every bit: logical not for i1, bitwise not for integers.
  Type type = args[0].getType();
  Value ones = arith::ConstantOp::create(
      b, loc,
      b.getIntegerAttr(type, APInt::getAllOnes(type.getIntOrFloatBitWidth())));
  return arith::XOrIOp::create(b, loc, args[0], ones);
}

template <>
Value buildScalar<IsNaNOp>(IsNaNOp, OpBuilder &b, Location loc, Type original,
                           ValueRange args) {
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, args[0],
                               args[0]);
}

template <>
Value buildScalar<IsInfOp>(IsInfOp op, OpBuilder &b, Location loc,
                           Type original, ValueRange args) {
  Value x = args[0];
  auto type = cast<FloatType>(x.getType());
  auto infinity = [&](bool negative) -> Value {
    return arith::ConstantOp::create(
        b, loc,
        b.getFloatAttr(type,
                       APFloat::getInf(type.getFloatSemantics(), negative)));
  };
  auto equals = [&](bool negative) -> Value {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x,
                                 infinity(negative));
  };
  if (op.getDetectPositive() && op.getDetectNegative())
    return arith::OrIOp::create(b, loc, equals(false), equals(true));
  if (op.getDetectPositive())
    return equals(false);
  if (op.getDetectNegative())
    return equals(true);
  return arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
}

#define RIDGE_LOGICAL(OP, ARITHOP)                                             \
  template <>                                                                  \
  Value buildScalar<OP>(OP, OpBuilder & b, Location loc, Type original,        \
                        ValueRange args) {                                     \
    return ARITHOP::create(b, loc, args[0], args[1]);                          \
  }
RIDGE_LOGICAL(AndOp, arith::AndIOp)
RIDGE_LOGICAL(OrOp, arith::OrIOp)
RIDGE_LOGICAL(XorOp, arith::XOrIOp)
#undef RIDGE_LOGICAL

// Ordered float predicates: any comparison with NaN is false.
#define RIDGE_COMPARE(OP, FPRED, SIPRED, UIPRED)                               \
  template <>                                                                  \
  Value buildScalar<OP>(OP, OpBuilder & b, Location loc, Type original,        \
                        ValueRange args) {                                     \
    if (isa<FloatType>(original))                                              \
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::FPRED,        \
                                   args[0], args[1]);                          \
    bool isUnsigned = original.isUnsignedInteger() || original.isInteger(1);   \
    return arith::CmpIOp::create(b, loc,                                       \
                                 isUnsigned ? arith::CmpIPredicate::UIPRED     \
                                            : arith::CmpIPredicate::SIPRED,    \
                                 args[0], args[1]);                            \
  }
RIDGE_COMPARE(EqualOp, OEQ, eq, eq)
RIDGE_COMPARE(LessOp, OLT, slt, ult)
RIDGE_COMPARE(LessEqualOp, OLE, sle, ule)
RIDGE_COMPARE(GreaterOp, OGT, sgt, ugt)
RIDGE_COMPARE(GreaterEqualOp, OGE, sge, uge)
#undef RIDGE_COMPARE

template <>
Value buildScalar<ModOp>(ModOp op, OpBuilder &b, Location loc, Type original,
                         ValueRange args) {
  if (isa<FloatType>(original))
    return computeInAccumulatorType(b, loc, args, [&](ValueRange v) -> Value {
      Value rem = arith::RemFOp::create(b, loc, v[0], v[1]);
      if (op.getFmod())
        return rem;
      // numpy's floor mod (fmod = 0): a non-zero remainder whose sign differs
      // from the divisor's moves into the divisor's range (-3 mod inf is
      // inf); a zero remainder takes the divisor's sign. NaNs propagate.
      Type type = rem.getType();
      auto cmp = [&](arith::CmpFPredicate pred, Value l, Value r) {
        return arith::CmpFOp::create(b, loc, pred, l, r).getResult();
      };
      Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
      Value negZero =
          arith::ConstantOp::create(b, loc, b.getFloatAttr(type, -0.0));
      Value divNegative = cmp(arith::CmpFPredicate::OLT, v[1], zero);
      Value remNegative = cmp(arith::CmpFPredicate::OLT, rem, zero);
      Value remZero = cmp(arith::CmpFPredicate::OEQ, rem, zero);
      Value signsDiffer =
          arith::XOrIOp::create(b, loc, divNegative, remNegative);
      Value adjusted = arith::SelectOp::create(
          b, loc, signsDiffer, arith::AddFOp::create(b, loc, rem, v[1]), rem);
      Value signedZero =
          arith::SelectOp::create(b, loc, divNegative, negZero, zero);
      return arith::SelectOp::create(b, loc, remZero, signedZero, adjusted);
    });
  Value x = args[0], y = args[1];
  Type type = x.getType();
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
  SafeDivisor safe = getSafeDivisor(b, loc, y, original);
  Value divisor = safe.divisor;
  Value rem;
  if (original.isUnsignedInteger()) {
    rem = arith::RemUIOp::create(b, loc, x, divisor);
  } else {
    // remsi takes the dividend's sign (C fmod). A divisor of -1 was replaced
    // by 1, which gives the same remainder 0.
    rem = arith::RemSIOp::create(b, loc, x, divisor);
    if (!op.getFmod()) {
      // Python semantics: a non-zero remainder whose sign differs from the
      // divisor's is moved into the divisor's range.
      Value remNegative =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, rem, zero);
      Value divNegative = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::slt, divisor, zero);
      Value remNonZero =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, rem, zero);
      Value signsDiffer =
          arith::XOrIOp::create(b, loc, remNegative, divNegative);
      Value adjust = arith::AndIOp::create(b, loc, remNonZero, signsDiffer);
      Value adjusted = arith::AddIOp::create(b, loc, rem, divisor);
      rem = arith::SelectOp::create(b, loc, adjust, adjusted, rem);
    }
  }
  return arith::SelectOp::create(b, loc, safe.isZero, zero, rem);
}

template <>
Value buildScalar<BitShiftOp>(BitShiftOp op, OpBuilder &b, Location loc,
                              Type original, ValueRange args) {
  Value x = args[0], amount = args[1];
  Type type = x.getType();
  unsigned bits = type.getIntOrFloatBitWidth();
  // Signed (signless) values shift arithmetically to the right; the shift
  // amount compares unsigned, so negative amounts count as too far.
  bool isSigned = !original.isUnsignedInteger();
  bool left = op.getDirection() == "left";
  // arith shifts by the bit width or more are poison; ONNX's shift everything
  // out: zero, or the sign for an arithmetic right shift.
  Value width = arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, bits));
  Value tooFar =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, amount, width);
  Value shifted = left ? arith::ShLIOp::create(b, loc, x, amount).getResult()
                  : isSigned
                      ? arith::ShRSIOp::create(b, loc, x, amount).getResult()
                      : arith::ShRUIOp::create(b, loc, x, amount).getResult();
  Value outOfRange;
  if (!left && isSigned) {
    Value last =
        arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, bits - 1));
    outOfRange = arith::ShRSIOp::create(b, loc, x, last);
  } else {
    outOfRange = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
  }
  return arith::SelectOp::create(b, loc, tooFar, outOfRange, shifted);
}

template <>
Value buildScalar<BitCastOp>(BitCastOp op, OpBuilder &b, Location loc,
                             Type original, ValueRange args) {
  Value x = args[0];
  // The converted (signless) result type: unsigned types became signless.
  Type to = getElementTypeOrSelf(op.getType());
  if (to.isInteger())
    to = b.getIntegerType(to.getIntOrFloatBitWidth());
  if (x.getType() == to)
    return x;
  // Bools are stored as bytes holding 0 or 1.
  if (x.getType().isInteger(1))
    return arith::ExtUIOp::create(b, loc, to, x);
  if (to.isInteger(1)) {
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(x.getType()));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x, zero);
  }
  return arith::BitcastOp::create(b, loc, to, x);
}

template <>
Value buildScalar<SelectOp>(SelectOp, OpBuilder &b, Location loc, Type original,
                            ValueRange args) {
  return arith::SelectOp::create(b, loc, args[0], args[1], args[2]);
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
    // The last operand is a data operand for every op (the condition of a
    // select comes first).
    Type original = getElementTypeOrSelf(op->getOperands().back().getType());
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType, adaptor.getOperands(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return buildScalar<OpTy>(op, b, loc, original, args);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::ridge::linalg_lowering::populateElementwiseToLinalgPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<
      // Arithmetic core.
      ElementwiseLowering<AddOp>, ElementwiseLowering<SubOp>,
      ElementwiseLowering<MulOp>, ElementwiseLowering<DivOp>,
      ElementwiseLowering<PowOp>, ElementwiseLowering<MaxOp>,
      ElementwiseLowering<MinOp>, ElementwiseLowering<ReluOp>,
      ElementwiseLowering<NegOp>, ElementwiseLowering<AbsOp>,
      ElementwiseLowering<TanhOp>, ElementwiseLowering<ExpOp>,
      ElementwiseLowering<LogOp>, ElementwiseLowering<SqrtOp>,
      ElementwiseLowering<ErfOp>, ElementwiseLowering<SigmoidOp>,
      ElementwiseLowering<ReciprocalOp>,
      // Unary math.
      ElementwiseLowering<SinOp>, ElementwiseLowering<CosOp>,
      ElementwiseLowering<TanOp>, ElementwiseLowering<AsinOp>,
      ElementwiseLowering<AcosOp>, ElementwiseLowering<AtanOp>,
      ElementwiseLowering<SinhOp>, ElementwiseLowering<CoshOp>,
      ElementwiseLowering<AsinhOp>, ElementwiseLowering<AcoshOp>,
      ElementwiseLowering<AtanhOp>, ElementwiseLowering<FloorOp>,
      ElementwiseLowering<CeilOp>, ElementwiseLowering<RoundOp>,
      ElementwiseLowering<SignOp>, ElementwiseLowering<NotOp>,
      ElementwiseLowering<IsNaNOp>, ElementwiseLowering<IsInfOp>,
      // Logic, comparison and selection.
      ElementwiseLowering<AndOp>, ElementwiseLowering<OrOp>,
      ElementwiseLowering<XorOp>, ElementwiseLowering<EqualOp>,
      ElementwiseLowering<LessOp>, ElementwiseLowering<LessEqualOp>,
      ElementwiseLowering<GreaterOp>, ElementwiseLowering<GreaterEqualOp>,
      ElementwiseLowering<ModOp>, ElementwiseLowering<BitShiftOp>,
      ElementwiseLowering<SelectOp>, ElementwiseLowering<BitCastOp>>(converter,
                                                                     ctx);
}
