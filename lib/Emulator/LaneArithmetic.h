//===- LaneArithmetic.h - One lane's PTX arithmetic ------------*- C++ -*-===//
//
// Private to the emulator: what one lane computes for an arithmetic,
// comparison or conversion instruction, on raw register bits, apart from
// how the executor schedules lanes and warps. Each compute function returns
// false with `error` set for a form it does not implement.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_LIB_EMULATOR_LANEARITHMETIC_H
#define RIDGELINE_LIB_EMULATOR_LANEARITHMETIC_H

#include "ridgeline/Emulator/FloatFormats.h"

#include "ridgeline/Emulator/Ptx.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace ridge::emu::detail {

inline uint64_t maskOf(unsigned bits) {
  return bits >= 64 ? ~0ull : ((1ull << bits) - 1);
}

inline int64_t signExtend(uint64_t value, unsigned bits) {
  if (bits >= 64)
    return static_cast<int64_t>(value);
  uint64_t sign = 1ull << (bits - 1);
  value &= maskOf(bits);
  return static_cast<int64_t>((value ^ sign) - sign);
}

inline float flushF32(float value) {
  return std::fpclassify(value) == FP_SUBNORMAL ? std::copysign(0.0f, value)
                                                : value;
}

/// A 16- or 32-bit float format's value as f32 (exact), and back (rn).
inline float unpackFloat(Type type, uint64_t bits) {
  switch (type) {
  case Type::F16:
    return halfToF32(static_cast<uint16_t>(bits));
  case Type::BF16:
    return bf16ToF32(static_cast<uint16_t>(bits));
  default:
    return bitsToF32(bits);
  }
}
inline uint64_t packFloat(Type type, float value) {
  switch (type) {
  case Type::F16:
    return f32ToHalf(value);
  case Type::BF16:
    return f32ToBf16(value);
  default:
    return f32ToBits(value);
  }
}

template <typename T> inline T ptxMin(T a, T b, bool nanMode) {
  if (std::isnan(a) || std::isnan(b)) {
    if (nanMode || (std::isnan(a) && std::isnan(b)))
      return std::numeric_limits<T>::quiet_NaN();
    return std::isnan(a) ? b : a;
  }
  if (a == b) // -0 is less than +0
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
template <typename T> inline T ptxMax(T a, T b, bool nanMode) {
  if (std::isnan(a) || std::isnan(b)) {
    if (nanMode || (std::isnan(a) && std::isnan(b)))
      return std::numeric_limits<T>::quiet_NaN();
    return std::isnan(a) ? b : a;
  }
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

/// setp's comparisons: of floats (ordered unless the name ends in 'u'), and
/// of integers of `bits` bits.
/// bfi: `b` with its bits [pos, pos + len) replaced by the low bits of `a`
/// (pos and len are the low 8 bits of their operands; the field ends at
/// the register's top bit).
inline uint64_t insertBitField(uint64_t a, uint64_t b, uint64_t pos,
                               uint64_t len, unsigned bits) {
  unsigned start = static_cast<unsigned>(pos & 0xff);
  unsigned width = static_cast<unsigned>(len & 0xff);
  if (start >= bits || width == 0)
    return b & maskOf(bits);
  width = std::min(width, bits - start);
  uint64_t field = maskOf(width) << start;
  return ((b & ~field) | ((a << start) & field)) & maskOf(bits);
}

bool compareFloat(Compare compare, double a, double b);
bool compareInt(Compare compare, uint64_t a, uint64_t b, bool isSigned,
                unsigned bits);

/// A float instruction (add ... tanh) on the bits of `type` (f16, bf16,
/// their x2 forms, f32, f64), with .ftz, .sat, .NaN and directed rounding.
bool computeFloatOp(const Instruction &inst, Type type, uint64_t a, uint64_t b,
                    uint64_t c, uint64_t &result, std::string &error);
/// An integer or predicate instruction; `carryIn`/`carryOut` are the lane's
/// CC.CF for the .cc and addc/subc/madc forms.
bool computeIntOp(const Instruction &inst, uint64_t a, uint64_t b, uint64_t c,
                  bool carryIn, bool &carryOut, uint64_t &result,
                  std::string &error);
/// cvt from inst.srcType to inst.type, with its rounding and saturation.
bool computeConvert(const Instruction &inst, uint64_t value, uint64_t &result,
                    std::string &error);

} // namespace ridge::emu::detail

#endif // RIDGELINE_LIB_EMULATOR_LANEARITHMETIC_H
