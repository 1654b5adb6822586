//===- Float8Arithmetic.cpp - float8 conversions as integer arithmetic ----===//
//
// Float8Arithmetic.h says why; the encoder's rounding is ONNX Cast-19's.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Conversion/Float8Arithmetic.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include "llvm/ADT/APFloat.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace mlir;
using namespace mlir::ridge;

namespace mlir::ridge {

namespace {

/// The layout of a float8 type: `mantissaBits` stored mantissa bits, the
/// exponent `bias`, and how it spells its special values.
struct Float8Format {
  unsigned mantissaBits;
  int bias;
  bool fnuz;       // one NaN (0x80), no infinity, no negative zero
  bool hasInf;     // f8E5M2: IEEE infinities and NaNs
  uint8_t maxBits; // the largest finite value's magnitude bits

  explicit Float8Format(FloatType type) {
    const llvm::fltSemantics &sem = type.getFloatSemantics();
    mantissaBits = llvm::APFloat::semanticsPrecision(sem) - 1;
    bias = 1 - llvm::APFloat::semanticsMinExponent(sem);
    fnuz = isa<Float8E4M3FNUZType, Float8E5M2FNUZType>(type);
    hasInf = isa<Float8E5M2Type>(type);
    maxBits = static_cast<uint8_t>(
        llvm::APFloat::getLargest(sem).bitcastToAPInt().getZExtValue() & 0x7f);
  }
  unsigned exponentBits() const { return 7 - mantissaBits; }
};

Value intConstant(OpBuilder &b, Location loc, Type type, uint64_t value) {
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, value));
}

} // namespace

bool isOnnxFloat8(Type type) {
  return isa<Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type,
             Float8E5M2FNUZType>(type);
}

Value decodeFloat8(OpBuilder &b, Location loc, Value bits, FloatType type) {
  Float8Format format(type);
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  unsigned m = format.mantissaBits;
  auto c = [&](uint64_t v) { return intConstant(b, loc, i32, v); };
  Value u = arith::ExtUIOp::create(b, loc, i32, bits);
  Value exponent =
      arith::AndIOp::create(b, loc, arith::ShRUIOp::create(b, loc, u, c(m)),
                            c((1u << format.exponentBits()) - 1));
  Value mantissa = arith::AndIOp::create(b, loc, u, c((1u << m) - 1));
  Value isSubnormal =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, exponent, c(0));
  // |value| = significand * 2^(max(exponent, 1) - bias - m): the product of
  // a small integer and a normal power of two, exact in f32.
  Value significand = arith::SelectOp::create(
      b, loc, isSubnormal, mantissa,
      arith::OrIOp::create(b, loc, mantissa, c(1u << m)));
  Value scaleExponent =
      arith::SelectOp::create(b, loc, isSubnormal, c(1), exponent);
  Value scaleBits = arith::ShLIOp::create(
      b, loc,
      arith::AddIOp::create(
          b, loc, scaleExponent,
          c(static_cast<uint64_t>(127 - format.bias - static_cast<int>(m)))),
      c(23));
  Value magnitude = arith::MulFOp::create(
      b, loc, arith::UIToFPOp::create(b, loc, f32, significand),
      arith::BitcastOp::create(b, loc, f32, scaleBits));
  Value sign = arith::ShLIOp::create(
      b, loc, arith::AndIOp::create(b, loc, u, c(0x80)), c(24));
  Value value = arith::BitcastOp::create(
      b, loc, f32,
      arith::OrIOp::create(
          b, loc, arith::BitcastOp::create(b, loc, i32, magnitude), sign));
  // The special values.
  Value nan = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(f32, APFloat::getNaN(APFloat::IEEEsingle())));
  Value isNaN;
  if (format.fnuz) {
    isNaN = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, u, c(0x80));
  } else if (format.hasInf) {
    Value top = c((1u << format.exponentBits()) - 1);
    Value isSpecial =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, exponent, top);
    Value isInf = arith::AndIOp::create(
        b, loc, isSpecial,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, mantissa,
                              c(0)));
    isNaN = arith::XOrIOp::create(b, loc, isSpecial, isInf);
    Value inf = arith::BitcastOp::create(
        b, loc, f32, arith::OrIOp::create(b, loc, c(0x7f800000), sign));
    value = arith::SelectOp::create(b, loc, isInf, inf, value);
  } else {
    isNaN = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                  arith::AndIOp::create(b, loc, u, c(0x7f)),
                                  c(0x7f));
  }
  return arith::SelectOp::create(b, loc, isNaN, nan, value);
}

