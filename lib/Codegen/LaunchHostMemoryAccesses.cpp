//===- LaunchHostMemoryAccesses.cpp - Host accesses -> one-thread kernels -===//
//
// This file implements ridge-launch-host-memory-accesses. Every buffer of a
// GPU model's host function is device memory, so an element access left in
// the host code would dereference a device pointer on the CPU. Such accesses
// appear when a loop of one iteration folds away before it becomes a
// kernel: the single-thread wrapper of a sequential reduction, the grid of a
// one-element kernel. The upstream fold is right in general; here its result
// is moved back into a kernel, of one thread.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-launch-host-memory-accesses"

namespace mlir::ridge {
#define GEN_PASS_DEF_LAUNCHHOSTMEMORYACCESSESPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;

/// Whether `op` (or an op in its regions, kernels aside) loads or stores
/// memref elements.
static bool accessesElements(Operation *op) {
  WalkResult result = op->walk<WalkOrder::PreOrder>([](Operation *inner) {
    if (isa<gpu::LaunchOp>(inner))
      return WalkResult::skip();
    if (isa<memref::LoadOp, memref::StoreOp, memref::AtomicRMWOp,
            affine::AffineLoadOp, affine::AffineStoreOp, vector::LoadOp,
            vector::StoreOp, vector::TransferReadOp, vector::TransferWriteOp>(
            inner))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// Whether `op` can run inside a kernel: nothing in it launches, allocates,
/// copies through the driver or calls the host (a host loop over time steps
/// that launches a kernel per step stays a host loop).
static bool canRunInKernel(Operation *op) {
  WalkResult result = op->walk([](Operation *inner) {
    if (isa<gpu::LaunchOp, gpu::LaunchFuncOp, gpu::AllocOp, gpu::DeallocOp,
            gpu::MemcpyOp, gpu::MemsetOp, memref::AllocOp, memref::AllocaOp,
            memref::DeallocOp, memref::CopyOp, CallOpInterface>(inner))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// Whether `op` allocates a thread-private buffer (the accumulator of a
/// one-element kernel's reduction, privatized per iteration of the loop that
/// folded away). It moves into the kernel with the accesses: left on the
/// host, the kernel would be handed a pointer into the host's stack. A
/// buffer the host also uses after the run keeps the run on the host.
static bool isPrivateBuffer(Operation *op) { return isa<memref::AllocaOp>(op); }

namespace {
struct LaunchHostMemoryAccessesPass
    : ridge::impl::LaunchHostMemoryAccessesPassBase<
          LaunchHostMemoryAccessesPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || func->getParentOfType<gpu::GPUModuleOp>())
      return;
    for (Block &block : func.getBody())
      launchRuns(block);
  }

  /// Wraps each run of `block`: consecutive ops that access elements, with
  /// the side-effect-free ops between them.
  void launchRuns(Block &block) {
    SmallVector<SmallVector<Operation *>> runs;
    SmallVector<Operation *> current, pending;
    for (Operation &op : block) {
      bool access = accessesElements(&op);
      if (op.hasTrait<OpTrait::IsTerminator>() || isa<gpu::LaunchOp>(op) ||
          (access && !canRunInKernel(&op)) ||
          (!access && !isMemoryEffectFree(&op) && !isPrivateBuffer(&op))) {
        if (access)
          ++numLeftOnHost;
        if (!current.empty())
          runs.push_back(std::move(current));
        current.clear();
        pending.clear();
        continue;
      }
      if (!access) {
        // Pure, or a private buffer: part of the run if an access follows.
        if (!current.empty() || isPrivateBuffer(&op))
          pending.push_back(&op);
        continue;
      }
      current.append(pending.begin(), pending.end());
      pending.clear();
      current.push_back(&op);
    }
    for (SmallVector<Operation *> &run : runs)
      launch(run);
  }

  /// Moves `run` into a gpu.launch of one thread. Pure ops that depend on no
  /// op of the run inside it stay before the launch, where later ops may
  /// use them. A run whose loaded values the host uses later stays where it
  /// is, with a warning: its build runs on the emulator, whose device memory
  /// is the host's, but would read a device pointer on the CPU of a GPU
  /// machine.
  void launch(ArrayRef<Operation *> run) {
    llvm::SmallPtrSet<Operation *, 16> inside;
    SmallVector<Operation *> hoisted, kernel;
    for (Operation *op : run) {
      bool dependsOnRun = llvm::any_of(op->getOperands(), [&](Value value) {
        Operation *def = value.getDefiningOp();
        return def && inside.contains(def);
      });
      if (!accessesElements(op) && !dependsOnRun && !isPrivateBuffer(op)) {
        hoisted.push_back(op);
        continue;
      }
      inside.insert(op);
      kernel.push_back(op);
    }
    for (Operation *op : kernel) {
      for (Operation *user : op->getUsers()) {
        Operation *ancestor = op->getBlock()->findAncestorOpInBlock(*user);
        if (!ancestor || !inside.contains(ancestor)) {
          op->emitWarning("ridge-launch-host-memory-accesses: the host reads "
                          "device memory here and uses the value after the "
                          "access, so the access cannot move into a kernel; "
                          "this build runs on the PTX emulator but not on a "
                          "GPU");
          ++numLeftOnHost;
          return;
        }
      }
    }
    OpBuilder b(run.front());
    for (Operation *op : hoisted)
      op->moveBefore(run.front());
    Location loc = kernel.front()->getLoc();
    b.setInsertionPoint(kernel.front());
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto launch = gpu::LaunchOp::create(b, loc, one, one, one, one, one, one);
    Block &body = launch.getBody().front();
    b.setInsertionPointToStart(&body);
    auto terminator = gpu::TerminatorOp::create(b, loc);
    for (Operation *op : kernel)
      op->moveBefore(terminator);
    LLVM_DEBUG(llvm::dbgs() << "one-thread kernel of " << kernel.size()
                            << " ops at " << loc << "\n");
    ++numLaunches;
  }
};
} // namespace
