//===- VectorAccesses.cpp - 16-byte accesses of 4 consecutive elements ----===//

#include "VectorAccesses.h"

#include "ridgeline/Codegen/MmaContraction.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::ridge;

SmallVector<scf::ParallelOp>
mlir::ridge::getUnmappedRootLoops(func::FuncOp func) {
  SmallVector<scf::ParallelOp> roots;
  func.walk([&](scf::ParallelOp loop) {
    if (!loop->getParentOfType<scf::ParallelOp>() &&
        !loop->hasAttr(gpu::getMappingAttrName()))
      roots.push_back(loop);
  });
  return roots;
}

LogicalResult mlir::ridge::foldElementViews(Region &region) {
  MLIRContext *ctx = region.getContext();
  RewritePatternSet patterns(ctx);
  memref::populateFoldMemRefAliasOpPatterns(patterns);
  affine::AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
  GreedyRewriteConfig greedy;
  greedy.setScope(&region);
  return applyPatternsGreedily(region, std::move(patterns), greedy);
}

bool mlir::ridge::isVectorAligned(Value memref) {
  auto type = dyn_cast<MemRefType>(memref.getType());
  if (!type || (type.getElementTypeBitWidth() != 32 &&
                type.getElementTypeBitWidth() != 16))
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.empty() ||
      strides.back() != 1)
    return false;
  for (int64_t stride : ArrayRef<int64_t>(strides).drop_back())
    if (ShapedType::isDynamic(stride) || stride % kVectorWidth != 0)
      return false;
  Operation *def = memref.getDefiningOp();
  if (!def)
    return type.getLayout().isIdentity();
  if (auto alloca = dyn_cast<memref::AllocaOp>(def))
    return alloca.getAlignment().value_or(0) >= 16;
  if (isa<memref::AllocOp, memref::GetGlobalOp>(def))
    return type.getLayout().isIdentity();
  if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(def))
    return isVectorAligned(def->getOperand(0));
  if (auto subview = dyn_cast<memref::SubViewOp>(def)) {
    // The last dimension's offset must be a static multiple of 4; every
    // other offset is scaled by a stride that is one (checked above).
    std::optional<int64_t> last =
        getConstantIntValue(subview.getMixedOffsets().back());
    return last && *last % kVectorWidth == 0 &&
           isVectorAligned(subview.getSource());
  }
  return false;
}

/// Whether `value` depends on `iv` through the ops of `loop` (operands, and
/// the ivs of loops nested in it, which are independent of it).
static bool dependsOn(Value value, Value iv, Operation *loop,
                      DenseMap<Value, bool> &known) {
  if (value == iv)
    return true;
  Operation *def = value.getDefiningOp();
  if (!def || !loop->isAncestor(def))
    return false;
  auto [it, inserted] = known.try_emplace(value, false);
  if (!inserted)
    return it->second;
  bool result = llvm::any_of(def->getOperands(), [&](Value operand) {
    return dependsOn(operand, iv, loop, known);
  });
  known[value] = result;
  return result;
}

/// The ops of `body` (its own, not nested) that `values` are computed from,
/// each after those it reads.
static llvm::SetVector<Operation *> getComputingOps(Block *body,
                                                    ValueRange values) {
  llvm::SetVector<Operation *> slice;
  for (Value value : values)
    slice.insert_range(mlir::ridge::getBodySlice(value, body));
  return slice;
}

/// Whether `value`, computed in `body`, is the same for every iteration of
/// its loop's 4 elements and can be computed once before them: its ops in
/// the body are pure, or loads of buffers the body does not write (an
/// embedding row's index, from the token id the row reads).
static bool isComputedOnce(Block *body, Value value,
                           const llvm::SmallPtrSetImpl<Value> &written) {
  return llvm::all_of(getComputingOps(body, value), [&](Operation *op) {
    if (op->getNumRegions() != 0)
      return false;
    if (auto load = dyn_cast<memref::LoadOp>(op))
      return !written.contains(load.getMemRef());
    return isPure(op);
  });
}

