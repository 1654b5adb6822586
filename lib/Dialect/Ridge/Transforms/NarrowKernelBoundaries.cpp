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
/// Widens `narrow` back to `wideType` for each of its readers, inside the
/// reader's group, right before the reader; a reshape between kernels (a
/// view, whatever its element type) is retyped to the narrow type and its
/// own readers widened instead.
void widenReaders(OpBuilder &b, Value narrow, RankedTensorType wideType) {
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : narrow.getUses())
    uses.push_back(&use);
  Type element = getElementTypeOrSelf(narrow.getType());
  for (OpOperand *use : uses) {
    Operation *reader = use->getOwner();
    if (isa<ReshapeOp>(reader) && !reader->getParentOfType<FusionGroupOp>()) {
      Value view = reader->getResult(0);
      auto viewType = cast<RankedTensorType>(view.getType());
      view.setType(viewType.clone(element));
      widenReaders(b, view, viewType);
      continue;
    }
    b.setInsertionPoint(reader);
    auto widen = CastOp::create(b, reader->getLoc(), wideType, narrow);
    widen->setAttr(kBoundaryCastAttr, b.getUnitAttr());
    use->set(widen);
  }
}

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
      // Readers first: each widens the narrow result inside its group
      // (the result is retyped below; the casts read it as it will be).
      result.setType(narrowType);
      widenReaders(b, result, wideType);
      // The producer rounds what it yields.
      auto yield = cast<YieldOp>(group.getBody().front().getTerminator());
      OpOperand &yielded = yield->getOpOperand(result.getResultNumber());
      b.setInsertionPoint(yield);
      auto round =
          CastOp::create(b, yielded.get().getLoc(), narrowType, yielded.get());
      round->setAttr(kBoundaryCastAttr, boundary);
      yielded.set(round);
      ++numNarrowedResults;
    }
  }
};
} // namespace
