//===- Passes.h - Ridgeline transformation passes -----------------*- C++
//-*-===//

#ifndef RIDGELINE_TRANSFORMS_PASSES_H
#define RIDGELINE_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

namespace mlir::ridge {

/// Attribute marking a function outlined from a fusion group; its value is
/// the group's kind.
inline constexpr llvm::StringLiteral kKernelAttr = "ridge.kernel";

/// Module attribute describing the model's inputs and outputs for the
/// runtime (ridge-attach-model-abi; lowered by ridge-emit-model-abi).
inline constexpr llvm::StringLiteral kModelAbiAttr = "ridge.model_abi";

/// Describes @main's inputs and outputs (ONNX names verbatim, ModelAbi.h
/// dtypes, static shapes) for `target` and stores the description as the
/// module's kModelAbiAttr. Must run on the graph module, while ONNX names
/// and signedness are still known. What ridge-attach-model-abi runs.
LogicalResult attachModelAbi(ModuleOp module, StringRef target);

#define GEN_PASS_DECL
#include "ridgeline/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ridgeline/Transforms/Passes.h.inc"

} // namespace mlir::ridge

#endif // RIDGELINE_TRANSFORMS_PASSES_H
