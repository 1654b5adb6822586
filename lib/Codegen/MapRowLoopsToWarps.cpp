//===- MapRowLoopsToWarps.cpp - One warp per row of a reduction kernel ----===//
//
// A fused row kernel (softmax, LayerNorm, RMSNorm with the ops around them)
// is a parallel loop over rows whose body walks each row several times:
// reduction loops into thread-private accumulators, then an elementwise loop
// that writes the row. Mapped one row per thread, neighbouring threads read
// addresses a row apart (uncoalesced) and each thread walks its row alone.
//
// This pass maps each row to a warp instead: lane l handles elements
// l, l + 32, l + 64, ... of every row loop, so that a warp's accesses are
// consecutive, and each reduction ends with a `gpu.subgroup_reduce`, lowered
// by upstream's butterfly of `gpu.shuffle xor`, that leaves the row's total
// in every lane. Loops the pattern does not
// cover are left to ridge-map-parallel-loops-to-gpu.
//
// A row much longer than a warp, in a kernel of too few rows to give every
// SM a warp (KernelConfig::rowWarps), is shared by the W warps of a block:
// thread t of the block handles elements t, t + 32W, ..., and each warp's
// total is combined with the other warps' through a W-element buffer in
// shared memory (a workgroup alloca, which
// ridge-workgroup-allocas-to-attributions makes a launch attribution), in
// warp order, so that every thread gets the same total.
//
// A row loop may reduce one value of each row over all the rows (an
// `scf.parallel` with one reduction, init 0 and `arith.maximumf`, into a 0-d
// buffer zeroed before it: the amax of the kernel's result that
// ridge-fold-result-amax-into-row-loops computes). Each row's first thread
// then folds the row's value into the buffer with one atomic max of its
// bits.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Analysis/Target.h"
#include "ridgeline/Codegen/KernelConfig.h"
#include "ridgeline/Codegen/Passes.h"

#include "AtomicMaximum.h"
#include "VectorAccesses.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-map-row-loops-to-warps"

namespace mlir::ridge {
#define GEN_PASS_DEF_MAPROWLOOPSTOWARPSPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

namespace {
/// One accumulator of a reduction loop: `store(combine(load(acc), v), acc)`.
struct Accumulator {
  memref::LoadOp load;
  memref::StoreOp store;
  Operation *combine;
};
} // namespace

/// The identity of `combine`, or null when the pass does not know it.
static TypedAttr getIdentity(Operation *combine) {
  Type type = combine->getResult(0).getType();
  Builder b(combine->getContext());
  if (auto floatType = dyn_cast<FloatType>(type)) {
    const llvm::fltSemantics &semantics = floatType.getFloatSemantics();
    if (isa<arith::AddFOp>(combine))
      return b.getFloatAttr(type, 0.0);
    if (isa<arith::MulFOp>(combine))
      return b.getFloatAttr(type, 1.0);
    if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combine))
      return b.getFloatAttr(type,
                            APFloat::getInf(semantics, /*Negative=*/true));
    if (isa<arith::MinimumFOp, arith::MinNumFOp>(combine))
      return b.getFloatAttr(type, APFloat::getInf(semantics));
    return nullptr;
  }
  if (isa<arith::AddIOp>(combine))
    return b.getIntegerAttr(type, 0);
  return nullptr;
}

/// The accumulators of `loop` if it is a reduction loop: every store in its
/// body updates a thread-private alloca (defined outside the loop, constant
/// indices) with a combiner of known identity. Empty otherwise.
static SmallVector<Accumulator> matchReductionLoop(scf::ForOp loop) {
  SmallVector<Accumulator> accumulators;
  bool ok = loop.getNumResults() == 0;
  loop.getBody()->walk([&](Operation *op) {
    if (isa<scf::ForOp, scf::ParallelOp>(op) ||
        (!isa<memref::StoreOp>(op) && !isPure(op) &&
         !isa<memref::LoadOp>(op))) {
      ok = false;
      return;
    }
    auto store = dyn_cast<memref::StoreOp>(op);
    if (!store)
      return;
    auto alloca = store.getMemRef().getDefiningOp<memref::AllocaOp>();
    Operation *combine = store.getValueToStore().getDefiningOp();
    if (!alloca || loop->isAncestor(alloca) || !combine ||
        combine->getNumOperands() != 2 ||
        combine->getOperand(0) == combine->getOperand(1) ||
        !getIdentity(combine)) {
      ok = false;
      return;
    }
    for (Value operand : combine->getOperands())
      if (auto load = operand.getDefiningOp<memref::LoadOp>())
        if (load.getMemRef() == store.getMemRef() &&
            load.getIndices() == store.getIndices()) {
          accumulators.push_back({load, store, combine});
          return;
        }
    ok = false;
  });
  if (!ok)
    return {};
  return accumulators;
}

