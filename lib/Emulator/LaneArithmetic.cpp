//===- LaneArithmetic.cpp - One lane's PTX arithmetic ---------------------===//
//
// Each PTX operation is one host operation (the library is built with
// -ffp-contract=off): fma is std::fma, min/max follow PTX's NaN and
// signed-zero rules, .ftz flushes f32 subnormals, f16 and bf16 are
// converted bit-exactly (FloatFormats.h), integer forms handle carries,
// wide and high products, bfe, prmt and shf.
//
//===----------------------------------------------------------------------===//

#include "LaneArithmetic.h"

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <optional>

using namespace ridge::emu;
using namespace ridge::emu::detail;

// Directed rounding (.rz/.rm/.rp) runs the host operation under that
// rounding mode. The mode switch is kept out of the optimizer's reach:
// without strict floating-point semantics it may move an operation across it.
#if defined(__clang__)
#define RIDGE_EMU_STRICT_FP __attribute__((noinline, optnone))
#else
#define RIDGE_EMU_STRICT_FP __attribute__((noinline, optimize("O0")))
#endif

namespace {

bool failWith(std::string &error, std::string message) {
  error = std::move(message);
  return false;
}

/// The value of the float operation `op` of PTX on `x`, `y`, `z` in T
/// (float or double), each one host operation; nothing for an opcode that
/// is no such operation.
template <typename T>
std::optional<T> computeFloat(Opcode op, T x, T y, T z, bool nanMode) {
  switch (op) {
  case Opcode::Add:
    return x + y;
  case Opcode::Sub:
    return x - y;
  case Opcode::Mul:
    return x * y;
  case Opcode::Fma:
  case Opcode::Mad:
    return std::fma(x, y, z);
  case Opcode::Div:
    return x / y;
  case Opcode::Min:
    return ptxMin(x, y, nanMode);
  case Opcode::Max:
    return ptxMax(x, y, nanMode);
  case Opcode::Sqrt:
    return std::sqrt(x);
  case Opcode::Rcp:
    return T(1) / x;
  case Opcode::Rsqrt:
    return T(1) / std::sqrt(x);
  case Opcode::Ex2:
    return std::exp2(x);
  case Opcode::Lg2:
    return std::log2(x);
  case Opcode::Sin:
    return std::sin(x);
  case Opcode::Cos:
    return std::cos(x);
  case Opcode::Tanh:
    return std::tanh(x);
  default:
    return std::nullopt;
  }
}

/// `op` on `x`, `y`, `z` in T under the host rounding mode `mode`. The
/// arithmetic runs in computeFloat, called between the mode switches: a
/// call is not moved across them, while inlined arithmetic could be.
template <typename T>
RIDGE_EMU_STRICT_FP std::optional<T> computeDirected(int mode, Opcode op, T x,
                                                     T y, T z) {
  int saved = std::fegetround();
  std::fesetround(mode);
  std::optional<T> r = computeFloat<T>(op, x, y, z, /*nanMode=*/false);
  std::fesetround(saved);
  return r;
}

/// Rounds a float to an integral value as cvt's .rni/.rzi/.rmi/.rpi do.
double roundIntegral(Rounding rounding, double value) {
  switch (rounding) {
  case Rounding::Rni:
    return std::nearbyint(value); // the default mode: ties to even
  case Rounding::Rmi:
    return std::floor(value);
  case Rounding::Rpi:
    return std::ceil(value);
  default:
    return std::trunc(value);
  }
}

} // namespace

bool detail::compareFloat(Compare compare, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  switch (compare) {
  case Compare::Eq:
    return !unordered && a == b;
  case Compare::Ne:
    return !unordered && a != b;
  case Compare::Lt:
    return !unordered && a < b;
  case Compare::Le:
    return !unordered && a <= b;
  case Compare::Gt:
    return !unordered && a > b;
  case Compare::Ge:
    return !unordered && a >= b;
  case Compare::Equ:
    return unordered || a == b;
  case Compare::Neu:
    return unordered || a != b;
  case Compare::Ltu:
    return unordered || a < b;
  case Compare::Leu:
    return unordered || a <= b;
  case Compare::Gtu:
    return unordered || a > b;
  case Compare::Geu:
    return unordered || a >= b;
  case Compare::Num:
    return !unordered;
  case Compare::Nan:
    return unordered;
  default:
    return false;
  }
}

