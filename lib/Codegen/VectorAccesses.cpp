//===- VectorAccesses.cpp - 16-byte accesses of 4 consecutive elements ----===//

#include "VectorAccesses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::ridge;

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

void mlir::ridge::findVectorAccesses(Block *body, Value iv,
                                     SmallVectorImpl<Operation *> &accesses) {
  Operation *loop = body->getParentOp();
  // An index that is not `iv` and is an argument of the body (another
  // dimension of a parallel loop) or defined above the loop.
  auto isIndependent = [&](Value index) {
    if (index == iv)
      return false;
    if (auto arg = dyn_cast<BlockArgument>(index);
        arg && arg.getOwner() == body)
      return true;
    return !loop->isAncestor(index.getParentBlock()->getParentOp());
  };
  llvm::SmallPtrSet<Value, 8> stored, loaded;
  SmallVector<Operation *> candidates;
  body->walk([&](Operation *op) {
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
    if (indices.empty() || indices.back() != iv || !isVectorAligned(memref) ||
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
  DenseMap<Operation *, Value> vectors;
  for (Operation *op : accesses)
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      IRMapping args;
      args.map(body->getArguments(), newBody->getArguments());
      SmallVector<Value> indices;
      for (Value index : load.getIndices())
        indices.push_back(args.lookupOrDefault(index));
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
      // now the first of the 4 elements).
      IRMapping args;
      args.map(body->getArguments(), newBody->getArguments());
      SmallVector<Value> indices;
      for (Value index : store.getIndices())
        indices.push_back(args.lookupOrDefault(index));
      vector::StoreOp::create(
          rewriter, loc, vector, store.getMemRef(), indices,
          /*nontemporal=*/false,
          getVectorAlignment(store.getValueToStore().getType()));
    }
  IRMapping terminatorArgs;
  rewriter.clone(*body->getTerminator(), terminatorArgs);
  rewriter.eraseBlock(body);
}