/// Whether `root`'s body is a row kernel the warp mapping covers: its inner
/// loops are reduction loops or result-free 1-D parallel loops over the row
/// (at least one, the row's write), and nothing nests deeper.
/// The induction variable a row loop directly in the root body runs over.
static Value getRowIndex(Operation *loop) {
  if (auto forOp = dyn_cast<scf::ForOp>(loop))
    return forOp.getInductionVar();
  if (auto parallel = dyn_cast<scf::ParallelOp>(loop))
    return parallel.getInductionVars()[0];
  return nullptr;
}

/// A thread-private buffer holding a row (more than one element) stays
/// correct when split across lanes only if every access is made inside a
/// row loop starting at 0 with step 1, at that loop's index: lane l then
/// touches exactly the elements l, l + 32, ... in every loop.
static bool isLaneLocal(memref::AllocaOp buffer, scf::ParallelOp root) {
  if (buffer.getType().getNumElements() <= 1)
    return true;
  for (Operation *user : buffer->getUsers()) {
    ValueRange indices;
    if (auto load = dyn_cast<memref::LoadOp>(user))
      indices = load.getIndices();
    else if (auto store = dyn_cast<memref::StoreOp>(user))
      indices = store.getIndices();
    else
      return false;
    Operation *loop = user->getParentOp();
    while (loop && loop->getParentOp() != root.getOperation())
      loop = loop->getParentOp();
    Value index = loop ? getRowIndex(loop) : Value();
    if (!index || indices.empty() || indices.back() != index)
      return false;
    auto isConstant = [](Value v, int64_t c) {
      std::optional<int64_t> value = getConstantIntValue(v);
      return value && *value == c;
    };
    if (auto forOp = dyn_cast<scf::ForOp>(loop)) {
      if (!isConstant(forOp.getLowerBound(), 0) ||
          !isConstant(forOp.getStep(), 1))
        return false;
    } else {
      auto parallel = cast<scf::ParallelOp>(loop);
      if (!isConstant(parallel.getLowerBound()[0], 0) ||
          !isConstant(parallel.getStep()[0], 1))
        return false;
    }
  }
  return true;
}

/// The store of `root`'s one result, when the result is the maximum over
/// the rows (init 0, `arith.maximumf`) of a value each row computes, stored
/// into a 0-d buffer that is zeroed before the root
/// (ridge-fold-result-amax-into-row-loops: a result's amax): each row then
/// folds its value into the buffer with an atomic. Null otherwise.
static memref::StoreOp getRowMaximumStore(scf::ParallelOp root) {
  if (root.getNumResults() != 1 || !root.getResult(0).getType().isF32() ||
      !root.getResult(0).hasOneUse() ||
      !matchPattern(root.getInitVals()[0], m_PosZeroFloat()))
    return {};
  auto reduce = cast<scf::ReduceOp>(root.getBody()->getTerminator());
  Block &combine = reduce.getReductions()[0].front();
  auto max = dyn_cast<arith::MaximumFOp>(&combine.front());
  auto ret = dyn_cast<scf::ReduceReturnOp>(combine.getTerminator());
  if (!max || !ret || ret.getResult() != max.getResult() ||
      combine.getOperations().size() != 2 ||
      !llvm::is_contained(max->getOperands(), combine.getArgument(0)) ||
      !llvm::is_contained(max->getOperands(), combine.getArgument(1)))
    return {};
  auto store = dyn_cast<memref::StoreOp>(*root.getResult(0).getUsers().begin());
  if (!store || store.getValue() != root.getResult(0) ||
      store.getMemRefType().getRank() != 0 ||
      store->getBlock() != root->getBlock())
    return {};
  // Zeroed before the root, and not touched in between.
  for (Operation *op = root->getPrevNode(); op; op = op->getPrevNode()) {
    auto zeroing = dyn_cast<memref::StoreOp>(op);
    if (zeroing && zeroing.getMemRef() == store.getMemRef())
      return matchPattern(zeroing.getValue(), m_AnyZeroFloat()) ? store
                                                                : nullptr;
    if (llvm::is_contained(op->getOperands(), store.getMemRef()))
      return {};
  }
  return {};
}

static bool isRowKernel(scf::ParallelOp root) {
  if (root.getNumResults() != 0 && !getRowMaximumStore(root))
    return false;
  bool writesRow = false, ok = true;
  root.getBody()->walk(
      [&](memref::AllocaOp buffer) { ok &= isLaneLocal(buffer, root); });
  for (Operation &op : root.getBody()->without_terminator()) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      ok &= !matchReductionLoop(loop).empty();
    } else if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      writesRow = true;
      ok &= loop.getNumResults() == 0 && loop.getNumLoops() == 1;
      loop.getBody()->walk([&](Operation *nested) {
        if (isa<scf::ForOp, scf::ParallelOp>(nested))
          ok = false;
      });
    } else if (op.getNumRegions() != 0) {
      ok = false;
    }
  }
  return ok && writesRow;
}