bool detail::compareInt(Compare compare, uint64_t a, uint64_t b, bool isSigned,
                        unsigned bits) {
  int64_t sa = signExtend(a, bits), sb = signExtend(b, bits);
  a &= maskOf(bits);
  b &= maskOf(bits);
  switch (compare) {
  case Compare::Eq:
    return a == b;
  case Compare::Ne:
    return a != b;
  case Compare::Lt:
    return isSigned ? sa < sb : a < b;
  case Compare::Le:
    return isSigned ? sa <= sb : a <= b;
  case Compare::Gt:
    return isSigned ? sa > sb : a > b;
  case Compare::Ge:
    return isSigned ? sa >= sb : a >= b;
  case Compare::Lo:
    return a < b;
  case Compare::Ls:
    return a <= b;
  case Compare::Hi:
    return a > b;
  case Compare::Hs:
    return a >= b;
  default:
    return false;
  }
}

bool detail::computeFloatOp(const Instruction &inst, Type type, uint64_t a,
                            uint64_t b, uint64_t c, uint64_t &result,
                            std::string &error) {
  if (inst.rounding == Rounding::Rz || inst.rounding == Rounding::Rm ||
      inst.rounding == Rounding::Rp) {
    bool directed = inst.opcode == Opcode::Add || inst.opcode == Opcode::Sub ||
                    inst.opcode == Opcode::Mul || inst.opcode == Opcode::Fma ||
                    inst.opcode == Opcode::Mad || inst.opcode == Opcode::Div ||
                    inst.opcode == Opcode::Sqrt;
    if (!directed || (type != Type::F32 && type != Type::F64))
      return failWith(error,
                      "directed rounding is supported for f32/f64 add, sub, "
                      "mul, fma, div and sqrt");
    int mode = inst.rounding == Rounding::Rz   ? FE_TOWARDZERO
               : inst.rounding == Rounding::Rm ? FE_DOWNWARD
                                               : FE_UPWARD;
    if (type == Type::F64) {
      result = f64ToBits(*computeDirected<double>(
          mode, inst.opcode, bitsToF64(a), bitsToF64(b), bitsToF64(c)));
      return true;
    }
    auto input = [&](uint64_t bits) {
      float f = bitsToF32(bits);
      return inst.ftz ? flushF32(f) : f;
    };
    float f = *computeDirected<float>(mode, inst.opcode, input(a), input(b),
                                      input(c));
    if (inst.ftz)
      f = flushF32(f);
    if (inst.sat)
      f = std::isnan(f) ? 0.0f : std::min(1.0f, std::max(0.0f, f));
    result = f32ToBits(f);
    return true;
  }
  if (type == Type::F64) {
    switch (inst.opcode) {
    case Opcode::Neg:
      result = a ^ 0x8000000000000000ull;
      return true;
    case Opcode::Abs:
      result = a & 0x7fffffffffffffffull;
      return true;
    case Opcode::Copysign:
      result = (b & 0x7fffffffffffffffull) | (a & 0x8000000000000000ull);
      return true;
    case Opcode::Ex2:
    case Opcode::Lg2:
    case Opcode::Sin:
    case Opcode::Cos:
    case Opcode::Tanh: // PTX has these in f32 only
      return failWith(error, "unsupported for .f64");
    default:
      break;
    }
    std::optional<double> r = computeFloat(
        inst.opcode, bitsToF64(a), bitsToF64(b), bitsToF64(c), inst.nanMode);
    if (!r)
      return failWith(error, "unsupported for .f64");
    double value = *r;
    if (inst.sat)
      value = std::isnan(value) ? 0.0 : std::min(1.0, std::max(0.0, value));
    result = f64ToBits(value);
    return true;
  }
  if (type == Type::F16x2 || type == Type::BF16x2) {
    Type half = type == Type::F16x2 ? Type::F16 : Type::BF16;
    uint64_t lo, hi;
    if (!computeFloatOp(inst, half, a & 0xffff, b & 0xffff, c & 0xffff, lo,
                        error) ||
        !computeFloatOp(inst, half, (a >> 16) & 0xffff, (b >> 16) & 0xffff,
                        (c >> 16) & 0xffff, hi, error))
      return false;
    result = (lo & 0xffff) | ((hi & 0xffff) << 16);
    return true;
  }
  bool narrow = type == Type::F16 || type == Type::BF16;
  if (narrow) {
    uint64_t sign = 0x8000;
    switch (inst.opcode) {
    case Opcode::Neg:
      result = (a ^ sign) & 0xffff;
      return true;
    case Opcode::Abs:
      result = a & 0x7fff;
      return true;
    default:
      break;
    }
  }
  float x = unpackFloat(type, a), y = unpackFloat(type, b),
        z = unpackFloat(type, c), r;
  bool ftz = inst.ftz && type == Type::F32;
  if (ftz) {
    x = flushF32(x);
    y = flushF32(y);
    z = flushF32(z);
  }
  switch (inst.opcode) {
  case Opcode::Neg:
    result = a ^ 0x80000000ull;
    if (ftz)
      result = f32ToBits(-x);
    return true;
  case Opcode::Abs:
    result = a & 0x7fffffffull;
    if (ftz)
      result = f32ToBits(std::fabs(x));
    return true;
  case Opcode::Copysign:
    result = (b & 0x7fffffffull) | (a & 0x80000000ull);
    return true;
  default:
    break;
  }
  // For the 16-bit formats the f32 result of exact inputs is rounded once
  // more to 16 bits; that double rounding cannot change an f16/bf16 result
  // of add, mul or fma, as f32 carries more than twice their precision.
  std::optional<float> value = computeFloat(inst.opcode, x, y, z, inst.nanMode);
  if (!value)
    return failWith(error,
                    std::string("unsupported for .") + getTypeName(type));
  r = *value;
  if (ftz)
    r = flushF32(r);
  if (inst.sat)
    r = std::isnan(r) ? 0.0f : std::min(1.0f, std::max(0.0f, r));
  result = packFloat(type, r);
  return true;
}