Value encodeFloat8(OpBuilder &b, Location loc, Value value, FloatType type,
                   bool saturate) {
  Float8Format format(type);
  // f16 and bf16 widen to f32 exactly; f32 and f64 round from themselves.
  auto source = cast<FloatType>(value.getType());
  if (source.getWidth() < 32) {
    source = b.getF32Type();
    value = arith::ExtFOp::create(b, loc, source, value);
  }
  unsigned width = source.getWidth();
  unsigned sourceMantissa = source.getFPMantissaWidth() - 1;
  int sourceBias =
      1 - llvm::APFloat::semanticsMinExponent(source.getFloatSemantics());
  Type intType = b.getIntegerType(width), i8 = b.getI8Type();
  auto c = [&](uint64_t v) { return intConstant(b, loc, intType, v); };
  auto c8 = [&](uint64_t v) { return intConstant(b, loc, i8, v); };
  unsigned m = format.mantissaBits, shift = sourceMantissa - m;
  uint64_t signMask = uint64_t(1) << (width - 1);
  uint64_t infBits = ((uint64_t(1) << (width - 1 - sourceMantissa)) - 1)
                     << sourceMantissa;

  Value u = arith::BitcastOp::create(b, loc, intType, value);
  Value abs = arith::AndIOp::create(b, loc, u, c(signMask - 1));
  Value sign = arith::TruncIOp::create(
      b, loc, i8, arith::ShRUIOp::create(b, loc, u, c(width - 8)));
  sign = arith::AndIOp::create(b, loc, sign, c8(0x80));
  Value isNaN =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, abs, c(infBits));

  // Normal results: round the source's bits to m mantissa bits, to nearest
  // even (a carry moves into the exponent), then rebias the exponent.
  Value lsb = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, abs, c(shift)), c(1));
  Value rounded = arith::ShRUIOp::create(
      b, loc,
      arith::AddIOp::create(
          b, loc, abs,
          arith::AddIOp::create(b, loc, lsb,
                                c((uint64_t(1) << (shift - 1)) - 1))),
      c(shift));
  Value normal = arith::SubIOp::create(
      b, loc, rounded, c(static_cast<uint64_t>(sourceBias - format.bias) << m));
  // Subnormal results (|x| < 2^(1 - bias)): |x| / 2^(1 - bias - m) rounded
  // to nearest even is the mantissa (2^m rounds up to the smallest normal,
  // whose bits it also is).
  uint64_t minNormalBits = static_cast<uint64_t>(sourceBias + 1 - format.bias)
                           << sourceMantissa;
  Value scaled = arith::MulFOp::create(
      b, loc, arith::BitcastOp::create(b, loc, source, abs),
      arith::ConstantOp::create(
          b, loc,
          b.getFloatAttr(source, std::ldexp(1.0, format.bias + m - 1))));
  Value subnormal = arith::FPToUIOp::create(
      b, loc, intType, math::RoundEvenOp::create(b, loc, scaled));
  Value isSubnormal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            abs, c(minNormalBits));
  Value magnitude =
      arith::SelectOp::create(b, loc, isSubnormal, subnormal, normal);

  // Overflow (infinities included): the largest finite value when
  // saturating, else infinity (f8E5M2) or NaN.
  Value overflows = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                          magnitude, c(format.maxBits));
  uint8_t overflowBits = saturate        ? format.maxBits
                         : format.hasInf ? 0x7c
                                         : 0x7f;
  Value bits =
      arith::SelectOp::create(b, loc, overflows, c8(overflowBits),
                              arith::TruncIOp::create(b, loc, i8, magnitude));
  if (format.fnuz) {
    // No negative zero; NaN (and overflow without saturation) is 0x80.
    Value isZero =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, bits, c8(0));
    Value result = arith::SelectOp::create(
        b, loc, isZero, c8(0), arith::OrIOp::create(b, loc, bits, sign));
    Value isNaNResult = isNaN;
    if (!saturate)
      isNaNResult = arith::OrIOp::create(b, loc, isNaN, overflows);
    return arith::SelectOp::create(b, loc, isNaNResult, c8(0x80), result);
  }
  Value result = arith::OrIOp::create(b, loc, bits, sign);
  return arith::SelectOp::create(
      b, loc, isNaN, arith::OrIOp::create(b, loc, sign, c8(0x7f)), result);
}

int getFp8ScaleExponent(float amax) {
  uint32_t bits;
  std::memcpy(&bits, &amax, sizeof(bits));
  int exponent = static_cast<int>((bits >> 23) & 0xff);
  int scale = ((bits & 0x7fffff) <= 0x600000 ? 135 : 134) - exponent;
  return std::clamp(scale, -126, 126);
}

Value buildFp8ScaleExponent(OpBuilder &b, Location loc, Value amax) {
  Type i32 = b.getI32Type();
  auto c = [&](int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(i32, v));
  };
  Value bits = arith::BitcastOp::create(b, loc, i32, amax);
  Value exponent = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, c(23)), c(0xff));
  Value fitsBelow = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ule,
      arith::AndIOp::create(b, loc, bits, c(0x7fffff)), c(0x600000));
  Value scale = arith::SubIOp::create(
      b, loc, arith::SelectOp::create(b, loc, fitsBelow, c(135), c(134)),
      exponent);
  return arith::MaxSIOp::create(
      b, loc, arith::MinSIOp::create(b, loc, scale, c(126)), c(-126));
}

Value buildPowerOfTwo(OpBuilder &b, Location loc, Value exponent) {
  Type i32 = b.getI32Type();
  auto c = [&](int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(i32, v));
  };
  return arith::BitcastOp::create(
      b, loc, b.getF32Type(),
      arith::ShLIOp::create(
          b, loc, arith::AddIOp::create(b, loc, exponent, c(127)), c(23)));
}

uint8_t quantizeToE4M3(float x, int exponent) {
  float scaled = x * std::ldexp(1.0f, exponent);
  if (!std::isnan(scaled))
    scaled = std::clamp(scaled, -kFp8E4M3Max, kFp8E4M3Max);
  APFloat value(scaled);
  bool losesInfo = false;
  value.convert(APFloat::Float8E4M3FN(), APFloat::rmNearestTiesToEven,
                &losesInfo);
  return static_cast<uint8_t>(value.bitcastToAPInt().getZExtValue());
}

} // namespace mlir::ridge