/// What the code after a distributed reduction loop needs of an
/// accumulator, taken before the loop body is rewritten.
struct AccumulatorInfo {
  Value memref;
  SmallVector<Value> indices;
  OperationName combine;
  DictionaryAttr attributes;
  Type type;
  TypedAttr identity;

  explicit AccumulatorInfo(Accumulator acc)
      : memref(acc.store.getMemRef()), indices(acc.store.getIndices()),
        combine(acc.combine->getName()),
        attributes(acc.combine->getAttrDictionary()),
        type(acc.combine->getResult(0).getType()),
        identity(getIdentity(acc.combine)) {}

  Value createCombine(OpBuilder &b, Location loc, Value lhs, Value rhs) const {
    OperationState state(loc, combine);
    state.addOperands({lhs, rhs});
    state.addTypes(type);
    state.addAttributes(attributes.getValue());
    return b.create(state)->getResult(0);
  }
};

/// The warp reduction of a combiner getIdentity knows.
static gpu::AllReduceOperation getWarpReduction(OperationName combine) {
  StringRef name = combine.getStringRef();
  if (name == arith::AddFOp::getOperationName() ||
      name == arith::AddIOp::getOperationName())
    return gpu::AllReduceOperation::ADD;
  if (name == arith::MulFOp::getOperationName())
    return gpu::AllReduceOperation::MUL;
  if (name == arith::MaximumFOp::getOperationName())
    return gpu::AllReduceOperation::MAXIMUMF;
  if (name == arith::MaxNumFOp::getOperationName())
    return gpu::AllReduceOperation::MAXNUMF;
  if (name == arith::MinimumFOp::getOperationName())
    return gpu::AllReduceOperation::MINIMUMF;
  assert(name == arith::MinNumFOp::getOperationName() &&
         "combiner without a known identity");
  return gpu::AllReduceOperation::MINNUMF;
}

/// All-reduce of `value` over the warp with `acc`'s combiner, leaving the
/// total in every lane. Whole warps run it (the row guard is warp-uniform);
/// upstream's subgroup-reduce lowering turns it into a butterfly of
/// `gpu.shuffle xor` at the end of the pass.
static Value warpAllReduce(OpBuilder &b, Location loc, Value value,
                           const AccumulatorInfo &acc) {
  return gpu::SubgroupReduceOp::create(b, loc, value,
                                       getWarpReduction(acc.combine),
                                       /*uniform=*/true);
}

namespace {
/// The threads that share one row: a warp's lanes, or (KernelConfig::
/// rowWarps > 1) all the threads of a block.
struct RowThreads {
  /// The thread's position in the row's threads, and how many there are.
  Value thread;
  int64_t count = kWarpSize;
  /// The thread's warp in the row and its lane (count > 32).
  Value warp, lane;
  /// Where the shared buffers of the cross-warp combination are allocated:
  /// the start of the block's thread loop.
  Block *threadBody = nullptr;
};
} // namespace

/// The total of `warpTotal` (a warp's all-reduce, in every lane) over the
/// warps that share the row: each warp's lane 0 writes its total to a slot
/// of a shared buffer, a barrier, then every thread combines the slots in
/// warp order (the same total, bit for bit, in every thread).
static Value combineAcrossWarps(RewriterBase &rewriter, Location loc,
                                Value warpTotal, const AccumulatorInfo &acc,
                                const RowThreads &row) {
  int64_t warps = row.count / kWarpSize;
  if (warps == 1)
    return warpTotal;
  auto workgroup = gpu::AddressSpaceAttr::get(
      rewriter.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  auto slotsType = MemRefType::get({warps}, acc.type,
                                   MemRefLayoutAttrInterface(), workgroup);
  Value slots;
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(row.threadBody);
    slots = memref::AllocaOp::create(rewriter, loc, slotsType);
  }
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value isFirstLane = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::eq, row.lane, zero);
  auto write = scf::IfOp::create(rewriter, loc, isFirstLane);
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(write.thenBlock()->getTerminator());
    memref::StoreOp::create(rewriter, loc, warpTotal, slots, row.warp);
  }
  gpu::BarrierOp::create(rewriter, loc);
  Value total = memref::LoadOp::create(rewriter, loc, slots, zero);
  for (int64_t w = 1; w < warps; ++w)
    total = acc.createCombine(
        rewriter, loc, total,
        memref::LoadOp::create(
            rewriter, loc, slots,
            ValueRange{arith::ConstantIndexOp::create(rewriter, loc, w)}));
  return total;
}

