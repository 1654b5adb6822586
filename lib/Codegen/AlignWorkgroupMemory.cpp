//===- AlignWorkgroupMemory.cpp - 16-byte aligned shared memory -----------===//

#include "ridgeline/Codegen/Passes.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-align-workgroup-memory"

namespace mlir::ridge {
#define GEN_PASS_DEF_ALIGNWORKGROUPMEMORYPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;

/// The alignment of 16-byte vector accesses and `ldmatrix` rows.
static constexpr int64_t kSharedAlignment = 16;

namespace {
struct AlignWorkgroupMemoryPass
    : ridge::impl::AlignWorkgroupMemoryPassBase<AlignWorkgroupMemoryPass> {
  void runOnOperation() override {
    StringRef alignName = LLVM::LLVMDialect::getAlignAttrName();
    Builder builder(&getContext());
    getOperation().walk([&](gpu::GPUFuncOp func) {
      for (unsigned i = 0, e = func.getNumWorkgroupAttributions(); i < e; ++i) {
        if (func.getWorkgroupAttributionAttr(i, alignName))
          continue;
        func.setWorkgroupAttributionAttr(
            i, alignName, builder.getI64IntegerAttr(kSharedAlignment));
        LLVM_DEBUG(llvm::dbgs() << func.getName() << ": workgroup buffer " << i
                                << " aligned to " << kSharedAlignment << "\n");
      }
    });
  }
};
} // namespace