bool detail::computeIntOp(const Instruction &inst, uint64_t a, uint64_t b,
                          uint64_t c, bool carryIn, bool &carryOut,
                          uint64_t &result, std::string &error) {
  unsigned bits = getTypeBits(inst.type);
  bool isSigned = isSignedType(inst.type);
  uint64_t mask = maskOf(bits);
  using u128 = unsigned __int128;
  using s128 = __int128;
  auto setCarry = [&](bool carry) { carryOut = carry; };
  auto product = [&]() -> u128 {
    if (isSigned)
      return static_cast<u128>(static_cast<s128>(signExtend(a, bits)) *
                               static_cast<s128>(signExtend(b, bits)));
    return static_cast<u128>(a & mask) * static_cast<u128>(b & mask);
  };
  if (inst.type == Type::Pred) {
    bool x = a != 0, y = b != 0;
    switch (inst.opcode) {
    case Opcode::And:
      result = x && y;
      return true;
    case Opcode::Or:
      result = x || y;
      return true;
    case Opcode::Xor:
      result = x != y;
      return true;
    case Opcode::Not:
      result = !x;
      return true;
    default:
      return failWith(error, "unsupported for .pred");
    }
  }
  switch (inst.opcode) {
  case Opcode::Add: {
    u128 sum = static_cast<u128>(a & mask) + (b & mask) + carryIn;
    setCarry((sum >> bits) & 1);
    result = static_cast<uint64_t>(sum) & mask;
    if (inst.sat && isSigned && bits == 32) {
      int64_t wide = signExtend(a, 32) + signExtend(b, 32);
      wide = std::min<int64_t>(INT32_MAX, std::max<int64_t>(INT32_MIN, wide));
      result = static_cast<uint64_t>(wide) & mask;
    }
    return true;
  }
  case Opcode::Sub: {
    u128 subtrahend = static_cast<u128>(b & mask) + carryIn;
    setCarry(static_cast<u128>(a & mask) < subtrahend);
    result =
        static_cast<uint64_t>(static_cast<u128>(a & mask) - subtrahend) & mask;
    if (inst.sat && isSigned && bits == 32) {
      int64_t wide = signExtend(a, 32) - signExtend(b, 32);
      wide = std::min<int64_t>(INT32_MAX, std::max<int64_t>(INT32_MIN, wide));
      result = static_cast<uint64_t>(wide) & mask;
    }
    return true;
  }
  case Opcode::Mul: {
    u128 p = product();
    if (inst.wide)
      result = static_cast<uint64_t>(p) & maskOf(2 * bits);
    else if (inst.hi)
      result = static_cast<uint64_t>(p >> bits) & mask;
    else
      result = static_cast<uint64_t>(p) & mask;
    return true;
  }
  case Opcode::Mad: {
    u128 p = product();
    unsigned outBits = inst.wide ? 2 * bits : bits;
    uint64_t outMask = maskOf(outBits);
    uint64_t term = inst.wide ? static_cast<uint64_t>(p) & outMask
                    : inst.hi ? static_cast<uint64_t>(p >> bits) & mask
                              : static_cast<uint64_t>(p) & mask;
    u128 sum = static_cast<u128>(term) + (c & outMask) + carryIn;
    setCarry((sum >> outBits) & 1);
    result = static_cast<uint64_t>(sum) & outMask;
    return true;
  }
  case Opcode::Div:
  case Opcode::Rem: {
    bool div = inst.opcode == Opcode::Div;
    if ((b & mask) == 0) { // undefined in PTX; no trap on the GPU either
      result = div ? mask : a & mask;
      return true;
    }
    if (isSigned) {
      int64_t x = signExtend(a, bits), y = signExtend(b, bits);
      if (y == -1) {
        result = div ? static_cast<uint64_t>(-static_cast<u128>(x)) & mask : 0;
        return true;
      }
      result = static_cast<uint64_t>(div ? x / y : x % y) & mask;
    } else {
      result = (div ? (a & mask) / (b & mask) : (a & mask) % (b & mask));
    }
    return true;
  }
  case Opcode::Min:
  case Opcode::Max: {
    bool isMin = inst.opcode == Opcode::Min;
    if (isSigned) {
      int64_t x = signExtend(a, bits), y = signExtend(b, bits);
      result =
          static_cast<uint64_t>(isMin ? std::min(x, y) : std::max(x, y)) & mask;
    } else {
      result =
          isMin ? std::min(a & mask, b & mask) : std::max(a & mask, b & mask);
    }
    return true;
  }
  case Opcode::And:
    result = a & b & mask;
    return true;
  case Opcode::Or:
    result = (a | b) & mask;
    return true;
  case Opcode::Xor:
    result = (a ^ b) & mask;
    return true;
  case Opcode::Not:
    result = ~a & mask;
    return true;
  case Opcode::Cnot:
    result = (a & mask) == 0 ? 1 : 0;
    return true;
  case Opcode::Neg:
    result = (~a + 1) & mask;
    return true;
  case Opcode::Abs: {
    int64_t x = signExtend(a, bits);
    result = static_cast<uint64_t>(x < 0 ? -static_cast<u128>(x) : x) & mask;
    return true;
  }
  case Opcode::Shl: {
    uint64_t amount = b & 0xffffffffull;
    result = amount >= bits ? 0 : (a << amount) & mask;
    return true;
  }
  case Opcode::Shr: {
    uint64_t amount = b & 0xffffffffull;
    if (isSigned) {
      int64_t x = signExtend(a, bits);
      result = static_cast<uint64_t>(amount >= bits ? (x < 0 ? -1 : 0)
                                                    : x >> amount) &
               mask;
    } else {
      result = amount >= bits ? 0 : (a & mask) >> amount;
    }
    return true;
  }
  case Opcode::Popc:
    result = __builtin_popcountll(a & mask);
    return true;
  case Opcode::Clz: {
    uint64_t x = a & mask;
    result = x == 0 ? bits : __builtin_clzll(x) - (64 - bits);
    return true;
  }
  case Opcode::Brev: {
    uint64_t x = a & mask, r = 0;
    for (unsigned i = 0; i < bits; ++i)
      if ((x >> i) & 1)
        r |= 1ull << (bits - 1 - i);
    result = r;
    return true;
  }
  case Opcode::Bfe: {
    unsigned position = static_cast<unsigned>(b & 0xff);
    unsigned length = static_cast<unsigned>(c & 0xff);
    uint64_t x = a & mask;
    bool msb = false;
    if (isSigned && length > 0)
      msb = (x >> std::min(position + length - 1, bits - 1)) & 1;
    uint64_t r = 0;
    for (unsigned i = 0; i < bits; ++i) {
      bool bit = i < length
                     ? (position + i < bits ? (x >> (position + i)) & 1 : msb)
                     : msb;
      if (bit)
        r |= 1ull << i;
    }
    result = r;
    return true;
  }
  case Opcode::Prmt: {
    uint64_t bytes = (a & 0xffffffffull) | ((b & 0xffffffffull) << 32);
    uint32_t r = 0;
    for (unsigned i = 0; i < 4; ++i) {
      unsigned selector = (c >> (4 * i)) & 0xf;
      uint8_t byte = static_cast<uint8_t>(bytes >> (8 * (selector & 7)));
      if (selector & 8)
        byte = (byte & 0x80) ? 0xff : 0;
      r |= static_cast<uint32_t>(byte) << (8 * i);
    }
    if (inst.mode != 0)
      return failWith(error, "prmt modes are not supported");
    result = r;
    return true;
  }
  case Opcode::Shf: {
    bool right = inst.mode & 1, clamp = inst.mode & 2;
    uint64_t amount = c & 0xffffffffull;
    unsigned n = clamp ? static_cast<unsigned>(std::min<uint64_t>(amount, 32))
                       : static_cast<unsigned>(amount & 31);
    uint64_t pair = (a & 0xffffffffull) | ((b & 0xffffffffull) << 32);
    result = right ? (pair >> n) & 0xffffffffull
                   : ((pair << n) >> 32) & 0xffffffffull;
    return true;
  }
  default:
    return failWith(error,
                    std::string("unsupported for .") + getTypeName(inst.type));
  }
}

