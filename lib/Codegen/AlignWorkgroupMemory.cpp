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
/// The alignment of buffers of a kilobyte or more: the swizzled layouts
/// wgmma reads (and the tensor-core kernels write) permute 16-byte chunks by
/// address bits 7-9, so a buffer starts on a 1024-byte swizzle atom.
static constexpr int64_t kSwizzleAtomAlignment = 1024;

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
        auto type =
            cast<MemRefType>(func.getWorkgroupAttributions()[i].getType());
        int64_t bytes =
            type.hasStaticShape()
                ? type.getNumElements() *
                      llvm::divideCeil(type.getElementTypeBitWidth(), 8)
                : 0;
        int64_t alignment = bytes >= kSwizzleAtomAlignment
                                ? kSwizzleAtomAlignment
                                : kSharedAlignment;
        func.setWorkgroupAttributionAttr(i, alignName,
                                         builder.getI64IntegerAttr(alignment));
        LLVM_DEBUG(llvm::dbgs() << func.getName() << ": workgroup buffer " << i
                                << " aligned to " << alignment << "\n");
      }
    });
  }
};
} // namespace
