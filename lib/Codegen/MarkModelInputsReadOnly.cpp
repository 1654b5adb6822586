//===- MarkModelInputsReadOnly.cpp - The caller's inputs are not scratch --===//
//
// The model function's tensor arguments are the caller's input buffers (the
// runtime's, or an application's through the C interface). One-shot
// bufferization treats function arguments as writable by default, so a
// kernel that updates a state in place (LinearAttention's recurrence over
// its past state, a scatter into an input) would write the result into the
// caller's input: the next run with the same buffers starts from the
// previous run's state. Marked `bufferization.writable = false`, such an
// argument is copied once into a buffer of the model's own before the first
// write; a kernel that only reads it still reads it in place.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/Statistic.h"

#define DEBUG_TYPE "ridge-mark-model-inputs-read-only"

namespace mlir::ridge {
#define GEN_PASS_DEF_MARKMODELINPUTSREADONLYPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

namespace {
struct MarkModelInputsReadOnlyPass
    : ridge::impl::MarkModelInputsReadOnlyPassBase<
          MarkModelInputsReadOnlyPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      // The model functions: public, with a body (kernels are private).
      if (func.isExternal() || func.isPrivate())
        continue;
      for (auto [index, type] : llvm::enumerate(func.getArgumentTypes())) {
        if (!isa<TensorType>(type) ||
            func.getArgAttr(
                index, bufferization::BufferizationDialect::kWritableAttrName))
          continue;
        func.setArgAttr(index,
                        bufferization::BufferizationDialect::kWritableAttrName,
                        b.getBoolAttr(false));
        ++numReadOnlyInputs;
      }
    }
  }
};
} // namespace