/// Whether a row loop runs over a multiple of `threads` x 4 elements from 0
/// in unit steps: each of the row's threads can then own 4 consecutive
/// elements per step.
static bool fitsVectorLayout(Operation *loop, int64_t threads) {
  std::optional<int64_t> first, upper, unit;
  if (auto forOp = dyn_cast<scf::ForOp>(loop)) {
    first = getConstantIntValue(forOp.getLowerBound());
    upper = getConstantIntValue(forOp.getUpperBound());
    unit = getConstantIntValue(forOp.getStep());
  } else {
    auto parallel = cast<scf::ParallelOp>(loop);
    first = getConstantIntValue(parallel.getLowerBound()[0]);
    upper = getConstantIntValue(parallel.getUpperBound()[0]);
    unit = getConstantIntValue(parallel.getStep()[0]);
  }
  return first == 0 && unit == 1 && upper &&
         *upper % (threads * kVectorWidth) == 0;
}

static Block *getRowLoopBody(Operation *loop) {
  if (auto forOp = dyn_cast<scf::ForOp>(loop))
    return forOp.getBody();
  return cast<scf::ParallelOp>(loop).getBody();
}

/// Decides, for the row loops of one row kernel, which give each lane 4
/// consecutive elements per step (the vector layout) and which give it
/// elements lane, lane + 32, ... (the scalar layout). A lane-private row
/// buffer is split across lanes by the layout of the loops that touch it,
/// so all of those loops must share one layout: the vector one only if
/// every one of them fits it and at least one has 16-byte accesses to gain.
/// The thread-private row buffer (an alloca of more than one element) that
/// `access` loads or stores, or null.
static memref::AllocaOp getRowBuffer(Operation *access) {
  Value memref;
  if (auto load = dyn_cast<memref::LoadOp>(access))
    memref = load.getMemRef();
  else if (auto store = dyn_cast<memref::StoreOp>(access))
    memref = store.getMemRef();
  auto buffer = memref ? memref.getDefiningOp<memref::AllocaOp>() : nullptr;
  if (!buffer || buffer.getType().getNumElements() <= 1)
    return nullptr;
  return buffer;
}

static llvm::SmallPtrSet<Operation *, 8>
selectVectorLayoutLoops(ArrayRef<Operation *> loops, int64_t threads) {
  llvm::EquivalenceClasses<Operation *> classes;
  DenseMap<Operation *, Operation *> firstLoopOfBuffer;
  for (Operation *loop : loops) {
    classes.insert(loop);
    loop->walk([&](Operation *access) {
      memref::AllocaOp buffer = getRowBuffer(access);
      if (!buffer)
        return;
      auto [it, inserted] = firstLoopOfBuffer.try_emplace(buffer, loop);
      if (!inserted)
        classes.unionSets(it->second, loop);
    });
  }
  llvm::SmallPtrSet<Operation *, 8> selected;
  for (auto it = classes.begin(); it != classes.end(); ++it) {
    if (!(*it)->isLeader())
      continue;
    bool allFit = true, anyGain = false;
    for (auto member = classes.member_begin(**it);
         member != classes.member_end(); ++member) {
      Operation *loop = *member;
      bool fits = fitsVectorLayout(loop, threads);
      allFit &= fits;
      if (fits) {
        SmallVector<Operation *> accesses;
        Block *body = getRowLoopBody(loop);
        findVectorAccesses(body, body->getArgument(0), accesses);
        anyGain |= !accesses.empty();
      }
    }
    if (!allFit || !anyGain)
      continue;
    for (auto member = classes.member_begin(**it);
         member != classes.member_end(); ++member)
      selected.insert(*member);
  }
  return selected;
}

/// Counts `loop`'s iterations from 0 when every thread of the row runs
/// `count` of them: `for i = 0 to count`, the old induction variable
/// `start + i * stride`. LLVM can then unroll a short row loop fully, and a
/// lane-private row buffer it indexes (shrinkRowBuffer) can live in
/// registers instead of local memory.
static void normalizeRowLoop(RewriterBase &rewriter, scf::ForOp loop,
                             Value start, int64_t stride, int64_t count) {
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  auto constant = [&](int64_t value) {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  };
  Value zero = constant(0), upper = constant(count), one = constant(1);
  rewriter.modifyOpInPlace(loop, [&] {
    loop.setLowerBound(zero);
    loop.setUpperBound(upper);
    loop.setStep(one);
  });
  rewriter.setInsertionPointToStart(loop.getBody());
  Value counter = loop.getInductionVar();
  auto scaled = arith::MulIOp::create(rewriter, loc, counter, constant(stride));
  Value element = arith::AddIOp::create(rewriter, loc, start, scaled);
  rewriter.replaceAllUsesExcept(counter, element, scaled);
}

