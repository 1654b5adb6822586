//===- PrivatizeOwnedElements.cpp - Accumulate an owned element privately -===//
//
// A kernel whose result is its reduction's accumulator (a pooling without
// an epilogue, a SIMT contraction stored as it is) bufferizes the
// accumulator in place: each iteration of its parallel loop stores the
// initial value into its result element, then loads and stores that
// element once per step of its window or k loop. On a GPU every step is a
// global store (resnet18's channels-last 3x3 max pool: 9 stores an
// output), and a body that writes a buffer outside itself cannot run 4
// elements jammed (ridge-vectorize-pointwise-loops). The element belongs
// to the iteration alone (its indices are the loop's induction variables),
// so it accumulates in a stack buffer of the body and is stored once, at
// the end of the iteration: what a hand-written kernel keeps in a
// register.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "VectorAccesses.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-privatize-owned-elements"

namespace mlir::ridge {
#define GEN_PASS_DEF_PRIVATIZEOWNEDELEMENTSPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

/// Whether two indices are the same: one value, or equal constants (the
/// tiled body and the fill before it each made their own zero).
static bool isSameIndex(Value a, Value b) {
  if (a == b)
    return true;
  std::optional<int64_t> ca = getConstantIntValue(a),
                         cb = getConstantIntValue(b);
  return ca && cb && *ca == *cb;
}

/// Whether `indices` name an element that only one iteration of `loop`
/// reaches: each is a constant or one of the loop's induction variables,
/// and each induction variable is one of them.
static bool isOwnedElement(ValueRange indices, scf::ParallelOp loop) {
  llvm::SmallDenseSet<Value> ivs;
  for (Value index : indices) {
    if (getConstantIntValue(index))
      continue;
    if (!llvm::is_contained(loop.getInductionVars(), index) ||
        !ivs.insert(index).second)
      return false;
  }
  return ivs.size() == loop.getNumLoops();
}

/// The accesses of `memref` inside `loop` when they are all loads and
/// stores of the element `store` names, `store` first among them and
/// standing in the loop's body itself (so it initializes the element before
/// any read), and some of them inside a nested loop; else empty.
static SmallVector<Operation *> getOwnedAccesses(scf::ParallelOp loop,
                                                 memref::StoreOp store) {
  Value memref = store.getMemRef();
  SmallVector<Operation *> accesses;
  bool nested = false;
  Value base = memref::skipViewLikeOps(cast<MemrefValue>(memref));
  WalkResult walk = loop.getBody()->walk([&](Operation *op) {
    // Another view of the same buffer may read the element.
    if (llvm::any_of(op->getOperands(), [&](Value operand) {
          auto view = dyn_cast<MemrefValue>(operand);
          return view && operand != memref &&
                 memref::skipViewLikeOps(view) == base;
        }))
      return WalkResult::interrupt();
    if (!llvm::is_contained(op->getOperands(), memref))
      return WalkResult::advance();
    ValueRange indices;
    if (auto load = dyn_cast<memref::LoadOp>(op);
        load && load.getMemRef() == memref)
      indices = load.getIndices();
    else if (auto other = dyn_cast<memref::StoreOp>(op);
             other && other.getMemRef() == memref &&
             other.getValueToStore() != memref)
      indices = other.getIndices();
    else
      return WalkResult::interrupt();
    if (accesses.empty() && op != store.getOperation())
      return WalkResult::interrupt();
    if (!llvm::all_of(llvm::zip(indices, store.getIndices()), [](auto pair) {
          return isSameIndex(std::get<0>(pair), std::get<1>(pair));
        }))
      return WalkResult::interrupt();
    nested |= op->getParentOp() != loop.getOperation();
    accesses.push_back(op);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted() || !nested)
    return {};
  return accesses;
}

/// Moves the owned elements `loop` accumulates into a stack buffer each
/// (the file comment); returns how many.
static int64_t privatizeOwnedElements(RewriterBase &rewriter,
                                      scf::ParallelOp loop) {
  Block *body = loop.getBody();
  SmallVector<memref::StoreOp> stores;
  for (auto store : body->getOps<memref::StoreOp>())
    if (!loop->isAncestor(store.getMemRef().getParentRegion()->getParentOp()) &&
        isOwnedElement(store.getIndices(), loop))
      stores.push_back(store);
  int64_t privatized = 0;
  llvm::SmallDenseSet<Value> seen;
  for (memref::StoreOp store : stores) {
    Value memref = store.getMemRef();
    if (!seen.insert(memref).second)
      continue;
    SmallVector<Operation *> accesses = getOwnedAccesses(loop, store);
    if (accesses.empty())
      continue;
    auto type = cast<MemRefType>(memref.getType());
    Location loc = store.getLoc();
    rewriter.setInsertionPointToStart(body);
    Value element = memref::AllocaOp::create(
        rewriter, loc, MemRefType::get({}, type.getElementType()));
    SmallVector<Value> indices(store.getIndices());
    for (Operation *access : accesses) {
      rewriter.setInsertionPoint(access);
      if (auto load = dyn_cast<memref::LoadOp>(access))
        rewriter.replaceOpWithNewOp<memref::LoadOp>(load, element,
                                                    ValueRange{});
      else
        rewriter.replaceOpWithNewOp<memref::StoreOp>(
            access, cast<memref::StoreOp>(access).getValueToStore(), element,
            ValueRange{});
    }
    // The one store of the element, at the end of the iteration.
    rewriter.setInsertionPoint(body->getTerminator());
    Value result = memref::LoadOp::create(rewriter, loc, element);
    memref::StoreOp::create(rewriter, loc, result, memref, indices);
    ++privatized;
    LLVM_DEBUG(llvm::dbgs() << "privatized an element of " << memref << " over "
                            << accesses.size() << " accesses\n");
  }
  return privatized;
}

namespace {
struct PrivatizeOwnedElementsPass
    : public ridge::impl::PrivatizeOwnedElementsPassBase<
          PrivatizeOwnedElementsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || func->getParentOfType<gpu::GPUModuleOp>())
      return;
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp root : getUnmappedRootLoops(func)) {
      // Only bodies with nested loops accumulate.
      if (root.getNumResults() ||
          llvm::none_of(root.getBody()->without_terminator(),
                        [](Operation &op) { return op.getNumRegions() != 0; }))
        continue;
      if (failed(foldElementViews(root.getRegion())))
        return signalPassFailure();
      numPrivatized += privatizeOwnedElements(rewriter, root);
    }
  }
};
} // namespace
