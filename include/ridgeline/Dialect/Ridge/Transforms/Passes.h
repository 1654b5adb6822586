//===- Passes.h - Graph-level ridge dialect passes --------------*- C++ -*-===//
//
// Passes on the graph dialect: the target and the model ABI recorded as
// module attributes, fusion groups formed and outlined into kernels.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_DIALECT_RIDGE_TRANSFORMS_PASSES_H
#define RIDGELINE_DIALECT_RIDGE_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

namespace mlir::ridge {

/// Describes @main's inputs and outputs (ONNX names verbatim, ModelAbi.h
/// dtypes, static shapes) for `target` and stores the description as the
/// module's kModelAbiAttr. Must run on the graph module, while ONNX names
/// and signedness are still known. What ridge-attach-model-abi runs.
LogicalResult attachModelAbi(ModuleOp module, StringRef target);

#define GEN_PASS_DECL
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h.inc"

} // namespace mlir::ridge

#endif // RIDGELINE_DIALECT_RIDGE_TRANSFORMS_PASSES_H
