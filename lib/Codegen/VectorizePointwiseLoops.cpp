//===- VectorizePointwiseLoops.cpp - 16-byte accesses in pointwise kernels ===//
//
// A pointwise kernel maps one element to a thread: each thread reads and
// writes 4 bytes of every f32 buffer, and a warp's 128-byte request is
// split over its 32 lanes. With 4 consecutive elements a thread, each of
// its accesses is one 16-byte `ld/st.global.v4`: a quarter of the memory
// instructions and of the index arithmetic for the same bytes, as the row
// kernels (ridge-map-row-loops-to-warps) already do. The decision is the
// kernel config's (`vector_width`, ridge-select-kernel-config: the kernel
// moves 32-bit data); this pass is the mechanism, and leaves a loop it
// cannot vectorize as it is.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/KernelConfig.h"
#include "ridgeline/Codegen/Passes.h"

#include "VectorAccesses.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-vectorize-pointwise-loops"

namespace mlir::ridge {
#define GEN_PASS_DEF_VECTORIZEPOINTWISELOOPSPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

/// Whether `op` is an `scf.if` whose branches only compute and load (a
/// padding's bounds check around the load of the padded input): repeated
/// per element like any op of a straight-line body.
static bool isReadOnlyConditional(Operation &op) {
  auto conditional = dyn_cast<scf::IfOp>(op);
  if (!conditional)
    return false;
  WalkResult walk = conditional->walk([&](Operation *nested) {
    if (nested == conditional.getOperation() ||
        isa<memref::LoadOp, scf::YieldOp>(nested) ||
        (nested->getNumRegions() == 0 && isMemoryEffectFree(nested)))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return !walk.wasInterrupted();
}

/// Whether `loop`'s body is straight-line: no nested regions (a row loop, a
/// fused tile's element loop) but read-only conditionals, so that repeating
/// it per element keeps its order of accesses.
static bool isStraightLine(scf::ParallelOp loop) {
  if (loop.getNumResults() != 0)
    return false;
  for (Operation &op : loop.getBody()->without_terminator())
    if (op.getNumRegions() != 0 && !isReadOnlyConditional(op))
      return false;
  return true;
}

/// Whether the innermost dimension of `loop` runs from 0 in unit steps over
/// a multiple of 4.
static bool hasVectorInnermostDim(scf::ParallelOp loop) {
  unsigned last = loop.getNumLoops() - 1;
  std::optional<int64_t> lower =
      getConstantIntValue(loop.getLowerBound()[last]);
  std::optional<int64_t> upper =
      getConstantIntValue(loop.getUpperBound()[last]);
  std::optional<int64_t> step = getConstantIntValue(loop.getStep()[last]);
  return lower == 0 && step == 1 && upper && *upper > 0 &&
         *upper % kVectorWidth == 0;
}

/// Replaces each load of an element the body stored before it (same buffer
/// value, same indices, no store in between) by the stored value: a fused
/// kernel that writes a result and reads it back for a second one (a cast
/// of the value it stores) then reads the buffer not at all, and its store
/// can be vectorized. Returns how many loads went.
static int64_t forwardStoredValues(RewriterBase &rewriter, Block *body) {
  memref::StoreOp lastStore;
  int64_t forwarded = 0;
  for (Operation &op : llvm::make_early_inc_range(*body)) {
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      lastStore = store;
      continue;
    }
    auto load = dyn_cast<memref::LoadOp>(op);
    if (!load) {
      // Anything else that writes memory ends what the last store tells.
      if (!isMemoryEffectFree(&op) && !isa<memref::LoadOp>(op))
        lastStore = nullptr;
      continue;
    }
    if (lastStore && lastStore.getMemRef() == load.getMemRef() &&
        lastStore.getIndices() == load.getIndices()) {
      rewriter.replaceOp(load, lastStore.getValueToStore());
      ++forwarded;
    }
  }
  return forwarded;
}

namespace {
struct VectorizePointwiseLoopsPass
    : public ridge::impl::VectorizePointwiseLoopsPassBase<
          VectorizePointwiseLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || func->getParentOfType<gpu::GPUModuleOp>())
      return;
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp root : getUnmappedRootLoops(func)) {
      FailureOr<std::optional<KernelConfig>> config = getKernelConfig(root);
      if (failed(config))
        return signalPassFailure();
      if (!*config || (*config)->vectorWidth != kVectorWidth ||
          !hasVectorInnermostDim(root))
        continue;
      // A body with nested loops (a SIMT contraction's k loop, a pooling's
      // window) runs its 4 elements jammed, each nested loop once.
      bool straightLine = isStraightLine(root);
      if (failed(foldElementViews(root.getRegion())))
        return signalPassFailure();
      Block *body = root.getBody();
      if (straightLine)
        numForwarded += forwardStoredValues(rewriter, body);
      unsigned last = root.getNumLoops() - 1;
      Value iv = body->getArgument(last);
      SmallVector<Operation *> accesses;
      findVectorAccesses(body, iv, accesses, /*nestedIndices=*/!straightLine);
      if (accesses.empty() ||
          (!straightLine && !canJamElements(body, iv, accesses)))
        continue;
      rewriter.setInsertionPoint(root);
      Value four =
          arith::ConstantIndexOp::create(rewriter, root.getLoc(), kVectorWidth);
      rewriter.modifyOpInPlace(
          root, [&] { root.getStepMutable().slice(last, 1).assign(four); });
      if (straightLine) {
        unrollWithVectorAccesses(rewriter, body, last, accesses);
      } else {
        unrollAndJamWithVectorAccesses(rewriter, body, last, accesses);
        ++numJammed;
      }
      ++numVectorized;
      numVectorAccesses += accesses.size();
      LLVM_DEBUG(llvm::dbgs()
                 << "vectorized a rank-" << root.getNumLoops() << " loop, "
                 << accesses.size() << " 16-byte accesses\n");
    }
  }
};
} // namespace
