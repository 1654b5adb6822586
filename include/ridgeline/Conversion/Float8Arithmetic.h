//===- Float8Arithmetic.h - float8 conversions as integer ops ---*- C++ -*-===//
//
// The float8 types (f8E4M3FN, f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ) have no LLVM
// type: neither LLVM's CPU back ends nor NVPTX before sm_89 convert to or
// from them. These builders compute the conversions with exact integer and
// float arithmetic that both back ends (and the PTX emulator) run as they run
// any other: decoding is exact, encoding rounds to nearest even once, from
// the source value. The graph-to-linalg lowering stores ONNX float8 tensors
// as their i8 bit patterns with them; ridge-expand-float8-conversions
// rewrites `arith.truncf`/`arith.extf` of f8E4M3FN (fp8 contractions) with
// them.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_CONVERSION_FLOAT8ARITHMETIC_H
#define RIDGELINE_CONVERSION_FLOAT8ARITHMETIC_H

#include "mlir/IR/Builders.h"

namespace mlir::ridge {

/// True for the ONNX float8 types (f8E4M3FN, f8E4M3FNUZ, f8E5M2,
/// f8E5M2FNUZ).
bool isOnnxFloat8(Type type);

/// The f32 value of `bits` (i8), the bit pattern of a value of the float8
/// `type`; exact, NaN for its NaNs.
Value decodeFloat8(OpBuilder &b, Location loc, Value bits, FloatType type);

/// The bit pattern (i8) of the float `value` rounded to nearest even in the
/// float8 `type` (ONNX Cast-19): overflow and infinities give the largest
/// finite value when `saturate`, else infinity (f8E5M2) or NaN; FNUZ types
/// have no negative zero, and 0x80 is their NaN.
Value encodeFloat8(OpBuilder &b, Location loc, Value value, FloatType type,
                   bool saturate);

/// The largest finite f8E4M3FN value.
inline constexpr float kFp8E4M3Max = 448.0f;

/// The per-tensor scale exponent of an fp8 (e4m3) operand whose largest
/// magnitude is `amax`: the largest e with amax * 2^e <= 448, clamped to
/// [-126, 126] (so that 2^e and 2^-e are normal f32s; an all-zero tensor
/// gets 126). A power of two makes the scaling and the dequantization exact
/// (only the rounding to e4m3 loses bits), which keeps a CPU build and a GPU
/// build bit-identical up to the order of the fp32 sums. Computed on the f32
/// bits: amax = 1.f * 2^(E - 127) fits 448 = 1.75 * 2^8 times 2^e for
/// e = 135 - E when 1.f <= 1.75, else 134 - E.
int getFp8ScaleExponent(float amax);

/// The same as getFp8ScaleExponent, built as arith ops on the f32 `amax`
/// (an i32 result).
Value buildFp8ScaleExponent(OpBuilder &b, Location loc, Value amax);

/// 2^`exponent` as an f32, built on the i32 `exponent` in [-126, 127].
Value buildPowerOfTwo(OpBuilder &b, Location loc, Value exponent);

/// The f8E4M3FN bits of `x` * 2^`exponent` clamped to +-448 and rounded to
/// nearest even (NaN stays NaN): one element of a weight quantized at
/// compile time, as the quantizing op computes it at run time.
uint8_t quantizeToE4M3(float x, int exponent);

} // namespace mlir::ridge

#endif // RIDGELINE_CONVERSION_FLOAT8ARITHMETIC_H