void mlir::ridge::findVectorAccesses(Block *body, Value iv,
                                     SmallVectorImpl<Operation *> &accesses,
                                     bool nestedIndices) {
  Operation *loop = body->getParentOp();
  DenseMap<Value, bool> known;
  llvm::SmallPtrSet<Value, 8> written;
  body->walk([&](memref::StoreOp store) { written.insert(store.getMemRef()); });
  // An index that is not `iv` and is an argument of the body (another
  // dimension of a parallel loop), defined above the loop, or computed in
  // the body once for the 4 elements (a gathered row's index); with
  // `nestedIndices`, any that does not depend on `iv`.
  auto isIndependent = [&](Value index) {
    if (index == iv)
      return false;
    if (nestedIndices)
      return !dependsOn(index, iv, loop, known);
    if (auto arg = dyn_cast<BlockArgument>(index);
        arg && arg.getOwner() == body)
      return true;
    if (index.getParentBlock() == body)
      return !dependsOn(index, iv, loop, known) &&
             isComputedOnce(body, index, written);
    return !loop->isAncestor(index.getParentBlock()->getParentOp());
  };
  // The last index of an access along `iv`: iv, or with `nestedIndices`
  // iv linearized last with a basis of whole vectors, (..., iv) by (...,
  // n) with n a multiple of 4 (a view of more dimensions folded into a 1-D
  // buffer: a depthwise weight [1, 3, 3, C] of a 2304-element constant).
  auto isAlongIv = [&](Value index) {
    if (index == iv)
      return true;
    auto linearize = index.getDefiningOp<affine::AffineLinearizeIndexOp>();
    if (!nestedIndices || !linearize || !linearize.getDisjoint())
      return false;
    auto multi = linearize.getMultiIndex();
    ArrayRef<int64_t> basis = linearize.getStaticBasis();
    return !multi.empty() && multi.back() == iv && !basis.empty() &&
           !ShapedType::isDynamic(basis.back()) &&
           basis.back() % kVectorWidth == 0 &&
           llvm::all_of(multi.drop_back(), isIndependent);
  };
  llvm::SmallPtrSet<Value, 8> stored, loaded;
  SmallVector<Operation *> candidates;
  body->walk([&](Operation *op) {
    // A straight-line body's vector loads are issued before its ops: a load
    // inside a conditional stays one (it may be out of bounds).
    if (!nestedIndices && op->getBlock() != body)
      return;
    Value memref;
    ValueRange indices;
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      memref = load.getMemRef();
      indices = load.getIndices();
      loaded.insert(memref);
    } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
      memref = store.getMemRef();
      indices = store.getIndices();
      stored.insert(memref);
    } else {
      return;
    }
    if (indices.empty() || !isAlongIv(indices.back()) ||
        !isVectorAligned(memref) ||
        !llvm::all_of(indices.drop_back(), isIndependent))
      return;
    candidates.push_back(op);
  });
  for (Operation *op : candidates) {
    Value memref = isa<memref::LoadOp>(op)
                       ? cast<memref::LoadOp>(op).getMemRef()
                       : cast<memref::StoreOp>(op).getMemRef();
    if (!(stored.contains(memref) && loaded.contains(memref)))
      accesses.push_back(op);
  }
}

/// The alignment of a vector access of `kVectorWidth` elements of `type`
/// on a vector-aligned buffer: 16 bytes for 32-bit elements, 8 for 16-bit.
static llvm::MaybeAlign getVectorAlignment(Type type) {
  return llvm::MaybeAlign(kVectorWidth * type.getIntOrFloatBitWidth() / 8);
}