bool detail::computeConvert(const Instruction &inst, uint64_t value,
                            uint64_t &result, std::string &error) {
  Type to = inst.type, from = inst.srcType;
  unsigned toBits = getTypeBits(to), fromBits = getTypeBits(from);
  if (!isFloatType(from) && !isFloatType(to)) {
    int64_t x = isSignedType(from)
                    ? signExtend(value, fromBits)
                    : static_cast<int64_t>(value & maskOf(fromBits));
    bool fromUnsignedWide =
        !isSignedType(from) && fromBits == 64 && (value >> 63);
    if (inst.sat) {
      if (isSignedType(to)) {
        int64_t lo = signExtend(1ull << (toBits - 1), toBits);
        int64_t hi = static_cast<int64_t>(maskOf(toBits - 1));
        x = fromUnsignedWide ? hi : std::min(hi, std::max(lo, x));
      } else {
        int64_t hi =
            toBits >= 64 ? INT64_MAX : static_cast<int64_t>(maskOf(toBits));
        if (fromUnsignedWide)
          x = static_cast<int64_t>(maskOf(toBits));
        else
          x = std::min(hi, std::max<int64_t>(0, x));
      }
    }
    result = static_cast<uint64_t>(x) & maskOf(toBits);
    return true;
  }
  if (!isFloatType(from)) { // int -> float
    bool isSigned = isSignedType(from);
    int64_t s = signExtend(value, fromBits);
    uint64_t u = value & maskOf(fromBits);
    if (inst.rounding != Rounding::Rn && inst.rounding != Rounding::Default) {
      // Directed rounding matters only where the integer is not exact.
      double exact = isSigned ? static_cast<double>(s) : static_cast<double>(u);
      bool fits = to == Type::F64 ? std::fabs(exact) <= 9007199254740992.0
                                  : std::fabs(exact) <= 2048.0;
      if (!fits)
        return failWith(
            error, "directed rounding of a large integer is not supported");
    }
    if (to == Type::F64) {
      result =
          f64ToBits(isSigned ? static_cast<double>(s) : static_cast<double>(u));
    } else if (to == Type::F32) {
      result =
          f32ToBits(isSigned ? static_cast<float>(s) : static_cast<float>(u));
    } else if (to == Type::F16 || to == Type::BF16) {
      float f = isSigned ? static_cast<float>(s) : static_cast<float>(u);
      if (std::fabs(f) > 16777216.0f)
        return failWith(error,
                        "integer to 16-bit float above 2^24 is not supported");
      result = packFloat(to, f);
    } else {
      return failWith(error, "unsupported conversion");
    }
    return true;
  }
  // From a float format.
  double x;
  if (from == Type::F64)
    x = bitsToF64(value);
  else if (from == Type::F32 || from == Type::F16 || from == Type::BF16)
    x = unpackFloat(from, value);
  else
    return failWith(error, "unsupported conversion source");
  if (inst.ftz && from == Type::F32)
    x = flushF32(static_cast<float>(x));
  if (!isFloatType(to)) { // float -> int: round, saturate, NaN -> 0
    if (std::isnan(x)) {
      result = 0;
      return true;
    }
    double r = roundIntegral(inst.rounding, x);
    if (isSignedType(to)) {
      double lo = -std::ldexp(1.0, toBits - 1),
             hi = std::ldexp(1.0, toBits - 1);
      int64_t v = r <= lo   ? signExtend(1ull << (toBits - 1), toBits)
                  : r >= hi ? static_cast<int64_t>(maskOf(toBits - 1))
                            : static_cast<int64_t>(r);
      result = static_cast<uint64_t>(v) & maskOf(toBits);
    } else {
      double hi = std::ldexp(1.0, toBits);
      uint64_t v = r <= 0    ? 0
                   : r >= hi ? maskOf(toBits)
                             : static_cast<uint64_t>(r);
      result = v;
    }
    return true;
  }
  if (to == Type::TF32) {
    // cvt.rna.tf32.f32 (and sm_90's .rn/.rz): an f32 with the low 13
    // mantissa bits rounded off, kept in a .b32 register.
    if (from != Type::F32)
      return failWith(error, "unsupported conversion source for .tf32");
    uint32_t bits = static_cast<uint32_t>(value);
    if (!std::isnan(x)) {
      uint32_t low = bits & 0x1fffu;
      bool up = inst.rounding == Rounding::Rna ? low >= 0x1000u
                : inst.rounding == Rounding::Rz
                    ? false
                    : low > 0x1000u || (low == 0x1000u && (bits & 0x2000u));
      // Sign and magnitude: rounding the magnitude up carries into the
      // exponent, and past the largest finite value to infinity.
      bits = (bits & ~0x1fffu) + (up ? 0x2000u : 0u);
    }
    result = bits;
    return true;
  }
  // float -> float.
  bool integral =
      inst.rounding == Rounding::Rni || inst.rounding == Rounding::Rzi ||
      inst.rounding == Rounding::Rmi || inst.rounding == Rounding::Rpi;
  if (integral)
    x = roundIntegral(inst.rounding, x);
  bool directed =
      inst.rounding == Rounding::Rz || inst.rounding == Rounding::Rm ||
      inst.rounding == Rounding::Rp || inst.rounding == Rounding::Rna;
  if (directed && toBits < fromBits)
    return failWith(
        error, "directed rounding of a narrowing conversion is not supported");
  if (inst.sat)
    x = std::isnan(x) ? 0.0 : std::min(1.0, std::max(0.0, x));
  switch (to) {
  case Type::F64:
    result = f64ToBits(x);
    return true;
  case Type::F32: {
    float f = static_cast<float>(x);
    if (inst.ftz)
      f = flushF32(f);
    result = f32ToBits(f);
    return true;
  }
  case Type::F16:
  case Type::BF16:
    result = packFloat(to, from == Type::F64 ? f64ToF32RoundToOdd(x)
                                             : static_cast<float>(x));
    return true;
  default:
    return failWith(error, "unsupported conversion target");
  }
}
