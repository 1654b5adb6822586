//===- GpuHostBuffers.cpp - Host buffers -> device memory -----------------===//
//
// Kernels only see device memory. The runtime passes device pointers for the
// model's inputs and outputs; this pass moves everything else the host
// function allocates or reads (temporaries, weights) to the device.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "mlir/IR/PatternMatch.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-gpu-host-buffers"

namespace mlir::ridge {
#define GEN_PASS_DEF_GPUHOSTBUFFERSPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;

namespace {

struct GpuHostBuffersPass
    : ridge::impl::GpuHostBuffersPassBase<GpuHostBuffersPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      SmallVector<Operation *> worklist;
      func.walk([&](Operation *op) {
        if (isa<memref::AllocOp, memref::DeallocOp, memref::GetGlobalOp,
                memref::CopyOp>(op) &&
            !op->getParentOfType<gpu::LaunchOp>() &&
            !op->getParentOfType<scf::ParallelOp>())
          worklist.push_back(op);
      });
      LLVM_DEBUG(llvm::dbgs() << func.getName() << ": " << worklist.size()
                              << " host buffer ops to device memory\n");
      for (Operation *op : worklist) {
        rewriter.setInsertionPoint(op);
        Location loc = op->getLoc();
        if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
          auto device = gpu::AllocOp::create(
              rewriter, loc, alloc.getType(), /*asyncToken=*/Type(),
              ValueRange{}, alloc.getDynamicSizes(), alloc.getSymbolOperands(),
              /*hostShared=*/false);
          // What the allocation's makers said of it (kKeptZeroAttr) holds
          // of the device buffer.
          device->setDiscardableAttrs(alloc->getDiscardableAttrDictionary());
          rewriter.replaceOp(alloc, device.getMemref());
        } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
          gpu::DeallocOp::create(rewriter, loc, /*asyncToken=*/Type(),
                                 ValueRange{}, dealloc.getMemref());
          rewriter.eraseOp(dealloc);
        } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
          // Host-level copies (results materialized into out-parameters)
          // move device data.
          gpu::MemcpyOp::create(rewriter, loc, /*asyncToken=*/Type(),
                                ValueRange{}, copy.getTarget(),
                                copy.getSource());
          rewriter.eraseOp(copy);
        } else if (auto global = dyn_cast<memref::GetGlobalOp>(op)) {
          // Weights: stage a device copy for this run and free it at exit.
          rewriter.setInsertionPointAfter(global);
          auto device = gpu::AllocOp::create(
              rewriter, loc, global.getType(), Type(), ValueRange{},
              ValueRange{}, ValueRange{}, /*hostShared=*/false);
          gpu::MemcpyOp::create(rewriter, loc, /*asyncToken=*/Type(),
                                ValueRange{}, device.getMemref(),
                                global.getResult());
          rewriter.replaceAllUsesExcept(
              global.getResult(), device.getMemref(),
              llvm::SmallPtrSet<Operation *, 2>{device, device->getNextNode()});
          func.walk([&](func::ReturnOp ret) {
            rewriter.setInsertionPoint(ret);
            gpu::DeallocOp::create(rewriter, loc, Type(), ValueRange{},
                                   device.getMemref());
          });
        }
      }
    }
  }
};

} // namespace
