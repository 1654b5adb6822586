//===- NarrowKernelBoundaries.cpp - Round kernel results once -------------===//
//
// Mechanism only: the precision policy (getKernelBoundaryType) names the
// kernel results that only rounded contractions read; this pass stores each
// in the readers' multiply format. The producer's group rounds the result
// before its ridge.yield (what arith.truncf computes, to nearest even); each
// reader widens it back inside its own group, where the contraction's
// lowering rounds it again, a no-op (truncf of an extf folds away): the
// products are unchanged and the tensor crosses the kernel boundary in
// half the bytes.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Analysis/PrecisionPolicy.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-narrow-kernel-boundaries"

namespace mlir::ridge {
#define GEN_PASS_DEF_NARROWKERNELBOUNDARIESPASS
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

namespace {
struct NarrowKernelBoundariesPass
    : public ridge::impl::NarrowKernelBoundariesPassBase<
          NarrowKernelBoundariesPass> {
  void runOnOperation() override {
    SmallVector<std::pair<OpResult, Type>> narrowed;
    getOperation().walk([&](FusionGroupOp group) {
      for (OpResult result : group->getResults())
        if (Type narrow = getKernelBoundaryType(result))
          narrowed.emplace_back(result, narrow);
    });
    OpBuilder b(&getContext());
    UnitAttr boundary = b.getUnitAttr();
    for (auto [result, narrow] : narrowed) {
      auto group = cast<FusionGroupOp>(result.getOwner());
      auto wideType = cast<RankedTensorType>(result.getType());
      auto narrowType = wideType.clone(narrow);
      LLVM_DEBUG(llvm::dbgs()
                 << "storing result " << result.getResultNumber() << " of "
                 << group.getName() << " as " << narrowType << "\n");
      // Readers first: each widens the narrow result inside its group.
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : result.getUses())
        uses.push_back(&use);
      for (OpOperand *use : uses) {
        b.setInsertionPoint(use->getOwner());
        auto widen =
            CastOp::create(b, use->getOwner()->getLoc(), wideType, result);
        widen->setAttr(kBoundaryCastAttr, boundary);
        use->set(widen);
      }
      // The producer rounds what it yields.
      auto yield = cast<YieldOp>(group.getBody().front().getTerminator());
      OpOperand &yielded = yield->getOpOperand(result.getResultNumber());
      b.setInsertionPoint(yield);
      auto round =
          CastOp::create(b, yielded.get().getLoc(), narrowType, yielded.get());
      round->setAttr(kBoundaryCastAttr, boundary);
      yielded.set(round);
      result.setType(narrowType);
      ++numNarrowedResults;
    }
  }
};
} // namespace
