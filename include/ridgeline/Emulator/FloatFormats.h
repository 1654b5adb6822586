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

#include <algorithm>
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

/// The value of an 8-bit float: e4m3 (E4M3FN: bias 7, no infinities, S.1111.111
/// NaN) or e5m2 (bias 15, IEEE infinities and NaNs), as wgmma's .e4m3 and
/// .e5m2 operands are read. Exact in f32.
inline float fp8ToF32(uint8_t value, bool e5m2) {
  unsigned mantissaBits = e5m2 ? 2 : 3;
  int bias = e5m2 ? 15 : 7;
  unsigned exponent = (value & 0x7f) >> mantissaBits;
  unsigned mantissa = value & ((1u << mantissaBits) - 1);
  float sign = (value & 0x80) ? -1.0f : 1.0f;
  if (e5m2 && exponent == 0x1f)
    return mantissa ? NAN : sign * INFINITY;
  if (!e5m2 && (value & 0x7f) == 0x7f)
    return NAN;
  float significand = exponent
                          ? static_cast<float>(mantissa | (1u << mantissaBits))
                          : static_cast<float>(mantissa);
  int scale = (exponent ? static_cast<int>(exponent) : 1) - bias -
              static_cast<int>(mantissaBits);
  return sign * std::ldexp(significand, scale);
}

/// f32 -> e4m3 (E4M3FN) or e5m2, as cvt.rn.satfinite rounds: to nearest
/// even, overflow and infinities to the largest finite magnitude (448,
/// 57344), NaN to 0x7f.
inline uint8_t f32ToFp8(float value, bool e5m2) {
  if (std::isnan(value))
    return 0x7f;
  uint8_t sign = std::signbit(value) ? 0x80 : 0;
  int mantissaBits = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7;
  int minExponent = 1 - bias; // of the smallest normal
  double largest = e5m2 ? 57344.0 : 448.0;
  double magnitude = std::fabs(static_cast<double>(value));
  double rounded = largest;
  if (magnitude < largest) {
    // One unit of the last place at magnitude's binade (subnormals share
    // the smallest normal's); nearbyint rounds ties to even.
    int exponent = magnitude > 0 ? std::max(std::ilogb(magnitude), minExponent)
                                 : minExponent;
    double unit = std::ldexp(1.0, exponent - mantissaBits);
    rounded = std::min(std::nearbyint(magnitude / unit) * unit, largest);
  }
  if (rounded < std::ldexp(1.0, minExponent))
    return sign | static_cast<uint8_t>(
                      rounded / std::ldexp(1.0, minExponent - mantissaBits));
  int exponent = std::ilogb(rounded);
  int mantissa =
      static_cast<int>(rounded / std::ldexp(1.0, exponent - mantissaBits)) -
      (1 << mantissaBits);
  return sign |
         static_cast<uint8_t>(((exponent + bias) << mantissaBits) | mantissa);
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
