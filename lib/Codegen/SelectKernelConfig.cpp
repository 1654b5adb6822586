//===- SelectKernelConfig.cpp - Decide each kernel's strategy once --------===//
//
// Mechanism only: selectKernelConfig (KernelConfig.cpp) decides, this pass
// records the decision as the kernel function's `ridge.kernel_config`.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Analysis/Target.h"
#include "ridgeline/Codegen/KernelConfig.h"
#include "ridgeline/Codegen/Passes.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-select-kernel-config"

namespace mlir::ridge {
#define GEN_PASS_DEF_SELECTKERNELCONFIGPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

namespace {
struct SelectKernelConfigPass
    : public ridge::impl::SelectKernelConfigPassBase<SelectKernelConfigPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp kernel = getOperation();
    if (kernel.isExternal() || !kernel->hasAttr(kKernelAttr))
      return;
    // A config set by hand (lit tests) is obeyed, once checked.
    FailureOr<std::optional<KernelConfig>> existing = getKernelConfig(kernel);
    if (failed(existing))
      return signalPassFailure();
    DictionaryAttr attr;
    if (*existing) {
      attr = (*existing)->toAttr(&getContext());
    } else {
      FailureOr<TargetSpec> target = getTargetForPass(kernel);
      if (failed(target))
        return signalPassFailure();
      attr = selectKernelConfig(kernel, *target).toAttr(&getContext());
      ++numConfiguredKernels;
    }
    kernel->setAttr(kKernelConfigAttr, attr);
    // The kernel's loop nests (its tiled scf.forall, or its ops when it is
    // one op) carry the config through inlining and bufferization to the
    // mapping passes.
    for (Operation &op : kernel.front())
      if (isa<scf::ForallOp, linalg::LinalgOp>(op))
        op.setAttr(kKernelConfigAttr, attr);
    LLVM_DEBUG(llvm::dbgs() << kernel.getName() << ": " << attr << "\n");
  }
};
} // namespace
