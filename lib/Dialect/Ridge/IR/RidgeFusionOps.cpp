//===- RidgeFusionOps.cpp - Fusion groups and kernel bytes ----------------===//

#include "RidgeOpsCommon.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::ridge;

static int64_t getValueBytes(Value value) {
  return std::max<int64_t>(0, getTensorBytes(value.getType()));
}

/// Bytes `user` reads through `operand`: a slice or a gather reads only the
/// elements it produces.
static int64_t getBytesRead(Operation *user, OpOperand &operand) {
  int64_t full = getValueBytes(operand.get());
  if (isa<SliceOp>(user) || (isa<GatherOp, GatherElementsOp>(user) &&
                             operand.getOperandNumber() == 0))
    return std::min(full, getValueBytes(user->getResult(0)));
  return full;
}

int64_t mlir::ridge::getKernelBytes(ArrayRef<Operation *> ops,
                                    function_ref<bool(OpResult)> isLiveOut,
                                    SmallVectorImpl<Value> *inputs,
                                    SmallVectorImpl<Value> *outputs) {
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
  llvm::MapVector<Value, int64_t> inputBytes;
  llvm::SmallPtrSet<Value, 8> storedValues;
  int64_t bytes = 0;
  auto isView = [](Operation *op) { return isa<ReshapeOp, BitCastOp>(op); };
  // The value under the members' views of `value` (itself when a non-view
  // or a non-member computes it).
  auto throughViews = [&](Value value) {
    Operation *def = value.getDefiningOp();
    while (def && members.contains(def) && isView(def)) {
      value = def->getOperand(0);
      def = value.getDefiningOp();
    }
    return value;
  };
  auto isComputedInside = [&](Value value) {
    Operation *def = value.getDefiningOp();
    return def && members.contains(def);
  };
  for (Operation *op : ops) {
    // A view reads nothing; the data is read by the op that uses the view.
    for (OpOperand &operand : op->getOpOperands()) {
      if (isView(op))
        break;
      if (!isa<RankedTensorType>(operand.get().getType()))
        continue;
      Value value = throughViews(operand.get());
      if (isComputedInside(value))
        continue;
      int64_t &read = inputBytes[value];
      read = std::min(getValueBytes(value), read + getBytesRead(op, operand));
    }
    for (OpResult result : op->getResults()) {
      if (!isLiveOut(result))
        continue;
      if (outputs)
        outputs->push_back(result);
      // A view handed out (a kernel that ends in a Reshape) stores the data
      // it views: the value a member computes under it, counted once when
      // both are handed out. A view of a kernel input stores nothing.
      Value stored = throughViews(result);
      if (isComputedInside(stored) && storedValues.insert(stored).second)
        bytes += getValueBytes(stored);
    }
  }
  for (auto [value, read] : inputBytes) {
    if (inputs)
      inputs->push_back(value);
    bytes += read;
  }
  // Views read no data, but their operands are still inputs of the kernel.
  if (inputs)
    for (Operation *op : ops)
      if (isView(op))
        for (Value operand : op->getOperands()) {
          Operation *def = operand.getDefiningOp();
          if ((!def || !members.contains(def)) &&
              !llvm::is_contained(*inputs, operand))
            inputs->push_back(operand);
        }
  return bytes;
}

//===----------------------------------------------------------------------===//
// FusionGroupOp
//===----------------------------------------------------------------------===//

LogicalResult FusionGroupOp::verify() {
  auto yield = dyn_cast<YieldOp>(getBody().front().getTerminator());
  if (!yield)
    return emitOpError("body must end in ridge.yield");
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yields ") << yield.getValues().getTypes()
                                  << " but returns " << getResultTypes();
  return success();
}

static SmallVector<Operation *> getBodyOps(FusionGroupOp group) {
  SmallVector<Operation *> ops;
  for (Operation &op : group.getBody().front().without_terminator())
    ops.push_back(&op);
  return ops;
}

int64_t FusionGroupOp::getFlops() {
  int64_t flops = 0;
  for (Operation *op : getBodyOps(*this)) {
    auto costed = dyn_cast<CostOpInterface>(op);
    if (!costed)
      continue;
    int64_t opFlops = costed.getFlops();
    if (opFlops < 0)
      return -1;
    flops += opFlops;
  }
  return flops;
}

int64_t FusionGroupOp::getMinBytes() {
  Operation *yield = getBody().front().getTerminator();
  // Inside the region only the yield hands values out, and only those the
  // group's users read are written.
  auto isLiveOut = [&](OpResult result) {
    return llvm::any_of(result.getUses(), [&](OpOperand &use) {
      return use.getOwner() == yield &&
             !getResult(use.getOperandNumber()).use_empty();
    });
  };
  for (Operation *op : getBodyOps(*this))
    for (Type type :
         llvm::concat<const Type>(op->getOperandTypes(), op->getResultTypes()))
      if (isa<RankedTensorType>(type) && getTensorBytes(type) < 0)
        return -1;
  return getKernelBytes(getBodyOps(*this), isLiveOut);
}

bool FusionGroupOp::isContraction() {
  return llvm::any_of(getBodyOps(*this), [](Operation *op) {
    auto costed = dyn_cast<CostOpInterface>(op);
    return costed && costed.isContraction();
  });
}