void mlir::ridge::unrollWithVectorAccesses(RewriterBase &rewriter, Block *body,
                                           unsigned ivIndex,
                                           ArrayRef<Operation *> accesses) {
  Region *region = body->getParent();
  Location loc = body->getParentOp()->getLoc();
  Value iv = body->getArgument(ivIndex);
  llvm::SmallPtrSet<Operation *, 8> vectorized(accesses.begin(),
                                               accesses.end());
  // Loads the 4 elements share (a broadcast operand: no index depends on
  // iv, the body never writes the buffer) are issued once.
  llvm::SmallPtrSet<Value, 8> written;
  body->walk([&](memref::StoreOp store) { written.insert(store.getMemRef()); });
  auto isShared = [&](Operation &op) {
    auto load = dyn_cast<memref::LoadOp>(op);
    return load && !written.contains(load.getMemRef()) &&
           llvm::none_of(load.getIndices(), [&](Value index) {
             return index == iv || (!isa<BlockArgument>(index) &&
                                    index.getParentBlock() == body);
           });
  };
  DenseMap<Operation *, Value> sharedLoads;
  SmallVector<Location> argLocs(body->getNumArguments(), loc);
  Block *newBody =
      rewriter.createBlock(region, {}, body->getArgumentTypes(), argLocs);
  Value base = newBody->getArgument(ivIndex);
  rewriter.setInsertionPointToStart(newBody);
  // The vector loads' indices that the body computes (the same for the 4
  // elements: findVectorAccesses) are computed once, first.
  IRMapping prelude;
  prelude.map(body->getArguments(), newBody->getArguments());
  SmallVector<Value> computedIndices;
  for (Operation *op : accesses) {
    if (auto load = dyn_cast<memref::LoadOp>(op))
      llvm::append_range(computedIndices, load.getIndices());
    else
      llvm::append_range(computedIndices,
                         cast<memref::StoreOp>(op).getIndices());
  }
  llvm::SetVector<Operation *> computedOnce =
      getComputingOps(body, ValueRange(computedIndices));
  for (Operation *op : computedOnce)
    rewriter.clone(*op, prelude);
  DenseMap<Operation *, Value> vectors;
  for (Operation *op : accesses)
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      SmallVector<Value> indices;
      for (Value index : load.getIndices())
        indices.push_back(prelude.lookupOrDefault(index));
      auto type = VectorType::get({kVectorWidth}, load.getType());
      vectors[op] = vector::LoadOp::create(
          rewriter, loc, type, load.getMemRef(), indices,
          /*nontemporal=*/false, getVectorAlignment(load.getType()));
    }
  DenseMap<Operation *, SmallVector<Value>> storedValues;
  for (int64_t k = 0; k < kVectorWidth; ++k) {
    IRMapping mapping;
    mapping.map(body->getArguments(), newBody->getArguments());
    Value offset = arith::ConstantIndexOp::create(rewriter, loc, k);
    mapping.map(body->getArgument(ivIndex),
                arith::AddIOp::create(rewriter, loc, base, offset));
    for (Operation &op : body->without_terminator()) {
      if (computedOnce.contains(&op)) {
        for (Value result : op.getResults())
          mapping.map(result, prelude.lookup(result));
        continue;
      }
      if (vectorized.contains(&op)) {
        if (auto load = dyn_cast<memref::LoadOp>(op))
          mapping.map(load.getResult(), vector::ExtractOp::create(
                                            rewriter, loc, vectors[&op], k));
        else
          storedValues[&op].push_back(mapping.lookupOrDefault(
              cast<memref::StoreOp>(op).getValueToStore()));
        continue;
      }
      if (isShared(op)) {
        Value &shared = sharedLoads[&op];
        if (!shared)
          shared = rewriter.clone(op, mapping)->getResult(0);
        mapping.map(op.getResult(0), shared);
        continue;
      }
      rewriter.clone(op, mapping);
    }
  }
  for (Operation *op : accesses)
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      auto type =
          VectorType::get({kVectorWidth}, store.getValueToStore().getType());
      Value vector =
          vector::FromElementsOp::create(rewriter, loc, type, storedValues[op]);
      // The same indices at the new body's arguments (the last one is iv,
      // now the first of the 4 elements) and computed once.
      SmallVector<Value> indices;
      for (Value index : store.getIndices())
        indices.push_back(prelude.lookupOrDefault(index));
      vector::StoreOp::create(
          rewriter, loc, vector, store.getMemRef(), indices,
          /*nontemporal=*/false,
          getVectorAlignment(store.getValueToStore().getType()));
    }
  IRMapping terminatorArgs;
  rewriter.clone(*body->getTerminator(), terminatorArgs);
  rewriter.eraseBlock(body);
}

