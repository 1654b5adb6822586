//===- MapParallelLoopsToGpu.cpp - scf.parallel -> 1-D GPU grid -----------===//
//
// The spine's GPU mapping: every top-level parallel loop nest becomes one
// kernel over a linearized index space. Linearizing with the innermost
// dimension fastest keeps global accesses coalesced whatever the rank; the
// fusion work replaces this with tiled, vectorized strategies per kernel kind.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/KernelConfig.h"
#include "ridgeline/Codegen/Passes.h"

#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-map-parallel-loops-to-gpu"

namespace mlir::ridge {
#define GEN_PASS_DEF_MAPPARALLELLOOPSTOGPUPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;

namespace {

/// Returns true when `op` reads or writes memory somewhere inside it.
bool touchesMemory(Operation *op) {
  bool found = false;
  op->walk([&](Operation *nested) {
    if (isa<memref::LoadOp, memref::StoreOp>(nested))
      found = true;
  });
  return found;
}

/// Rewrites a result-free `scf.parallel` into a nest of `scf.for`.
LogicalResult serializeParallelLoop(RewriterBase &rewriter,
                                    scf::ParallelOp loop) {
  if (loop.getNumResults() != 0)
    return loop.emitError("cannot run a parallel reduction inside a GPU "
                          "thread");
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(loop);
  SmallVector<Value> ivs;
  Operation *innermostTerminator = nullptr;
  for (auto [lower, upper, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    auto forOp =
        scf::ForOp::create(rewriter, loop.getLoc(), lower, upper, step);
    ivs.push_back(forOp.getInductionVar());
    innermostTerminator = forOp.getBody()->getTerminator();
    rewriter.setInsertionPoint(innermostTerminator);
  }
  Block *body = loop.getBody();
  rewriter.eraseOp(body->getTerminator());
  rewriter.inlineBlockBefore(body, innermostTerminator, ivs);
  rewriter.eraseOp(loop);
  return success();
}

struct MapParallelLoopsToGpuPass
    : ridge::impl::MapParallelLoopsToGpuPassBase<MapParallelLoopsToGpuPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || func->getParentOfType<gpu::GPUModuleOp>())
      return;
    if (blockSize <= 0 || blockSize > 1024) {
      func.emitError() << "block-size must be in [1, 1024], got " << blockSize;
      return signalPassFailure();
    }
    MLIRContext *ctx = &getContext();
    IRRewriter rewriter(ctx);

    // Sequential loop nests that touch memory run as a single GPU thread.
    SmallVector<scf::ForOp> sequential;
    func.walk([&](scf::ForOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>() &&
          !loop->getParentOfType<scf::ForOp>() && loop.getNumResults() == 0 &&
          touchesMemory(loop))
        sequential.push_back(loop);
    });
    for (scf::ForOp loop : sequential) {
      rewriter.setInsertionPoint(loop);
      Location loc = loop.getLoc();
      Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
      Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
      auto wrapper = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                             ValueRange{one}, ValueRange{one});
      loop->moveBefore(wrapper.getBody()->getTerminator());
    }

    SmallVector<scf::ParallelOp> roots;
    func.walk([&](scf::ParallelOp loop) {
      // Loops mapped already (one warp per row) keep their mapping.
      if (!loop->getParentOfType<scf::ParallelOp>() &&
          !loop->hasAttr(gpu::getMappingAttrName()))
        roots.push_back(loop);
    });
    for (scf::ParallelOp root : roots) {
      // The kernel's config decides the block size; `block-size` serves
      // loops without one. Read it before collapsing replaces the loop.
      FailureOr<std::optional<ridge::KernelConfig>> config =
          ridge::getKernelConfig(root);
      if (failed(config))
        return signalPassFailure();
      int64_t threads = *config ? (*config)->blockSize : int64_t(blockSize);
      scf::ParallelOp loop = root;
      unsigned rank = loop.getNumLoops();
      if (rank > 1) {
        // collapseParallelLoops replaces the op in place; find the new one by
        // position.
        Block *block = loop->getBlock();
        Operation *before = loop->getPrevNode();
        std::vector<unsigned> all(rank);
        for (unsigned i = 0; i < rank; ++i)
          all[i] = i;
        collapseParallelLoops(rewriter, loop, {all});
        Operation *next =
            before ? before->getNextNode() : &block->getOperations().front();
        while (next && !isa<scf::ParallelOp>(next))
          next = next->getNextNode();
        loop = cast<scf::ParallelOp>(next);
      }
      auto [outer, inner] =
          scf::tileParallelLoop(loop, {threads}, /*noMinMaxBounds=*/false);
      AffineMap identity = AffineMap::getMultiDimIdentityMap(1, ctx);
      auto mapTo = [&](scf::ParallelOp op, gpu::Processor processor) {
        return gpu::setMappingAttr(
            op, {gpu::ParallelLoopDimMappingAttr::get(ctx, processor, identity,
                                                      identity)});
      };
      if (failed(mapTo(outer, gpu::Processor::BlockX)) ||
          failed(mapTo(inner, gpu::Processor::ThreadX)))
        return signalPassFailure();
      // Loops nested in a thread's iteration (the row of a tiled reduction,
      // the element loop of a fused tile) run sequentially in that thread.
      // As scf.for they may follow stores, which nested scf.parallel loops
      // may not in convert-parallel-loops-to-gpu.
      SmallVector<scf::ParallelOp> nested;
      inner.getBody()->walk(
          [&](scf::ParallelOp loop) { nested.push_back(loop); });
      for (scf::ParallelOp loop : nested)
        if (failed(serializeParallelLoop(rewriter, loop)))
          return signalPassFailure();
      LLVM_DEBUG(llvm::dbgs() << "mapped a rank-" << rank << " loop nest\n");
    }
  }
};

} // namespace