/// Thread t of the row's T threads (a warp's lanes: T = 32) runs iterations
/// lb + t*step, lb + (t+T)*step, ... of `loop`. In the vector layout
/// (selectVectorLayoutLoops) it instead runs 4 consecutive elements per
/// step of 4T, with 16-byte accesses where they are aligned.
static void distributeLoopBounds(RewriterBase &rewriter, scf::ForOp loop,
                                 const RowThreads &row, bool vectorLayout) {
  Location loc = loop.getLoc();
  Value lane = row.thread;
  if (vectorLayout) {
    SmallVector<Operation *> accesses;
    findVectorAccesses(loop.getBody(), loop.getInductionVar(), accesses);
    rewriter.setInsertionPoint(loop);
    Value start = arith::MulIOp::create(
        rewriter, loc, lane,
        arith::ConstantIndexOp::create(rewriter, loc, kVectorWidth));
    Value step =
        arith::ConstantIndexOp::create(rewriter, loc, row.count * kVectorWidth);
    int64_t upper = *getConstantIntValue(loop.getUpperBound());
    rewriter.modifyOpInPlace(loop, [&] {
      loop.setLowerBound(start);
      loop.setStep(step);
    });
    unrollWithVectorAccesses(rewriter, loop.getBody(), /*ivIndex=*/0, accesses);
    // The layout runs from 0 over a multiple of 4T (fitsVectorLayout).
    int64_t stride = row.count * kVectorWidth;
    normalizeRowLoop(rewriter, loop, start, stride, upper / stride);
    return;
  }
  rewriter.setInsertionPoint(loop);
  std::optional<int64_t> lower0 = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step0 = getConstantIntValue(loop.getStep());
  Value offset = arith::MulIOp::create(rewriter, loc, lane, loop.getStep());
  Value lower =
      arith::AddIOp::create(rewriter, loc, loop.getLowerBound(), offset);
  Value threads = arith::ConstantIndexOp::create(rewriter, loc, row.count);
  Value step = arith::MulIOp::create(rewriter, loc, loop.getStep(), threads);
  rewriter.modifyOpInPlace(loop, [&] {
    loop.setLowerBound(lower);
    loop.setStep(step);
  });
  // Every thread runs the same number of iterations when the row is a
  // whole number of T steps.
  if (lower0 && upper && step0 && *step0 > 0 && *upper > *lower0 &&
      (*upper - *lower0) % (*step0 * row.count) == 0) {
    int64_t stride = *step0 * row.count;
    normalizeRowLoop(rewriter, loop, lower, stride,
                     (*upper - *lower0) / stride);
  }
}

/// Shrinks a lane-private row buffer (isLaneLocal: every access at a row
/// loop's index) to the N / T elements each of the row's T threads touches:
/// element idx is local element idx / T in the scalar layout (idx = t + T i)
/// and (idx / 4T) * 4 + idx % 4 in the vector one (idx = 4t + 4T i + k).
/// With the row loops counted from 0 (normalizeRowLoop), the local index is
/// the loop counter's, and a short row's buffer becomes registers once LLVM
/// unrolls the loops: a LayerNorm's cached row no longer goes through local
/// memory.
static void shrinkRowBuffer(RewriterBase &rewriter, memref::AllocaOp buffer,
                            int64_t threads, bool vectorLayout) {
  MemRefType type = buffer.getType();
  if (!type.hasStaticShape() || type.getRank() == 0 ||
      !type.getLayout().isIdentity())
    return;
  int64_t elements = type.getShape().back();
  int64_t unit = vectorLayout ? threads * kVectorWidth : threads;
  if (elements % unit != 0 || elements == elements / threads)
    return;
  auto indicesOf = [](Operation *user) -> std::optional<MutableOperandRange> {
    if (auto load = dyn_cast<memref::LoadOp>(user))
      return load.getIndicesMutable();
    if (auto store = dyn_cast<memref::StoreOp>(user))
      return store.getIndicesMutable();
    if (auto load = dyn_cast<vector::LoadOp>(user))
      return load.getIndicesMutable();
    if (auto store = dyn_cast<vector::StoreOp>(user))
      return store.getIndicesMutable();
    return std::nullopt;
  };
  for (Operation *user : buffer->getUsers()) {
    std::optional<MutableOperandRange> indices = indicesOf(user);
    if (!indices || indices->empty())
      return;
  }
  Location loc = buffer.getLoc();
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = elements / threads;
  rewriter.setInsertionPoint(buffer);
  auto local = memref::AllocaOp::create(
      rewriter, loc,
      MemRefType::get(shape, type.getElementType(), MemRefLayoutAttrInterface(),
                      type.getMemorySpace()),
      buffer.getAlignmentAttr());
  auto constant = [&](int64_t value) {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  };
  for (Operation *user : llvm::to_vector(buffer->getUsers())) {
    rewriter.setInsertionPoint(user);
    MutableOperandRange indices = *indicesOf(user);
    Value index = indices[indices.size() - 1].get();
    Value position;
    if (vectorLayout) {
      Value step = arith::DivUIOp::create(rewriter, loc, index, constant(unit));
      position = arith::AddIOp::create(
          rewriter, loc,
          arith::MulIOp::create(rewriter, loc, step, constant(kVectorWidth)),
          arith::RemUIOp::create(rewriter, loc, index, constant(kVectorWidth)));
    } else {
      position =
          arith::DivUIOp::create(rewriter, loc, index, constant(threads));
    }
    rewriter.modifyOpInPlace(user, [&] {
      indices[indices.size() - 1].set(position);
      user->replaceUsesOfWith(buffer.getResult(), local.getResult());
    });
  }
  rewriter.eraseOp(buffer);
}

