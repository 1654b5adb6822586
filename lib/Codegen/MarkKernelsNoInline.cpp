//===- MarkKernelsNoInline.cpp - Keep kernel functions apart on the host --===//
//
// On the CPU each kernel stays a function of its own, called from the model
// function, so that every analysis and LLVM optimization works on one
// kernel at a time and compile time grows linearly with the number of
// kernels. LLVM would inline a private function with one call site back
// into the model function; `noinline` (carried by func-to-llvm as the
// llvm.func's `passthrough`) keeps it out.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::ridge {
#define GEN_PASS_DEF_MARKKERNELSNOINLINEPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

namespace {
struct MarkKernelsNoInlinePass
    : ridge::impl::MarkKernelsNoInlinePassBase<MarkKernelsNoInlinePass> {
  void runOnOperation() override {
    Builder b(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !func->hasAttr(kKernelAttr))
        continue;
      SmallVector<Attribute> passthrough;
      if (auto existing = func->getAttrOfType<ArrayAttr>("passthrough"))
        passthrough.assign(existing.begin(), existing.end());
      if (llvm::is_contained(passthrough, b.getStringAttr("noinline")))
        continue;
      passthrough.push_back(b.getStringAttr("noinline"));
      func->setAttr("passthrough", b.getArrayAttr(passthrough));
      ++numMarkedKernels;
    }
  }
};
} // namespace
