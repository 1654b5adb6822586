//===- KernelsToParallelLoops.cpp - Kernel loop nests as scf.parallel -----===//
//
// After bufferization a kernel is an `scf.forall` (tiled) or a linalg op
// (one op). Upstream's scf-forall-to-parallel and
// convert-linalg-to-parallel-loops build new loops and drop the kernel's
// `ridge.kernel_config`; this pass does the same conversions through
// scf::forallToParallelLoop and linalg::linalgOpToParallelLoops and moves the
// config onto the outermost loop, where the GPU mapping passes read it.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/KernelConfig.h"
#include "ridgeline/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-kernels-to-parallel-loops"

namespace mlir::ridge {
#define GEN_PASS_DEF_KERNELSTOPARALLELLOOPSPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

namespace {
struct KernelsToParallelLoopsPass
    : public ridge::impl::KernelsToParallelLoopsPassBase<
          KernelsToParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());
    SmallVector<scf::ForallOp> foralls;
    func.walk([&](scf::ForallOp loop) { foralls.push_back(loop); });
    for (scf::ForallOp forall : foralls) {
      Attribute config = forall->getAttr(kKernelConfigAttr);
      rewriter.setInsertionPoint(forall);
      scf::ParallelOp parallel;
      if (failed(scf::forallToParallelLoop(rewriter, forall, &parallel))) {
        forall.emitError("cannot convert the kernel's scf.forall to "
                         "scf.parallel");
        return signalPassFailure();
      }
      if (config) {
        parallel->setAttr(kKernelConfigAttr, config);
        ++numConfiguredLoops;
      }
    }
    if (!linalg)
      return;
    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics())
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops) {
      Attribute config = op->getAttr(kKernelConfigAttr);
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::LinalgLoops> loops =
          linalg::linalgOpToParallelLoops(rewriter, op);
      if (failed(loops)) {
        op->emitError("cannot convert the kernel's op to parallel loops");
        return signalPassFailure();
      }
      if (config && !loops->empty()) {
        loops->front()->setAttr(kKernelConfigAttr, config);
        ++numConfiguredLoops;
      }
      rewriter.eraseOp(op);
    }
  }
};
} // namespace