/// Strides a reduction loop over the row's threads and combines their
/// partials: across a warp's lanes, then across the row's warps.
static void distributeReduction(RewriterBase &rewriter, scf::ForOp loop,
                                const RowThreads &row, bool vectorLayout) {
  SmallVector<AccumulatorInfo> accumulators;
  for (Accumulator acc : matchReductionLoop(loop))
    accumulators.emplace_back(acc);
  Location loc = loop.getLoc();
  // Each lane starts from the identity; the value before the loop joins
  // the warp's total once.
  rewriter.setInsertionPoint(loop);
  SmallVector<Value> initial;
  for (const AccumulatorInfo &acc : accumulators) {
    initial.push_back(
        memref::LoadOp::create(rewriter, loc, acc.memref, acc.indices));
    Value identity = arith::ConstantOp::create(rewriter, loc, acc.identity);
    memref::StoreOp::create(rewriter, loc, identity, acc.memref, acc.indices);
  }
  distributeLoopBounds(rewriter, loop, row, vectorLayout);
  rewriter.setInsertionPointAfter(loop);
  for (auto [acc, init] : llvm::zip(accumulators, initial)) {
    Value partial =
        memref::LoadOp::create(rewriter, loc, acc.memref, acc.indices);
    Value total = combineAcrossWarps(
        rewriter, loc, warpAllReduce(rewriter, loc, partial, acc), acc, row);
    Value result = acc.createCombine(rewriter, loc, init, total);
    memref::StoreOp::create(rewriter, loc, result, acc.memref, acc.indices);
  }
}

/// Turns a row's elementwise parallel loop into a thread-strided scf.for.
static void distributeRowLoop(RewriterBase &rewriter, scf::ParallelOp loop,
                              const RowThreads &row, bool vectorLayout) {
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  auto forOp = scf::ForOp::create(rewriter, loc, loop.getLowerBound()[0],
                                  loop.getUpperBound()[0], loop.getStep()[0]);
  Block *body = loop.getBody();
  rewriter.eraseOp(body->getTerminator());
  rewriter.inlineBlockBefore(body, forOp.getBody()->getTerminator(),
                             forOp.getInductionVar());
  rewriter.eraseOp(loop);
  distributeLoopBounds(rewriter, forOp, row, vectorLayout);
}

/// The trip count of each dimension of a row kernel's root (static after
/// tiling; the pass only takes roots with constant bounds).
static SmallVector<int64_t> getRowExtents(scf::ParallelOp root) {
  SmallVector<int64_t> extents;
  for (auto [lb, ub, step] :
       llvm::zip(root.getLowerBound(), root.getUpperBound(), root.getStep())) {
    int64_t l = *getConstantIntValue(lb), u = *getConstantIntValue(ub),
            s = *getConstantIntValue(step);
    extents.push_back((u - l + s - 1) / s);
  }
  return extents;
}

/// The rows of a row kernel: the product of its root's trip counts.
static int64_t getNumRows(scf::ParallelOp root) {
  int64_t rows = 1;
  for (int64_t extent : getRowExtents(root))
    rows *= extent;
  return rows;
}