bool mlir::ridge::canJamElements(Block *body, Value iv,
                                 ArrayRef<Operation *> accesses) {
  Operation *loop = body->getParentOp();
  if (loop->getNumResults() != 0)
    return false;
  DenseMap<Value, bool> known;
  llvm::SmallPtrSet<Operation *, 8> vectorized(accesses.begin(),
                                               accesses.end());
  WalkResult walk = body->walk([&](Operation *op) {
    if (op->getNumRegions() != 0) {
      auto nested = dyn_cast<scf::ForOp>(op);
      if (!nested || nested.getNumResults() != 0 ||
          llvm::any_of(
              ValueRange{nested.getLowerBound(), nested.getUpperBound(),
                         nested.getStep()},
              [&](Value bound) { return dependsOn(bound, iv, loop, known); }))
        return WalkResult::interrupt();
      return WalkResult::advance();
    }
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      auto alloca = store.getMemRef().getDefiningOp<memref::AllocaOp>();
      if (vectorized.contains(op) || (alloca && loop->isAncestor(alloca)))
        return WalkResult::advance();
      return WalkResult::interrupt();
    }
    // Any other write (a copy, an atomic) may be shared by the elements.
    if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
      if (effects.hasEffect<MemoryEffects::Write>() &&
          !isa<memref::AllocaOp>(op))
        return WalkResult::interrupt();
    } else if (!op->hasTrait<OpTrait::IsTerminator>() &&
               !isMemoryEffectFree(op)) {
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return !walk.wasInterrupted();
}

/// Clones the ops of `block` (but its terminator) at the rewriter's point
/// for the 4 elements (`elements[k]` maps the source values of element k):
/// op by op, a nested scf.for once with its body cloned the same way, the
/// loads and stores of `vectorized` as one vector access each.
static void cloneJammed(RewriterBase &rewriter, Block *block, Value iv,
                        MutableArrayRef<IRMapping> elements,
                        const llvm::SmallPtrSetImpl<Operation *> &vectorized,
                        llvm::function_ref<bool(Operation &)> isShared) {
  Location loc = block->getParentOp()->getLoc();
  // The indices of element 0 are the vector access's (its last is iv).
  auto firstIndices = [&](ValueRange indices) {
    SmallVector<Value> mapped;
    for (Value index : indices)
      mapped.push_back(elements[0].lookupOrDefault(index));
    return mapped;
  };
  for (Operation &op : block->without_terminator()) {
    if (auto nested = dyn_cast<scf::ForOp>(op)) {
      auto jammed = scf::ForOp::create(
          rewriter, nested.getLoc(),
          elements[0].lookupOrDefault(nested.getLowerBound()),
          elements[0].lookupOrDefault(nested.getUpperBound()),
          elements[0].lookupOrDefault(nested.getStep()));
      for (IRMapping &element : elements)
        element.map(nested.getInductionVar(), jammed.getInductionVar());
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(jammed.getBody()->getTerminator());
      cloneJammed(rewriter, nested.getBody(), iv, elements, vectorized,
                  isShared);
      continue;
    }
    if (vectorized.contains(&op)) {
      if (auto load = dyn_cast<memref::LoadOp>(op)) {
        auto type = VectorType::get({kVectorWidth}, load.getType());
        Value vector = vector::LoadOp::create(
            rewriter, loc, type, load.getMemRef(),
            firstIndices(load.getIndices()),
            /*nontemporal=*/false, getVectorAlignment(load.getType()));
        for (auto [k, element] : llvm::enumerate(elements))
          element.map(load.getResult(),
                      vector::ExtractOp::create(rewriter, loc, vector, k));
        continue;
      }
      auto store = cast<memref::StoreOp>(op);
      SmallVector<Value> values;
      for (IRMapping &element : elements)
        values.push_back(element.lookupOrDefault(store.getValueToStore()));
      auto type =
          VectorType::get({kVectorWidth}, store.getValueToStore().getType());
      vector::StoreOp::create(
          rewriter, loc,
          vector::FromElementsOp::create(rewriter, loc, type, values),
          store.getMemRef(), firstIndices(store.getIndices()),
          /*nontemporal=*/false,
          getVectorAlignment(store.getValueToStore().getType()));
      continue;
    }
    if (isShared(op)) {
      Operation *shared = rewriter.clone(op, elements[0]);
      for (IRMapping &element : elements.drop_front())
        element.map(op.getResults(), shared->getResults());
      continue;
    }
    for (IRMapping &element : elements)
      rewriter.clone(op, element);
  }
}

void mlir::ridge::unrollAndJamWithVectorAccesses(
    RewriterBase &rewriter, Block *body, unsigned ivIndex,
    ArrayRef<Operation *> accesses) {
  Region *region = body->getParent();
  Operation *loop = body->getParentOp();
  Location loc = loop->getLoc();
  Value iv = body->getArgument(ivIndex);
  llvm::SmallPtrSet<Operation *, 8> vectorized(accesses.begin(),
                                               accesses.end());
  // Loads the 4 elements share (no index depends on iv, the body never
  // writes the buffer: a matmul's row of A, a pooling's window constant)
  // are issued once.
  llvm::SmallPtrSet<Value, 8> written;
  body->walk([&](memref::StoreOp store) { written.insert(store.getMemRef()); });
  DenseMap<Value, bool> known;
  auto isShared = [&](Operation &op) {
    auto load = dyn_cast<memref::LoadOp>(op);
    return load && !written.contains(load.getMemRef()) &&
           llvm::none_of(load.getIndices(), [&](Value index) {
             return dependsOn(index, iv, loop, known);
           });
  };
  SmallVector<Location> argLocs(body->getNumArguments(), loc);
  Block *newBody =
      rewriter.createBlock(region, {}, body->getArgumentTypes(), argLocs);
  Value base = newBody->getArgument(ivIndex);
  rewriter.setInsertionPointToStart(newBody);
  SmallVector<IRMapping> elements(kVectorWidth);
  for (auto [k, element] : llvm::enumerate(elements)) {
    element.map(body->getArguments(), newBody->getArguments());
    if (k != 0)
      element.map(iv, arith::AddIOp::create(
                          rewriter, loc, base,
                          arith::ConstantIndexOp::create(rewriter, loc, k)));
  }
  cloneJammed(rewriter, body, iv, elements, vectorized, isShared);
  IRMapping terminatorArgs;
  rewriter.clone(*body->getTerminator(), terminatorArgs);
  rewriter.eraseBlock(body);
}
