//===- FloatFormats.h - f16 and bf16 conversions, exactly ------*- C++ -*-===//
//
// Conversions between f32 and the 16-bit formats with round-to-nearest-even,
// as PTX's cvt.rn defines them, written out bit by bit so that they do not
// depend on the host compiler's _Float16. Shared by the emulator and the
// tools that fill and print its buffers (ridge-emu).
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_EMULATOR_FLOATFORMATS_H
#define RIDGELINE_EMULATOR_FLOATFORMATS_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace ridge::emu {

inline float bitsToF32(uint64_t bits) {
  uint32_t narrow = static_cast<uint32_t>(bits);
  float value;
  std::memcpy(&value, &narrow, 4);
  return value;
}
inline uint64_t f32ToBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}
inline double bitsToF64(uint64_t bits) {
  double value;
  std::memcpy(&value, &bits, 8);
  return value;
}
inline uint64_t f64ToBits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, 8);
  return bits;
}

inline float halfToF32(uint16_t half) {
  uint32_t sign = static_cast<uint32_t>(half & 0x8000) << 16;
  uint32_t exponent = (half >> 10) & 0x1f;
  uint32_t mantissa = half & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000 | (mantissa << 13);
  } else if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {
      // Subnormal: normalize the mantissa.
      int shift = 0;
      while (!(mantissa & 0x400)) {
        mantissa <<= 1;
        ++shift;
      }
      mantissa &= 0x3ff;
      bits =
          sign | (static_cast<uint32_t>(113 - shift) << 23) | (mantissa << 13);
    }
  } else {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  }
  return bitsToF32(bits);
}

/// f32 -> f16, round to nearest even; NaNs stay quiet NaNs.
inline uint16_t f32ToHalf(float value) {
  uint32_t bits = static_cast<uint32_t>(f32ToBits(value));
  uint32_t sign = (bits >> 16) & 0x8000;
  uint32_t magnitude = bits & 0x7fffffff;
  if (magnitude >= 0x7f800000) // Inf or NaN
    return static_cast<uint16_t>(
        sign | 0x7c00 |
        (magnitude > 0x7f800000 ? 0x200 | ((magnitude >> 13) & 0x3ff) : 0));
  if (magnitude >= 0x477ff000) // rounds to beyond 65504
    return static_cast<uint16_t>(sign | 0x7c00);
  if (magnitude < 0x38800000) {  // below 2^-14: a subnormal half or zero
    if (magnitude <= 0x33000000) // at most 2^-25: ties to even give zero
      return static_cast<uint16_t>(sign);
    uint32_t mantissa = (magnitude & 0x7fffff) | 0x800000;
    int shift = 126 - static_cast<int>(magnitude >> 23);
    uint32_t rounded = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (rounded & 1)))
      ++rounded;
    return static_cast<uint16_t>(sign | rounded);
  }
  uint32_t rounded = (magnitude - 0x38000000) >> 13;
  uint32_t rest = magnitude & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (rounded & 1)))
    ++rounded;
  return static_cast<uint16_t>(sign | rounded);
}

inline float bf16ToF32(uint16_t value) {
  return bitsToF32(static_cast<uint32_t>(value) << 16);
}

/// f32 -> bf16, round to nearest even; NaNs stay quiet NaNs.
inline uint16_t f32ToBf16(float value) {
  uint32_t bits = static_cast<uint32_t>(f32ToBits(value));
  if ((bits & 0x7fffffff) > 0x7f800000)
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

/// f64 -> f32 rounded to odd: truncated toward zero, the last bit set when
/// inexact. Rounding that once more to a format of at most 22 bits (f16,
/// bf16) gives the correctly rounded f64 -> f16 or bf16 conversion, which
/// converting through a round-to-nearest f32 would not (double rounding).
inline float f64ToF32RoundToOdd(double value) {
  float narrow = static_cast<float>(value);
  if (value != value || static_cast<double>(narrow) == value)
    return narrow;
  if (static_cast<double>(narrow < 0 ? -narrow : narrow) >
      (value < 0 ? -value : value))
    narrow = std::nextafter(narrow, 0.0f);
  return bitsToF32(f32ToBits(narrow) | 1);
}

} // namespace ridge::emu

#endif // RIDGELINE_EMULATOR_FLOATFORMATS_H