/// Replaces `root` (rows over its iteration space) by a block x thread loop
/// nest in which warp w of block b handles row b * warpsPerBlock + w, or
/// (config.rowWarps > 1) block b handles row b with all its warps.
/// Returns the number of row loops given the vector layout.
static unsigned mapRowsToWarps(RewriterBase &rewriter, scf::ParallelOp root,
                               const KernelConfig &config) {
  MLIRContext *ctx = rewriter.getContext();
  Location loc = root.getLoc();
  rewriter.setInsertionPoint(root);
  auto constant = [&](int64_t v) {
    return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
  };
  SmallVector<int64_t> extents = getRowExtents(root);
  int64_t rows = getNumRows(root);
  int64_t warpsPerBlock = config.warpsPerBlock;
  int64_t rowWarps = config.rowWarps;
  int64_t rowsPerBlock = warpsPerBlock / rowWarps;
  int64_t blocks = (rows + rowsPerBlock - 1) / rowsPerBlock;
  int64_t threads = warpsPerBlock * kWarpSize;

  Value zero = constant(0), one = constant(1);
  auto grid =
      scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                              ValueRange{constant(blocks)}, ValueRange{one});
  rewriter.setInsertionPointToStart(grid.getBody());
  auto block =
      scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                              ValueRange{constant(threads)}, ValueRange{one});
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, ctx);
  (void)gpu::setMappingAttr(
      grid, {gpu::ParallelLoopDimMappingAttr::get(ctx, gpu::Processor::BlockX,
                                                  identity, identity)});
  (void)gpu::setMappingAttr(
      block, {gpu::ParallelLoopDimMappingAttr::get(ctx, gpu::Processor::ThreadX,
                                                   identity, identity)});

  rewriter.setInsertionPointToStart(block.getBody());
  Value thread = block.getInductionVars()[0];
  Value warp =
      arith::DivUIOp::create(rewriter, loc, thread, constant(kWarpSize));
  Value lane =
      arith::RemUIOp::create(rewriter, loc, thread, constant(kWarpSize));
  RowThreads rowThreads;
  rowThreads.threadBody = block.getBody();
  rowThreads.warp = warp;
  rowThreads.lane = lane;
  Value row;
  if (rowWarps == 1) {
    rowThreads.thread = lane;
    row = arith::AddIOp::create(
        rewriter, loc,
        arith::MulIOp::create(rewriter, loc, grid.getInductionVars()[0],
                              constant(warpsPerBlock)),
        warp);
  } else {
    rowThreads.thread = thread;
    rowThreads.count = threads;
    row = grid.getInductionVars()[0];
  }
  // Whole warps take the same branch (whole blocks, for rows shared by
  // warps), so the shuffles and barriers below stay converged.
  Value inRange = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::ult, row, constant(rows));
  auto guard = scf::IfOp::create(rewriter, loc, inRange);
  rewriter.setInsertionPointToStart(guard.thenBlock());
  SmallVector<Value> ivs(extents.size());
  Value rest = row;
  for (int64_t d = extents.size() - 1; d >= 0; --d) {
    Value position =
        arith::RemUIOp::create(rewriter, loc, rest, constant(extents[d]));
    rest = arith::DivUIOp::create(rewriter, loc, rest, constant(extents[d]));
    ivs[d] = arith::AddIOp::create(
        rewriter, loc, root.getLowerBound()[d],
        arith::MulIOp::create(rewriter, loc, position, root.getStep()[d]));
  }
  Block *body = root.getBody();
  // A maximum over the rows (a result's amax): each row's value, and the
  // buffer it goes to.
  memref::StoreOp rowMaximumStore = getRowMaximumStore(root);
  Value rowValue, maximumBuffer;
  if (rowMaximumStore) {
    rowValue = cast<scf::ReduceOp>(body->getTerminator()).getOperands()[0];
    maximumBuffer = rowMaximumStore.getMemRef();
    rewriter.eraseOp(rowMaximumStore);
  }
  rewriter.eraseOp(body->getTerminator());
  rewriter.inlineBlockBefore(body, guard.thenBlock()->getTerminator(), ivs);
  rewriter.eraseOp(root);

  SmallVector<Operation *> loops;
  for (Operation &op : guard.thenBlock()->without_terminator())
    if (isa<scf::ForOp, scf::ParallelOp>(op))
      loops.push_back(&op);
  llvm::SmallPtrSet<Operation *, 8> vectorLoops;
  if (config.vectorWidth > 1)
    vectorLoops = selectVectorLayoutLoops(loops, rowThreads.count);
  // The layout of each lane-private row buffer: its loops' (one layout for
  // all of them, selectVectorLayoutLoops).
  llvm::MapVector<Operation *, bool> rowBuffers;
  for (Operation *loop : loops)
    loop->walk([&](Operation *access) {
      if (memref::AllocaOp buffer = getRowBuffer(access))
        rowBuffers.try_emplace(buffer, vectorLoops.contains(loop));
    });
  for (Operation *loop : loops) {
    bool vectorLayout = vectorLoops.contains(loop);
    if (auto forOp = dyn_cast<scf::ForOp>(loop))
      distributeReduction(rewriter, forOp, rowThreads, vectorLayout);
    else
      distributeRowLoop(rewriter, cast<scf::ParallelOp>(loop), rowThreads,
                        vectorLayout);
  }
  for (auto [buffer, vectorLayout] : rowBuffers)
    shrinkRowBuffer(rewriter, cast<memref::AllocaOp>(buffer), rowThreads.count,
                    vectorLayout);
  if (rowValue) {
    // The row's first thread folds the row's value (the same in all of its
    // threads) into the buffer: max(value, 0), the root's init, as the
    // bits of a non-negative float order as u32 (NaN above infinity), so
    // one `atom.global.max.u32` a row; the buffer was zeroed before.
    rewriter.setInsertionPoint(guard.thenBlock()->getTerminator());
    Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                        rowThreads.thread, constant(0));
    auto ifFirst = scf::IfOp::create(rewriter, loc, first);
    rewriter.setInsertionPointToStart(ifFirst.thenBlock());
    Value clamped = arith::MaximumFOp::create(
        rewriter, loc, rowValue,
        arith::ConstantOp::create(
            rewriter, loc, rewriter.getFloatAttr(rowValue.getType(), 0.0)));
    createAtomicMaxOfBits(rewriter, loc, clamped, maximumBuffer);
  }
  return vectorLoops.size();
}

