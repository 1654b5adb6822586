//===- KernelsToParallelLoops.cpp - Kernel loop nests as scf.parallel -----===//
//
// After bufferization a kernel is an `scf.forall` (tiled) or a linalg op
// (one op). Upstream's scf-forall-to-parallel and
// convert-linalg-to-parallel-loops build new loops and drop the kernel's
// `ridge.kernel_config`; this pass does the same conversions through
// scf::forallToParallelLoop and linalg::linalgOpToParallelLoops and moves the
// config onto the outermost loop, where the GPU mapping passes read it. The
// dimensions of one iteration (a batch of 1) are dropped here: the
// canonicalizer's rebuild of such a loop would drop the config with them.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/KernelConfig.h"
#include "ridgeline/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-kernels-to-parallel-loops"

namespace mlir::ridge {
#define GEN_PASS_DEF_KERNELSTOPARALLELLOOPSPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

/// `loop` without its dimensions of one iteration (each induction variable
/// replaced by its lower bound), its attributes kept; `loop` itself when it
/// has none, or no other.
static scf::ParallelOp dropUnitDims(RewriterBase &rewriter,
                                    scf::ParallelOp loop) {
  SmallVector<Value> lowers, uppers, steps;
  SmallVector<bool> isUnit;
  for (auto [lower, upper, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    std::optional<int64_t> lo = getConstantIntValue(lower),
                           hi = getConstantIntValue(upper),
                           st = getConstantIntValue(step);
    isUnit.push_back(lo && hi && st && *st > 0 && *hi > *lo &&
                     *hi - *lo <= *st);
    if (isUnit.back())
      continue;
    lowers.push_back(lower);
    uppers.push_back(upper);
    steps.push_back(step);
  }
  if (lowers.empty() || lowers.size() == loop.getNumLoops() ||
      loop.getNumResults() != 0)
    return loop;
  rewriter.setInsertionPoint(loop);
  auto dropped =
      scf::ParallelOp::create(rewriter, loop.getLoc(), lowers, uppers, steps);
  dropped->setDiscardableAttrs(loop->getDiscardableAttrDictionary());
  Block *body = dropped.getBody();
  rewriter.eraseOp(body->getTerminator());
  SmallVector<Value> ivs;
  unsigned kept = 0;
  for (auto [unit, lower] : llvm::zip(isUnit, loop.getLowerBound()))
    ivs.push_back(unit ? lower : body->getArgument(kept++));
  rewriter.mergeBlocks(loop.getBody(), body, ivs);
  rewriter.eraseOp(loop);
  return dropped;
}

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
        Operation *outer = loops->front();
        if (auto parallel = dyn_cast<scf::ParallelOp>(outer))
          outer = dropUnitDims(rewriter, parallel);
        outer->setAttr(kKernelConfigAttr, config);
        ++numConfiguredLoops;
      }
      rewriter.eraseOp(op);
    }
  }
};
} // namespace
