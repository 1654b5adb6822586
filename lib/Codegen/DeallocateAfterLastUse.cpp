//===- DeallocateAfterLastUse.cpp - Free buffers where they die -----------===//
//
// ownership-based-buffer-deallocation frees the buffers of a block in one
// `bufferization.dealloc` at its end. For a model function, a straight-line
// block of kernel calls, that keeps every intermediate buffer alive until
// the model returns, and buffer-deallocation-simplification splits the op by
// asking, for every pair of its buffers, whether they may alias: quadratic
// in the number of kernels. Buffers allocated in the block itself are
// distinct allocations by construction, so each one is freed by a dealloc of
// its own right after its last use, and the simplification has nothing left
// to pair up.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-deallocate-after-last-use"

namespace mlir::ridge {
#define GEN_PASS_DEF_DEALLOCATEAFTERLASTUSEPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

/// The last op of `block` (by `positions`) that uses `buffer` or a view of
/// it, other than `dealloc`; the buffer's allocation when nothing else uses
/// it. Null when a use may let the buffer escape: a terminator, or an op that
/// returns a memref that is not a view (the buffer could live on in it).
static Operation *
findLastUse(Value buffer, Block &block, Operation *dealloc,
            const DenseMap<Operation *, unsigned> &positions) {
  Operation *last = buffer.getDefiningOp();
  SmallVector<Value> worklist{buffer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (user == dealloc)
        continue;
      if (user->hasTrait<OpTrait::IsTerminator>())
        return nullptr;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
        if (view.getViewSource() != value)
          return nullptr;
        worklist.push_back(view.getViewDest());
      } else if (llvm::any_of(user->getResultTypes(),
                              llvm::IsaPred<BaseMemRefType>)) {
        return nullptr;
      }
      Operation *ancestor = block.findAncestorOpInBlock(*user);
      if (!ancestor)
        return nullptr;
      if (positions.lookup(ancestor) > positions.lookup(last))
        last = ancestor;
    }
  }
  return last;
}

namespace {
struct DeallocateAfterLastUsePass
    : public ridge::impl::DeallocateAfterLastUsePassBase<
          DeallocateAfterLastUsePass> {
  void runOnOperation() override {
    SmallVector<bufferization::DeallocOp> deallocs;
    getOperation().walk([&](bufferization::DeallocOp dealloc) {
      if (dealloc.getRetained().empty())
        deallocs.push_back(dealloc);
    });
    for (bufferization::DeallocOp dealloc : deallocs)
      splitDealloc(dealloc);
  }

  void splitDealloc(bufferization::DeallocOp dealloc) {
    Block &block = *dealloc->getBlock();
    // Op order once per block: inserting the new deallocs would make
    // Operation::isBeforeInBlock renumber the block each time.
    DenseMap<Operation *, unsigned> positions;
    for (auto [index, op] : llvm::enumerate(block))
      positions[&op] = index;

    SmallVector<Value> keptBuffers, keptConditions;
    struct Move {
      Value buffer, condition;
      Operation *lastUse;
    };
    SmallVector<Move> moves;
    for (auto [buffer, condition] :
         llvm::zip_equal(dealloc.getMemrefs(), dealloc.getConditions())) {
      auto alloc = buffer.getDefiningOp<memref::AllocOp>();
      Operation *last = nullptr;
      if (alloc && alloc->getBlock() == &block &&
          matchPattern(condition, m_One()))
        last = findLastUse(buffer, block, dealloc, positions);
      if (!last) {
        keptBuffers.push_back(buffer);
        keptConditions.push_back(condition);
        continue;
      }
      moves.push_back({buffer, condition, last});
    }
    if (moves.empty())
      return;

    OpBuilder builder(dealloc);
    Location loc = dealloc.getLoc();
    Value always;
    for (Move &move : moves) {
      // The condition (a constant true) is reused where it is already
      // defined; otherwise one constant at the block's start serves all.
      Value condition = move.condition;
      Operation *def = condition.getDefiningOp();
      if (def && def->getBlock() == &block &&
          positions.lookup(def) > positions.lookup(move.lastUse)) {
        if (!always) {
          builder.setInsertionPointToStart(&block);
          always = arith::ConstantOp::create(builder, loc,
                                             builder.getBoolAttr(true));
        }
        condition = always;
      }
      builder.setInsertionPointAfter(move.lastUse);
      bufferization::DeallocOp::create(builder, loc, ValueRange{move.buffer},
                                       ValueRange{condition}, ValueRange{});
      ++numMovedDeallocs;
    }
    LLVM_DEBUG(llvm::dbgs() << "freed " << moves.size()
                            << " buffers after their last use, kept "
                            << keptBuffers.size() << " at the block end\n");
    if (keptBuffers.empty()) {
      dealloc.erase();
      return;
    }
    dealloc.getMemrefsMutable().assign(keptBuffers);
    dealloc.getConditionsMutable().assign(keptConditions);
  }
};
} // namespace
