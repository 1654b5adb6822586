//===- Passes.h - Ridgeline target passes -----------------------*- C++ -*-===//
//
// Passes that finish the compiled artifact at LLVM dialect level: the model
// ABI's C entry points and descriptor.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_TARGET_PASSES_H
#define RIDGELINE_TARGET_PASSES_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ridge {

#define GEN_PASS_DECL
#include "ridgeline/Target/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ridgeline/Target/Passes.h.inc"

} // namespace mlir::ridge

#endif // RIDGELINE_TARGET_PASSES_H
