//===- MergeGpuModules.cpp - One gpu.module per model ---------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "mlir/IR/SymbolTable.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-merge-gpu-modules"

namespace mlir::ridge {
#define GEN_PASS_DEF_MERGEGPUMODULESPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;

namespace {

struct MergeGpuModulesPass
    : ridge::impl::MergeGpuModulesPassBase<MergeGpuModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto gpuModules = llvm::to_vector(module.getOps<gpu::GPUModuleOp>());
    if (gpuModules.size() < 2)
      return;
    gpu::GPUModuleOp target = gpuModules.front();
    SymbolTable targetSymbols(target);
    // Old (module, kernel) -> new kernel symbol.
    DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    for (gpu::GPUModuleOp source : ArrayRef(gpuModules).drop_front()) {
      for (Operation &op :
           llvm::make_early_inc_range(source.getBody()->getOperations())) {
        auto symbol = dyn_cast<SymbolOpInterface>(&op);
        if (!symbol)
          continue;
        StringAttr oldName = symbol.getNameAttr();
        op.remove();
        // SymbolTable::insert renames on collision.
        StringAttr newName = targetSymbols.insert(&op);
        renamed[{source.getNameAttr(), oldName}] = newName;
      }
      source.erase();
    }
    LLVM_DEBUG(llvm::dbgs()
               << "merged " << gpuModules.size() << " gpu.modules into @"
               << target.getName() << "\n");
    module.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr kernel = launch.getKernel();
      auto it =
          renamed.find({kernel.getRootReference(), kernel.getLeafReference()});
      if (it == renamed.end())
        return;
      launch.setKernelAttr(SymbolRefAttr::get(
          target.getNameAttr(), {FlatSymbolRefAttr::get(it->second)}));
    });
  }
};

} // namespace
