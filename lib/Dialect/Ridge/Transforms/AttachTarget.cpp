//===- AttachTarget.cpp - Store the target on the module ------------------===//
//
// Mechanism only: the target is resolved by resolveTarget (Target.h) and
// stored once as `ridge.target`; the passes that decide by target read it.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Analysis/Target.h"
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-attach-target"

namespace mlir::ridge {
#define GEN_PASS_DEF_ATTACHTARGETPASS
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

namespace {
struct AttachTargetPass
    : public ridge::impl::AttachTargetPassBase<AttachTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool anyOption =
        !chip.empty() || !gpu.empty() || !gpuSpec.empty() || !precision.empty();
    if (!anyOption && module->hasAttr(kTargetAttr))
      return markAllAnalysesPreserved();
    TargetRequest request;
    request.chip = chip.empty() ? kDefaultChip.str() : chip.getValue();
    request.gpu = gpu;
    request.gpuSpecFile = gpuSpec;
    request.precision = precision;
    std::string error;
    SmallVector<std::string> warnings;
    FailureOr<TargetSpec> target = resolveTarget(request, error, &warnings);
    if (failed(target)) {
      module.emitError() << error;
      return signalPassFailure();
    }
    for (const std::string &warning : warnings)
      module.emitWarning() << warning;
    LLVM_DEBUG(llvm::dbgs() << "target " << target->chip << " planned for "
                            << target->gpu.name << "\n");
    setModuleTarget(module, *target);
  }
};
} // namespace
