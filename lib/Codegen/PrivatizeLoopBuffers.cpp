//===- PrivatizeLoopBuffers.cpp - Per-iteration buffers on the stack ------===//
//
// Tiling a kernel leaves small temporaries inside its parallel loop (a 1x1
// accumulator, one row of a normalization). After bufferization they are heap
// allocations per iteration, which a GPU kernel cannot make and which would
// keep the loop on the host. They are private to one iteration, so they
// become stack allocations: registers or local memory on the GPU.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::ridge {
#define GEN_PASS_DEF_PRIVATIZELOOPBUFFERSPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

namespace {
struct PrivatizeLoopBuffersPass
    : public ridge::impl::PrivatizeLoopBuffersPassBase<
          PrivatizeLoopBuffersPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<memref::AllocOp> allocs;
    getOperation().walk([&](memref::AllocOp alloc) {
      if (alloc->getParentOfType<scf::ForallOp>() ||
          alloc->getParentOfType<scf::ParallelOp>())
        allocs.push_back(alloc);
    });
    IRRewriter rewriter(&getContext());
    for (memref::AllocOp alloc : allocs) {
      if (!alloc.getType().hasStaticShape()) {
        alloc.emitError("a dynamically sized buffer inside a parallel loop "
                        "cannot be made private to an iteration");
        return signalPassFailure();
      }
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          rewriter.eraseOp(user);
      // Sequential iterations (the CPU) can share one buffer; placed at the
      // function's entry, it costs no stack per iteration.
      if (sequential)
        rewriter.setInsertionPointToStart(
            &alloc->getParentOfType<FunctionOpInterface>()
                 .getFunctionBody()
                 .front());
      else
        rewriter.setInsertionPoint(alloc);
      rewriter.replaceOpWithNewOp<memref::AllocaOp>(
          alloc, alloc.getType(), alloc.getDynamicSizes(),
          alloc.getSymbolOperands(), alloc.getAlignmentAttr());
    }
  }
};
} // namespace
