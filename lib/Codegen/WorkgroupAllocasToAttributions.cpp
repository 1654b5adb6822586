//===- WorkgroupAllocasToAttributions.cpp - Shared buffers of a launch ----===//
//
// A mapping pass that runs before the launches exist (a row shared by the
// warps of a block, ridge-map-row-loops-to-warps) allocates the block's
// shared buffer as a `memref.alloca` in the workgroup address space inside
// the thread loop. convert-parallel-loops-to-gpu moves it into the
// `gpu.launch` body, where NVVM cannot lower it (an alloca is local
// memory). This pass makes each such alloca a workgroup attribution of its
// launch: one buffer per block, as the alloca meant.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-workgroup-allocas-to-attributions"

namespace mlir::ridge {
#define GEN_PASS_DEF_WORKGROUPALLOCASTOATTRIBUTIONSPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;

/// Whether `type` lives in the workgroup (shared) address space.
static bool isWorkgroupMemory(MemRefType type) {
  auto space =
      dyn_cast_if_present<gpu::AddressSpaceAttr>(type.getMemorySpace());
  return space &&
         space.getValue() == gpu::GPUDialect::getWorkgroupAddressSpace();
}

namespace {
struct WorkgroupAllocasToAttributionsPass
    : public ridge::impl::WorkgroupAllocasToAttributionsPassBase<
          WorkgroupAllocasToAttributionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<memref::AllocaOp> allocas;
    getOperation()->walk([&](memref::AllocaOp alloca) {
      if (isWorkgroupMemory(alloca.getType()))
        allocas.push_back(alloca);
    });
    for (memref::AllocaOp alloca : allocas) {
      auto launch = alloca->getParentOfType<gpu::LaunchOp>();
      if (!launch || !alloca.getType().hasStaticShape() ||
          !alloca.getDynamicSizes().empty()) {
        alloca.emitOpError() << "allocates workgroup memory outside a "
                                "gpu.launch or of a dynamic shape: no "
                                "launch attribution can hold it";
        return signalPassFailure();
      }
      // The buffer is one per block only if no loop of the launch body
      // repeats the allocation.
      if (alloca->getParentOp() != launch.getOperation()) {
        alloca.emitOpError() << "allocates workgroup memory inside a loop or "
                                "branch of the launch: one attribution per "
                                "block would not match it";
        return signalPassFailure();
      }
      BlockArgument buffer =
          launch.addWorkgroupAttribution(alloca.getType(), alloca.getLoc());
      alloca.replaceAllUsesWith(buffer);
      alloca.erase();
      ++numPromoted;
    }
    LLVM_DEBUG(llvm::dbgs()
               << "promoted " << allocas.size() << " workgroup allocas\n");
  }
};
} // namespace
