//===- ExternDynamicSharedMemory.cpp - extern __shared__ char smem[] ------===//
//
// MLIR 22 lowers `gpu.dynamic_shared_memory` to an internal `[0 x i8]`
// global in the shared address space. NVPTX prints an internal zero-sized
// global as a one-byte static variable, so the kernel's dynamic shared
// memory is "whatever follows one byte of static shared memory": it works
// because the driver places the dynamic allocation right after the static
// one, but ptxas counts a static byte, the alignment is the global's 16
// bytes, and nothing declares the dynamic array. An external zero-sized
// shared array is what CUDA's `extern __shared__` becomes, and what the
// launch's dynamic bytes are bound to.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-extern-dynamic-shared-memory"

namespace mlir::ridge {
#define GEN_PASS_DEF_EXTERNDYNAMICSHAREDMEMORYPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;

/// The alignment of the dynamic array: the atom of the 128-byte swizzle
/// (1024 bytes), which the tensor-core kernels' TMA copies and wgmma
/// descriptors agree on.
static constexpr uint64_t kDynamicSharedAlignment = 1024;

namespace {
struct ExternDynamicSharedMemoryPass
    : ridge::impl::ExternDynamicSharedMemoryPassBase<
          ExternDynamicSharedMemoryPass> {
  void runOnOperation() override {
    getOperation().walk([&](LLVM::GlobalOp global) {
      auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      if (!array || array.getNumElements() != 0 ||
          global.getAddrSpace() !=
              static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared) ||
          global.getValueOrNull() || global.getInitializerBlock())
        return;
      global.setLinkage(LLVM::Linkage::External);
      global.setAlignment(std::max<uint64_t>(global.getAlignment().value_or(0),
                                             kDynamicSharedAlignment));
      LLVM_DEBUG(llvm::dbgs() << global.getSymName()
                              << ": the kernel's dynamic shared memory\n");
    });
  }
};
} // namespace