namespace {
/// Splits a 64-bit `gpu.shuffle` (f64, i64) into two 32-bit shuffles of its
/// halves: `shfl.sync` moves 32 bits, and convert-gpu-to-nvvm lowers no wider
/// shuffle. Both halves go through the same lane, so either's `valid` flag
/// serves.
struct SplitWideShuffle : OpRewritePattern<gpu::ShuffleOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(gpu::ShuffleOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getValue().getType();
    if (!type.isIntOrFloat() || type.getIntOrFloatBitWidth() != 64)
      return rewriter.notifyMatchFailure(op, "not a 64-bit scalar");
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type();
    Type i64 = rewriter.getI64Type();
    Value bits = op.getValue();
    if (type != i64)
      bits = arith::BitcastOp::create(rewriter, loc, i64, bits);
    Value c32 = arith::ConstantIntOp::create(rewriter, loc, i64, 32);
    Value lo = arith::TruncIOp::create(rewriter, loc, i32, bits);
    Value hi = arith::TruncIOp::create(
        rewriter, loc, i32, arith::ShRUIOp::create(rewriter, loc, bits, c32));
    auto shuffleLo = gpu::ShuffleOp::create(rewriter, loc, lo, op.getOffset(),
                                            op.getWidth(), op.getMode());
    auto shuffleHi = gpu::ShuffleOp::create(rewriter, loc, hi, op.getOffset(),
                                            op.getWidth(), op.getMode());
    Value joined = arith::OrIOp::create(
        rewriter, loc,
        arith::ExtUIOp::create(rewriter, loc, i64,
                               shuffleLo.getShuffleResult()),
        arith::ShLIOp::create(
            rewriter, loc,
            arith::ExtUIOp::create(rewriter, loc, i64,
                                   shuffleHi.getShuffleResult()),
            c32));
    if (type != i64)
      joined = arith::BitcastOp::create(rewriter, loc, type, joined);
    rewriter.replaceOp(op, {joined, shuffleLo.getValid()});
    return success();
  }
};

struct MapRowLoopsToWarpsPass
    : public ridge::impl::MapRowLoopsToWarpsPassBase<MapRowLoopsToWarpsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (warpsPerBlock <= 0 || warpsPerBlock * kWarpSize > 1024) {
      func.emitError() << "warps-per-block must be in [1, 32], got "
                       << static_cast<int64_t>(warpsPerBlock);
      return signalPassFailure();
    }
    SmallVector<scf::ParallelOp> roots;
    func.walk([&](scf::ParallelOp loop) {
      if (loop->getParentOfType<scf::ParallelOp>() ||
          loop->hasAttr(gpu::getMappingAttrName()))
        return;
      bool staticBounds = llvm::all_of(
          llvm::concat<Value>(loop.getLowerBound(), loop.getUpperBound(),
                              loop.getStep()),
          [](Value v) { return getConstantIntValue(v).has_value(); });
      if (staticBounds && isRowKernel(loop))
        roots.push_back(loop);
    });
    if (roots.empty())
      return;
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp root : roots) {
      // The kernel's config decides; a loop without one (ridge-opt input)
      // fills the SMs of the target's GPU, or `sm-count` of them.
      FailureOr<std::optional<KernelConfig>> attached = getKernelConfig(root);
      if (failed(attached))
        return signalPassFailure();
      KernelConfig config;
      if (*attached) {
        config = **attached;
      } else {
        int64_t sms = smCount;
        if (sms <= 0) {
          FailureOr<TargetSpec> target = getTargetForPass(func);
          if (failed(target))
            return signalPassFailure();
          sms = target->gpu.smCount;
        }
        config.warpsPerBlock =
            selectWarpsPerBlock(getNumRows(root), sms, warpsPerBlock);
      }
      LLVM_DEBUG(llvm::dbgs() << "one warp per row, " << config.warpsPerBlock
                              << " per block: " << root.getLoc() << "\n");
      numVectorizedLoops += mapRowsToWarps(rewriter, root, config);
      ++numRowKernels;
    }
    // Values of up to 32 bits (vectors packed into 32-bit chunks) shuffle
    // as one i32; the 64-bit shuffles the fallback (lower benefit) emits for
    // f64/i64 are then split into two 32-bit halves.
    RewritePatternSet shuffles(&getContext());
    populateGpuLowerSubgroupReduceToShufflePatterns(
        shuffles, kWarpSize, /*shuffleBitwidth=*/32, /*benefit=*/2);
    populateGpuLowerSubgroupReduceToShufflePatterns(
        shuffles, kWarpSize, /*shuffleBitwidth=*/64, /*benefit=*/1);
    shuffles.add<SplitWideShuffle>(&getContext());
    // Only the reductions change; the rest of the IR keeps its form.
    GreedyRewriteConfig config;
    config.enableFolding(false)
        .enableConstantCSE(false)
        .setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(func, std::move(shuffles), config))) {
      func.emitError("cannot lower the warp reductions to shuffles");
      return signalPassFailure();
    }
  }
};
} // namespace
