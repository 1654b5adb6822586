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
void widenReaders(OpBuilder &b, Value narrow, RankedTensorType wideType);

/// Widens the narrow value `use` reads back to `wideType`, inside the
/// reader's group, right before the reader; a reshape between kernels (a
/// view, whatever its element type) is retyped to the narrow type and its
/// own readers widened instead.
void widenUse(OpBuilder &b, OpOperand *use, RankedTensorType wideType) {
  Operation *reader = use->getOwner();
  Value narrow = use->get();
  if (isa<ReshapeOp>(reader) && !reader->getParentOfType<FusionGroupOp>()) {
    Value view = reader->getResult(0);
    auto viewType = cast<RankedTensorType>(view.getType());
    view.setType(viewType.clone(getElementTypeOrSelf(narrow.getType())));
    widenReaders(b, view, viewType);
    return;
  }
  b.setInsertionPoint(reader);
  auto widen = CastOp::create(b, reader->getLoc(), wideType, narrow);
  widen->setAttr(kBoundaryCastAttr, b.getUnitAttr());
  use->set(widen);
}

/// widenUse for each reader of `narrow`.
void widenReaders(OpBuilder &b, Value narrow, RankedTensorType wideType) {
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : narrow.getUses())
    uses.push_back(&use);
  for (OpOperand *use : uses)
    widenUse(b, use, wideType);
}

/// Rounds `value`, yielded by `yield`, to `narrowType` right before it.
Value roundBeforeYield(OpBuilder &b, YieldOp yield, Value value,
                       RankedTensorType narrowType) {
  b.setInsertionPoint(yield);
  auto round = CastOp::create(b, value.getLoc(), narrowType, value);
  round->setAttr(kBoundaryCastAttr, b.getUnitAttr());
  return round;
}

/// A narrow copy of a result: what getKernelBoundaryCopyType decided.
struct NarrowCopy {
  OpResult result;
  Type format;
  SmallVector<OpOperand *> roundedUses;
};

/// Rebuilds `group` with a narrow copy of each of `copies`' results yielded
/// after its own results, and points each copy's rounded uses at it,
/// widened in the reader.
void storeNarrowCopies(OpBuilder &b, FusionGroupOp group,
                       ArrayRef<NarrowCopy> copies) {
  auto yield = cast<YieldOp>(group.getBody().front().getTerminator());
  SmallVector<Value> yielded(yield.getValues());
  SmallVector<Type> types(group->getResultTypes());
  for (const NarrowCopy &copy : copies) {
    auto narrowType =
        cast<RankedTensorType>(copy.result.getType()).clone(copy.format);
    yielded.push_back(roundBeforeYield(
        b, yield, yielded[copy.result.getResultNumber()], narrowType));
    types.push_back(narrowType);
  }
  b.setInsertionPoint(yield);
  YieldOp::create(b, yield.getLoc(), yielded);
  yield.erase();
  b.setInsertionPoint(group);
  auto rebuilt = FusionGroupOp::create(b, group.getLoc(), types,
                                       group.getName(), group.getKind());
  rebuilt->setDiscardableAttrs(group->getDiscardableAttrDictionary());
  rebuilt.getBody().takeBody(group.getBody());
  unsigned numResults = group->getNumResults();
  for (auto [i, copy] : llvm::enumerate(copies)) {
    auto wideType = cast<RankedTensorType>(copy.result.getType());
    for (OpOperand *use : copy.roundedUses) {
      use->set(rebuilt->getResult(numResults + i));
      widenUse(b, use, wideType);
    }
  }
  group->replaceAllUsesWith(rebuilt->getResults().take_front(numResults));
  group.erase();
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
      yielded.set(roundBeforeYield(b, yield, yielded.get(), narrowType));
      ++numNarrowedResults;
    }
    // Then the results that some readers need in f32: a narrow copy beside
    // them for the others (decided once the narrowed results are known).
    SmallVector<std::pair<FusionGroupOp, SmallVector<NarrowCopy>>> copies;
    getOperation().walk([&](FusionGroupOp group) {
      SmallVector<NarrowCopy> groupCopies;
      for (OpResult result : group->getResults()) {
        NarrowCopy copy;
        copy.result = result;
        copy.format = getKernelBoundaryCopyType(result, copy.roundedUses);
        if (copy.format)
          groupCopies.push_back(std::move(copy));
      }
      if (!groupCopies.empty())
        copies.emplace_back(group, std::move(groupCopies));
    });
    for (auto &[group, groupCopies] : copies) {
      LLVM_DEBUG(llvm::dbgs() << "storing " << groupCopies.size()
                              << " narrow copies beside the results of "
                              << group.getName() << "\n");
      storeNarrowCopies(b, group, groupCopies);
      numCopiedResults += groupCopies.size();
    }
  }
};
} // namespace
