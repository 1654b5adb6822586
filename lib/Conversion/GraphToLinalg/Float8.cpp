//===- Float8.cpp - ONNX float8 conversions as integer arithmetic ---------===//
//
// The lowering stores the ONNX float8 types (f8E4M3FN, f8E4M3FNUZ, f8E5M2,
// f8E5M2FNUZ) as their i8 bit patterns: neither LLVM's CPU back ends nor
// NVPTX before sm_89 convert to or from them. The conversions below are
// exact integer and float arithmetic that both back ends and the PTX
// emulator run as they run any other: decoding is exact, encoding rounds to
// nearest even once, from the source value.
//
//===----------------------------------------------------------------------===//

#include "GraphToLinalgCommon.h"

#include "llvm/ADT/APFloat.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ridge;

namespace mlir::ridge::linalg_lowering {

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

} // namespace mlir::ridge::linalg_lowering
