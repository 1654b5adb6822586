//===- KernelsToParallelLoops.cpp - Kernel loop nests as scf.parallel -----===//
//
// After bufferization a kernel is an `scf.forall` (tiled) or a linalg op
// (one op). Upstream's scf-forall-to-parallel and
// convert-linalg-to-parallel-loops build new loops and drop the kernel's
// `ridge.kernel_config`; this pass does the same conversions through
// scf::forallToParallelLoop and linalg::linalgOpToParallelLoops and moves the
// config onto the outermost loop, where the GPU mapping passes read it.
//
// The dimensions of one iteration (a batch of 1) of the loops it builds are
// dropped here, and loops of none erased: the canonicalizer's rebuild of such
// a loop would drop the config with them, and its folding of a loop of one
// iteration would drop a kernel's loop nest altogether (a decode step's one
// row, which the mapping passes give a warp). A kernel's outermost loop keeps
// one dimension however few its iterations; the GPU pipeline's canonicalizer
// that follows leaves scf.parallel's unit dimensions alone.
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

/// Drops `loop`'s dimensions of one iteration (each induction variable
/// replaced by its lower bound), keeping its attributes. A loop of one
/// iteration in every dimension keeps its first when `keepOne` (a kernel's
/// loop nest, which the GPU mapping passes distribute however few its
/// iterations) and is inlined into its block otherwise. Returns the loop
/// left, or null.
static scf::ParallelOp dropUnitDims(RewriterBase &rewriter,
                                    scf::ParallelOp loop, bool keepOne) {
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
  if (lowers.size() == loop.getNumLoops() || loop.getNumResults() != 0)
    return loop;
  if (lowers.empty() && keepOne) {
    if (loop.getNumLoops() == 1)
      return loop;
    isUnit.front() = false;
    lowers.push_back(loop.getLowerBound().front());
    uppers.push_back(loop.getUpperBound().front());
    steps.push_back(loop.getStep().front());
  }
  Block *body = loop.getBody();
  SmallVector<Value> ivs;
  if (lowers.empty()) {
    rewriter.eraseOp(body->getTerminator());
    for (Value lower : loop.getLowerBound())
      ivs.push_back(lower);
    rewriter.inlineBlockBefore(body, loop, ivs);
    rewriter.eraseOp(loop);
    return nullptr;
  }
  rewriter.setInsertionPoint(loop);
  auto dropped =
      scf::ParallelOp::create(rewriter, loop.getLoc(), lowers, uppers, steps);
  dropped->setDiscardableAttrs(loop->getDiscardableAttrDictionary());
  Block *droppedBody = dropped.getBody();
  rewriter.eraseOp(droppedBody->getTerminator());
  unsigned kept = 0;
  for (auto [unit, lower] : llvm::zip(isUnit, loop.getLowerBound()))
    ivs.push_back(unit ? lower : droppedBody->getArgument(kept++));
  rewriter.mergeBlocks(body, droppedBody, ivs);
  rewriter.eraseOp(loop);
  return dropped;
}

/// Whether `op` has a loop of no iteration (an empty buffer's).
static bool hasEmptyLoop(linalg::LinalgOp op) {
  return llvm::is_contained(op.getStaticLoopRanges(), 0);
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
      StringAttr mappingName = forall.getMappingAttrName();
      rewriter.setInsertionPoint(forall);
      scf::ParallelOp parallel;
      if (failed(scf::forallToParallelLoop(rewriter, forall, &parallel))) {
        forall.emitError("cannot convert the kernel's scf.forall to "
                         "scf.parallel");
        return signalPassFailure();
      }
      // The mapping that kept a loop of one iteration through the
      // canonicalizations (ridge-tile-kernel-bodies) is a forall's; the
      // parallel loop's is the GPU mapping passes' to set.
      parallel->removeAttr(mappingName);
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
      if (hasEmptyLoop(op)) {
        rewriter.eraseOp(op);
        continue;
      }
      Attribute config = op->getAttr(kKernelConfigAttr);
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::LinalgLoops> loops =
          linalg::linalgOpToParallelLoops(rewriter, op);
      if (failed(loops)) {
        op->emitError("cannot convert the kernel's op to parallel loops");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
      for (auto [index, loop] : llvm::enumerate(*loops)) {
        auto parallel = dyn_cast<scf::ParallelOp>(loop);
        if (!parallel)
          continue;
        bool isKernelLoop = index == 0 && config;
        scf::ParallelOp left = dropUnitDims(rewriter, parallel, isKernelLoop);
        (*loops)[index] = left;
      }
      if (config && !loops->empty() && loops->front()) {
        loops->front()->setAttr(kKernelConfigAttr, config);
        ++numConfiguredLoops;
      }
    }
  }
};
} // namespace
