//===- GraphToLinalgCommon.h - shared graph-to-linalg helpers --*- C++ -*-===//
//
// Private to the GraphToLinalg conversion: builders shared by the per-family
// pattern files (*ToLinalg.cpp) and their populate functions.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_LIB_CONVERSION_GRAPHTOLINALG_GRAPHTOLINALGCOMMON_H
#define RIDGELINE_LIB_CONVERSION_GRAPHTOLINALG_GRAPHTOLINALGCOMMON_H

#include "ridgeline/Conversion/Float8Arithmetic.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::ridge::linalg_lowering {

/// The ranked tensor type of `v`.
inline RankedTensorType getTensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Element type used while reducing: narrow floats accumulate in f32.
Type getAccumulatorType(Type element);

/// `v` extended (arith.extf) to the float type `type`; no-op when equal.
Value extendTo(OpBuilder &b, Location loc, Value v, Type type);

/// `v` truncated (arith.truncf) to the float type `type`; no-op when equal.
Value truncateTo(OpBuilder &b, Location loc, Value v, Type type);

/// The float type a contraction's f32 operands are rounded to before they
/// are multiplied, from its kPrecisionAttr: bf16, f16 or (MatMul, Gemm,
/// Conv) tf32; a null type when the op has none (or "fp32"). Fails, with an
/// error at `op`, on a format the lowering cannot compute in (fp8; tf32 for
/// an attention, whose kernels multiply bf16/f16) or an unknown one.
FailureOr<Type> getOperandRoundingType(Operation *op);

/// The fp8 contraction of MatMul/Gemm (kPrecisionAttr "fp8";
/// docs/precision.md): out[batch..., m, n] = 2^-(e_lhs + e_rhs) *
/// sum_k q(lhs) q(rhs), where q(x) = e4m3(clamp(x * 2^e_x, +-448)) and e_x
/// is the largest exponent that keeps the tensor's amax * 2^e_x at most
/// 448 (getFp8ScaleExponent). An operand defined by a ridge.constant
/// (`graphOperand`, the op's own operand) is quantized here, at compile
/// time, into a new f8E4M3FN weight; any other gets its amax from a
/// whole-tensor max reduction and is quantized by an elementwise op. Both
/// quantized operands are laid out with k innermost (wgmma reads e4m3 only
/// K-major). `lhsMap`/`rhsMap` are over (batch..., m, n, k); the result is
/// f32.
Value buildFp8Contraction(OpBuilder &b, Location loc, Value lhs, Value rhs,
                          Value graphLhs, Value graphRhs, AffineMap lhsMap,
                          AffineMap rhsMap, RankedTensorType resultType);

/// An f32 `v` rounded to `narrow` (bf16, f16, tf32) and widened back, the body
/// pattern the tensor-core code generator recognizes:
/// `arith.extf(arith.truncf(v : f32 to narrow) : narrow to f32)`. `v` itself
/// when `narrow` is null or `v` is not f32.
Value roundThrough(OpBuilder &b, Location loc, Value v, Type narrow);

/// The f32 elements of `graphValue` when a ridge.constant defines it (inline
/// or as a loaded resource blob), row-major.
std::optional<SmallVector<float>> readF32Constant(Value graphValue);

/// `lowered`, the lowering of `graphOperand`, a multiplied operand of the
/// contraction `op`, in the type the compiled model stores it in: a weight
/// that getCompileTimeWeightType narrows becomes a constant of bf16/f16
/// elements, rounded here to nearest even as the body's arith.truncf would
/// round it (a resource `<weight>.bf16`, so that the weights file holds
/// it, shared by every contraction that narrows that weight); any other
/// operand is `lowered` itself. The body's roundThrough leaves the narrow
/// value as it is, and its extf widens it. A weight that
/// isCompileTimeTf32Weight names is stored rounded to tf32, in f32
/// (`<weight>.tf32`): the body's rounding of it is then exact.
Value getStoredOperand(OpBuilder &b, Location loc, Operation *op,
                       Value graphOperand, Value lowered);

/// The B operand `graphOperand` of the tf32 MatMul or Gemm `op`, a
/// [batch..., K, N] weight that isCompileTimeTf32Weight names, stored
/// rounded to tf32 and K-major: [batch..., N, K] (`<weight>.tf32.nk`), the
/// layout wgmma reads tf32 in (and sm_80's ldmatrix without the word-by-word
/// loads an MN-major tf32 tile takes). Null for any other operand.
Value getKMajorTf32Weight(OpBuilder &b, Location loc, Operation *op,
                          Value graphOperand);

/// Indexing map reading `operandType` broadcast (numpy rules) into an
/// iteration space of `resultShape.size()` parallel dims.
AffineMap getBroadcastMap(RankedTensorType operandType,
                          ArrayRef<int64_t> resultShape, MLIRContext *ctx);

/// tensor.empty of `type`.
Value createEmpty(OpBuilder &b, Location loc, RankedTensorType type);

/// A tensor of `type` filled with `value`.
Value createFilled(OpBuilder &b, Location loc, RankedTensorType type,
                   TypedAttr value);

using ScalarBuilder = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// Elementwise linalg.generic over `inputs` broadcast to `resultType`.
Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, ScalarBuilder scalar);

/// Evaluates `body` in f32 for f16/bf16 operands and converts back.
Value computeInAccumulatorType(OpBuilder &b, Location loc, ValueRange args,
                               function_ref<Value(ValueRange)> body);

// Per-family pattern sets, one file each.
void populateElementwiseToLinalgPatterns(const TypeConverter &converter,
                                         RewritePatternSet &patterns);
void populateShapeToLinalgPatterns(const TypeConverter &converter,
                                   RewritePatternSet &patterns);
void populateReductionToLinalgPatterns(const TypeConverter &converter,
                                       RewritePatternSet &patterns);
void populateNNToLinalgPatterns(const TypeConverter &converter,
                                RewritePatternSet &patterns);
void populateQuantizeToLinalgPatterns(const TypeConverter &converter,
                                      RewritePatternSet &patterns);
void populateResampleToLinalgPatterns(const TypeConverter &converter,
                                      RewritePatternSet &patterns);
void populateRecurrentToLinalgPatterns(const TypeConverter &converter,
                                       RewritePatternSet &patterns);
void populateSignalToLinalgPatterns(const TypeConverter &converter,
                                    RewritePatternSet &patterns);
void populateTransformerToLinalgPatterns(const TypeConverter &converter,
                                         RewritePatternSet &patterns);

} // namespace mlir::ridge::linalg_lowering

#endif // RIDGELINE_LIB_CONVERSION_GRAPHTOLINALG_GRAPHTOLINALGCOMMON_H
