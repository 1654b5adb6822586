//===- RetypeEmptyBuffers.cpp - bare-pointer types for empty buffers ------===//
//
// Zero-element memrefs have no bare-pointer form in func-to-llvm, so a model
// with an empty input or output would fail to lower. Nothing ever reads or
// writes such a buffer: copies touching one are erased, and the arguments
// that are unused (or only passed on to a kernel function) are retyped to
// memref<1xT>, in the model function and in the kernels alike.
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

/// Erases what touches an empty buffer without effect: zero-element copies,
/// and empty temporaries that are only freed. An empty temporary passed to a
/// call (the out-parameter of a kernel with an empty result) is retyped like
/// the arguments. Collected first: erasing while walking would visit freed
/// ops.
void eraseEmptyBufferTraffic(func::FuncOp func) {
  SmallVector<Operation *> dead;
  func.walk([&](Operation *op) {
    if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      if (isEmptyBuffer(copy.getSource().getType()) ||
          isEmptyBuffer(copy.getTarget().getType()))
        dead.push_back(copy);
      return;
    }
    auto alloc = dyn_cast<memref::AllocOp>(op);
    if (!alloc || !isEmptyBuffer(alloc.getType()))
      return;
    if (llvm::all_of(alloc->getUsers(), [](Operation *user) {
          return isa<memref::DeallocOp>(user);
        })) {
      llvm::append_range(dead, alloc->getUsers());
      dead.push_back(alloc);
      return;
    }
    if (llvm::all_of(alloc->getUsers(), [](Operation *user) {
          return isa<memref::DeallocOp, func::CallOp>(user);
        }))
      alloc.getResult().setType(MemRefType::get(
          {1}, cast<MemRefType>(alloc.getType()).getElementType()));
  });
  for (Operation *op : dead)
    op->erase();
}

struct RetypeEmptyBuffersPass
    : ridge::impl::RetypeEmptyBuffersPassBase<RetypeEmptyBuffersPass> {
  void runOnOperation() override {
    // A module pass: a kernel function and its callers are retyped together
    // (the model function passes its empty inputs on to the kernels).
    SmallVector<func::FuncOp> funcs;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        funcs.push_back(func);
    for (func::FuncOp func : funcs)
      eraseEmptyBufferTraffic(func);
    for (func::FuncOp func : funcs)
      if (failed(retypeArguments(func)))
        return signalPassFailure();
  }

  LogicalResult retypeArguments(func::FuncOp func) {
    Block &entry = func.getBody().front();
    SmallVector<Type> inputs(func.getArgumentTypes());
    bool changed = false;
    for (BlockArgument arg : entry.getArguments()) {
      if (!isEmptyBuffer(arg.getType()))
        continue;
      // Passing the buffer on to a call is no access: the callee's argument
      // is retyped the same way.
      if (!llvm::all_of(arg.getUsers(), [](Operation *user) {
            return isa<func::CallOp>(user);
          }))
        return func.emitError()
               << "argument #" << arg.getArgNumber() << " is an empty buffer ("
               << arg.getType() << ") that is still used";
      auto oneElement = MemRefType::get(
          {1}, cast<MemRefType>(arg.getType()).getElementType());
      LLVM_DEBUG(llvm::dbgs()
                 << func.getName() << ": retyping argument #"
                 << arg.getArgNumber() << " to " << oneElement << "\n");
      arg.setType(oneElement);
      inputs[arg.getArgNumber()] = oneElement;
      changed = true;
    }
    if (changed)
      func.setType(FunctionType::get(&getContext(), inputs,
                                     func.getFunctionType().getResults()));
    return success();
  }
};

} // namespace
