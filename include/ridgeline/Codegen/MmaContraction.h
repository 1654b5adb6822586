//===- MmaContraction.h - Contractions the tensor-core path takes -*- C++
//-*-===//
//
// The shape of a kernel that the tensor-core GEMM core implements: a zero
// fill, a contraction whose operands are rounded to (or stored in) a 16-bit
// float type, and at most one elementwise epilogue. The same matcher runs on
// tensors (ridge-select-kernel-config decides the kernel's `mma` config) and
// on buffers (ridge-lower-mma-contractions builds the kernel), so the policy
// never picks the path for a kernel the mechanism cannot build.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_CODEGEN_MMACONTRACTION_H
#define RIDGELINE_CODEGEN_MMACONTRACTION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::ridge {

/// How one operand of an MMA contraction is read.
struct MmaOperand {
  /// The operand (a tensor or a buffer).
  Value value;
  /// Its map over the contraction's loops (batch..., m, n, k).
  AffineMap map;
  /// The 16-bit float type the tensor-core instruction multiplies (bf16 or
  /// f16): the operand's own type, or the type the contraction body rounds
  /// an f32 operand to (`extf(truncf(x))`).
  FloatType mmaType;
  /// Whether the operand's innermost (contiguous) dimension is the reduction
  /// dimension k (A: row-major m x k; B: "column-major", n x k); otherwise it
  /// is m (A) or n (B).
  bool kContiguous = true;
};

/// A kernel the tensor-core path implements.
struct MmaContraction {
  linalg::LinalgOp fill;
  linalg::LinalgOp contraction;
  /// The elementwise op reading the contraction's result (bias, activation,
  /// residual add, cast), or null when the contraction's result is the
  /// kernel's.
  linalg::GenericOp epilogue;
  MmaOperand lhs, rhs;
  /// Loop extents: batch dims (possibly none), then m, n, k.
  SmallVector<int64_t> batch;
  int64_t m = 0, n = 0, k = 0;
};

/// Matches `kernel` (on tensors or buffers). On failure, `reason` says why
/// (for LLVM_DEBUG and remarks).
FailureOr<MmaContraction> matchMmaContraction(func::FuncOp kernel,
                                              std::string &reason);

} // namespace mlir::ridge

#endif // RIDGELINE_CODEGEN_MMACONTRACTION_H
