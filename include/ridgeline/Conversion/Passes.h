//===- Passes.h - Ridgeline conversion passes ---------------------*- C++
//-*-===//

#ifndef RIDGELINE_CONVERSION_PASSES_H
#define RIDGELINE_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
class TypeConverter;
namespace ridge {

#define GEN_PASS_DECL
#include "ridgeline/Conversion/Passes.h.inc"

/// Patterns lowering ridge ops to linalg/tensor; `converter` maps unsigned
/// integer tensors to signless ones.
void populateGraphToLinalgPatterns(const TypeConverter &converter,
                                   RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "ridgeline/Conversion/Passes.h.inc"

} // namespace ridge
} // namespace mlir

#endif // RIDGELINE_CONVERSION_PASSES_H
