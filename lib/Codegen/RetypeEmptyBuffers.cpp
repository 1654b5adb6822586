//===- RetypeEmptyBuffers.cpp - bare-pointer types for empty buffers ------===//
//
// Zero-element memrefs have no bare-pointer form in func-to-llvm, so a model
// with an empty input or output would fail to lower. Nothing ever reads or
// writes such a buffer: copies touching one are erased, and the unused
// arguments are retyped to memref<1xT>.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-retype-empty-buffers"

namespace mlir::ridge {
#define GEN_PASS_DEF_RETYPEEMPTYBUFFERSPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;

namespace {

bool isEmptyBuffer(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && memref.hasStaticShape() && memref.getNumElements() == 0;
}

struct RetypeEmptyBuffersPass
    : ridge::impl::RetypeEmptyBuffersPassBase<RetypeEmptyBuffersPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // Copies of zero elements do nothing; empty temporaries are only
    // allocated and freed. Collected first: erasing while walking would
    // visit freed ops.
    SmallVector<Operation *> dead;
    func.walk([&](Operation *op) {
      if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        if (isEmptyBuffer(copy.getSource().getType()) ||
            isEmptyBuffer(copy.getTarget().getType()))
          dead.push_back(copy);
        return;
      }
      auto alloc = dyn_cast<memref::AllocOp>(op);
      if (!alloc || !isEmptyBuffer(alloc.getType()) ||
          !llvm::all_of(alloc->getUsers(), [](Operation *user) {
            return isa<memref::DeallocOp>(user);
          }))
        return;
      llvm::append_range(dead, alloc->getUsers());
      dead.push_back(alloc);
    });
    for (Operation *op : dead)
      op->erase();

    Block &entry = func.getBody().front();
    SmallVector<Type> inputs(func.getArgumentTypes());
    bool changed = false;
    for (BlockArgument arg : entry.getArguments()) {
      if (!isEmptyBuffer(arg.getType()))
        continue;
      if (!arg.use_empty()) {
        func.emitError() << "argument #" << arg.getArgNumber()
                         << " is an empty buffer (" << arg.getType()
                         << ") that is still used";
        return signalPassFailure();
      }
      auto oneElement = MemRefType::get(
          {1}, cast<MemRefType>(arg.getType()).getElementType());
      LLVM_DEBUG(llvm::dbgs() << "retyping argument #" << arg.getArgNumber()
                              << " to " << oneElement << "\n");
      arg.setType(oneElement);
      inputs[arg.getArgNumber()] = oneElement;
      changed = true;
    }
    if (changed)
      func.setType(FunctionType::get(&getContext(), inputs,
                                     func.getFunctionType().getResults()));
  }
};

} // namespace
