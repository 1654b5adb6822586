//===- OutlineFusionGroups.cpp - One kernel function per fusion group -----===//

#include "ridgeline/Dialect/Ridge/IR/Ridge.h"
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::ridge {
#define GEN_PASS_DEF_OUTLINEFUSIONGROUPSPASS
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

/// Whether the kernel of `group` takes `constant` as an argument rather than
/// a copy of its own: an attention kernel reads its operands through
/// strided views of its arguments (ridge.online_attention), so its tensor
/// constants (a rotary prologue's caches) are passed in; scalars stay.
static bool isPassedIn(FusionGroupOp group, ConstantOp constant) {
  auto type = dyn_cast<RankedTensorType>(constant.getType());
  return group.getKind() == "attention" && type && type.hasStaticShape() &&
         type.getNumElements() > 1;
}

/// Replaces `group` with a call of a new kernel function inserted into
/// `symbols` after `parent`.
static void outlineGroup(FusionGroupOp group, func::FuncOp parent,
                         SymbolTable &symbols) {
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(group.getBody(), captured);
  SmallVector<Value> arguments;
  SmallVector<Operation *> constants;
  for (Value value : captured) {
    auto constant = value.getDefiningOp<ConstantOp>();
    if (constant && !isPassedIn(group, constant))
      constants.push_back(constant);
    else
      arguments.push_back(value);
  }

  OpBuilder builder(parent);
  builder.setInsertionPointAfter(parent);
  auto type = builder.getFunctionType(ValueRange(arguments).getTypes(),
                                      group.getResultTypes());
  auto kernel =
      func::FuncOp::create(builder, group.getLoc(), group.getName(), type);
  kernel.setPrivate();
  kernel->setAttr(kKernelAttr, group.getKindAttr());
  symbols.insert(kernel, builder.getInsertionPoint());

  Block *entry = kernel.addEntryBlock();
  IRMapping mapping;
  mapping.map(arguments, entry->getArguments());
  builder.setInsertionPointToEnd(entry);
  for (Operation *constant : constants)
    builder.clone(*constant, mapping);
  for (Operation &op : group.getBody().front().without_terminator())
    builder.clone(op, mapping);
  auto yield = cast<YieldOp>(group.getBody().front().getTerminator());
  SmallVector<Value> results;
  for (Value value : yield.getValues())
    results.push_back(mapping.lookup(value));
  func::ReturnOp::create(builder, yield.getLoc(), results);

  builder.setInsertionPoint(group);
  auto call = func::CallOp::create(builder, group.getLoc(), kernel, arguments);
  group.replaceAllUsesWith(call.getResults());
  group.erase();
}

namespace {
struct OutlineFusionGroupsPass
    : public ridge::impl::OutlineFusionGroupsPassBase<OutlineFusionGroupsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<std::pair<FusionGroupOp, func::FuncOp>> groups;
    module.walk([&](FusionGroupOp group) {
      groups.emplace_back(group, group->getParentOfType<func::FuncOp>());
    });
    for (auto [group, parent] : groups)
      outlineGroup(group, parent, symbols);
  }
};
} // namespace
