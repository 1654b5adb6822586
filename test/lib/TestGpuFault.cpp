//===- TestGpuFault.cpp - Break one GPU kernel, for tests -----------------===//
//
// test-ridge-inject-gpu-fault{fault=KIND kernel=NAME} and the hook behind
// ridge-run's hidden --inject-gpu-fault. The PTX emulator is how CI checks
// GPU code; this pass shows that it does, by building a model with one
// kernel broken in a way that GPU code really goes wrong (an index map off
// by one, a missing barrier, a shuffle from the wrong lane, a vector access
// off its alignment) so that the tests can assert that the emulated run
// reports it, naming the kernel (test/Emulator/gpu-faults.test).
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "test-ridge-inject-gpu-fault"

using namespace mlir;

namespace {

enum class Fault {
  ThreadIndex,
  DropBarrier,
  DropFence,
  ShuffleLane,
  MisalignedVector
};

std::optional<Fault> parseFault(StringRef name) {
  return llvm::StringSwitch<std::optional<Fault>>(name)
      .Case("thread-index", Fault::ThreadIndex)
      .Case("drop-barrier", Fault::DropBarrier)
      .Case("drop-fence", Fault::DropFence)
      .Case("shuffle-lane", Fault::ShuffleLane)
      .Case("misaligned-vector", Fault::MisalignedVector)
      .Default(std::nullopt);
}

/// The first op of `kernel` that `fault` corrupts, or null.
Operation *findTarget(gpu::GPUFuncOp kernel, Fault fault) {
  Operation *target = nullptr;
  kernel.walk([&](Operation *op) {
    bool matches = false;
    switch (fault) {
    case Fault::ThreadIndex:
      if (auto tid = dyn_cast<gpu::ThreadIdOp>(op))
        matches = tid.getDimension() == gpu::Dimension::x;
      break;
    case Fault::DropBarrier:
      matches = isa<gpu::BarrierOp>(op);
      break;
    case Fault::DropFence:
      matches = isa<LLVM::FenceOp>(op);
      break;
    case Fault::ShuffleLane:
      matches = isa<gpu::ShuffleOp>(op);
      break;
    case Fault::MisalignedVector:
      if (auto load = dyn_cast<vector::LoadOp>(op))
        matches = load.getVectorType().getNumElements() > 1;
      else if (auto store = dyn_cast<vector::StoreOp>(op))
        matches = store.getVectorType().getNumElements() > 1;
      break;
    }
    if (!matches)
      return WalkResult::advance();
    target = op;
    return WalkResult::interrupt();
  });
  return target;
}

/// `value + 1`, before `user`.
Value addOne(OpBuilder &builder, Operation *user, Value value) {
  builder.setInsertionPoint(user);
  Location loc = user->getLoc();
  Value one = value.getType().isIndex()
                  ? Value(arith::ConstantIndexOp::create(builder, loc, 1))
                  : Value(arith::ConstantIntOp::create(builder, loc,
                                                       value.getType(), 1));
  return arith::AddIOp::create(builder, loc, value, one);
}

void corrupt(Operation *target, Fault fault) {
  OpBuilder builder(target->getContext());
  switch (fault) {
  case Fault::ThreadIndex: {
    // Every use of the thread index sees it plus one.
    Value tid = target->getResult(0);
    Value shifted = addOne(builder, target->getNextNode(), tid);
    tid.replaceAllUsesExcept(shifted, shifted.getDefiningOp());
    return;
  }
  case Fault::DropBarrier:
  case Fault::DropFence:
    target->erase();
    return;
  case Fault::ShuffleLane: {
    auto shuffle = cast<gpu::ShuffleOp>(target);
    shuffle.getOffsetMutable().assign(
        addOne(builder, shuffle, shuffle.getOffset()));
    return;
  }
  case Fault::MisalignedVector: {
    MutableOperandRange indices =
        isa<vector::LoadOp>(target)
            ? cast<vector::LoadOp>(target).getIndicesMutable()
            : cast<vector::StoreOp>(target).getIndicesMutable();
    OpOperand &last = indices[indices.size() - 1];
    last.set(addOne(builder, target, last.get()));
    return;
  }
  }
}

struct TestInjectGpuFaultPass
    : public PassWrapper<TestInjectGpuFaultPass,
                         OperationPass<gpu::GPUModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestInjectGpuFaultPass)

  TestInjectGpuFaultPass() = default;
  TestInjectGpuFaultPass(const TestInjectGpuFaultPass &pass)
      : PassWrapper(pass) {}
  TestInjectGpuFaultPass(StringRef faultName, StringRef kernelName) {
    fault = faultName.str();
    kernel = kernelName.str();
  }

  StringRef getArgument() const final { return "test-ridge-inject-gpu-fault"; }
  StringRef getDescription() const final {
    return "Break one GPU kernel: thread-index (gpu.thread_id x + 1), "
           "drop-barrier (erase a gpu.barrier), drop-fence (erase an "
           "llvm.fence: split-K's release), shuffle-lane (a gpu.shuffle's "
           "offset + 1) or misaligned-vector (a vector access moved by one "
           "element)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect>();
  }

  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    std::optional<Fault> kind = parseFault(fault);
    if (!kind) {
      module.emitError() << "unknown fault '" << fault
                         << "' (thread-index, drop-barrier, drop-fence, "
                            "shuffle-lane, misaligned-vector)";
      return signalPassFailure();
    }
    bool foundKernel = false;
    for (auto func : module.getOps<gpu::GPUFuncOp>()) {
      if (!func.isKernel() || (!kernel.empty() && func.getName() != kernel))
        continue;
      foundKernel = true;
      if (Operation *target = findTarget(func, *kind)) {
        LLVM_DEBUG(llvm::dbgs() << "breaking " << func.getName() << " at "
                                << *target << "\n");
        corrupt(target, *kind);
        return;
      }
    }
    // A test that injects nothing must not pass.
    if (!kernel.empty() && !foundKernel)
      module.emitError() << "no kernel named '" << kernel << "'";
    else
      module.emitError() << "fault '" << fault << "': "
                         << (kernel.empty()
                                 ? std::string("no kernel has an")
                                 : "kernel '" + kernel.getValue() + "' has no")
                         << " op to break";
    signalPassFailure();
  }

  Option<std::string> fault{
      *this, "fault",
      llvm::cl::desc("thread-index, drop-barrier, drop-fence, shuffle-lane or "
                     "misaligned-vector")};
  Option<std::string> kernel{
      *this, "kernel",
      llvm::cl::desc("The gpu.func to break (default: the first that can be)")};
};
} // namespace

LogicalResult mlir::ridge::addGpuFaultPass(OpPassManager &kernels,
                                           StringRef spec) {
  auto [fault, kernel] = spec.split(':');
  if (!parseFault(fault))
    return failure();
  kernels.addPass(std::make_unique<TestInjectGpuFaultPass>(fault, kernel));
  return success();
}

void mlir::ridge::test::registerRidgeGpuTestPasses() {
  PassRegistration<TestInjectGpuFaultPass>();
}
