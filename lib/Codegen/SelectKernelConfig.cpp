//===- SelectKernelConfig.cpp - Decide each kernel's strategy once --------===//
//
// Mechanism only: selectKernelConfig (KernelConfig.cpp) decides, this pass
// records the decision as the kernel function's `ridge.kernel_config`, which
// ridge-tile-kernel-bodies builds the loop nest by.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Analysis/Target.h"
#include "ridgeline/Codegen/KernelConfig.h"
#include "ridgeline/Codegen/Passes.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

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
    // A config set by hand (lit tests) is checked and kept; one without
    // tile sizes gets the decided ones.
    FailureOr<std::optional<KernelConfig>> existing = getKernelConfig(kernel);
    if (failed(existing))
      return signalPassFailure();
    KernelConfig config = existing->value_or(KernelConfig());
    if (!*existing || config.tileSizes.empty()) {
      FailureOr<TargetSpec> target = getTargetForPass(kernel);
      if (failed(target))
        return signalPassFailure();
      KernelConfig selected = selectKernelConfig(kernel, *target);
      if (*existing) {
        config.tileSizes = std::move(selected.tileSizes);
      } else {
        config = std::move(selected);
        ++numConfiguredKernels;
      }
    }
    if (!config.tileSizes.empty())
      ++numTiledKernels;
    // The attention kernel is built on buffers, where the scf.forall that
    // carries its description is gone: the function keeps it.
    if (config.usesAttentionKernel())
      if (DictionaryAttr attention = getOnlineAttentionAttr(kernel))
        kernel->setAttr(kOnlineAttentionAttr, attention);
    DictionaryAttr attr = config.toAttr(&getContext());
    kernel->setAttr(kKernelConfigAttr, attr);
    LLVM_DEBUG(llvm::dbgs() << kernel.getName() << ": " << attr << "\n");
  }
};
} // namespace
