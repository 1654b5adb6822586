//===- Passes.h - Ridgeline analysis passes ---------------------*- C++ -*-===//

#ifndef RIDGELINE_ANALYSIS_PASSES_H
#define RIDGELINE_ANALYSIS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ridge {

/// Attribute names the roofline annotation writes.
inline constexpr llvm::StringLiteral kRooflineAttr = "ridge.roofline";
inline constexpr llvm::StringLiteral kRooflineGpuAttr = "ridge.roofline.gpu";

#define GEN_PASS_DECL
#include "ridgeline/Analysis/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ridgeline/Analysis/Passes.h.inc"

} // namespace mlir::ridge

#endif // RIDGELINE_ANALYSIS_PASSES_H
