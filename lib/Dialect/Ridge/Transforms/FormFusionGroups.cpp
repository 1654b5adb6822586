//===- FormFusionGroups.cpp - Wrap each fusion group in a region ----------===//
//
// Mechanism only: the plan (FusionPlan.h) says which ops share a kernel; this
// pass moves them into `ridge.fusion_group` ops and restores a topological
// order of the block.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Analysis/FusionPlan.h"
#include "ridgeline/Analysis/Target.h"
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-form-fusion-groups"

namespace mlir::ridge {
#define GEN_PASS_DEF_FORMFUSIONGROUPSPASS
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

/// Moves the ops of `group` into a new fusion group placed after its sink
/// and redirects their uses outside the group to the group's results.
static void wrapGroup(const FusionGroup &group) {
  Operation *sink = group.getSink();
  OpBuilder builder(sink->getContext());
  builder.setInsertionPointAfter(sink);
  SmallVector<Location> locations;
  for (Operation *op : group.ops)
    locations.push_back(op->getLoc());
  Location loc = builder.getFusedLoc(locations);
  auto fusionGroup =
      FusionGroupOp::create(builder, loc, ValueRange(group.outputs).getTypes(),
                            group.name, stringifyFusionGroupKind(group.kind));
  Block *body = builder.createBlock(&fusionGroup.getBody());
  for (Operation *op : group.ops)
    op->moveBefore(body, body->end());
  builder.setInsertionPointToEnd(body);
  YieldOp::create(builder, loc, group.outputs);
  for (auto [output, result] :
       llvm::zip(group.outputs, fusionGroup.getResults())) {
    Value value = output;
    value.replaceUsesWithIf(result, [&](OpOperand &use) {
      return !fusionGroup->isProperAncestor(use.getOwner());
    });
  }
}

/// Records on each unfused edge's consumer which operand stayed a kernel
/// boundary and why: `ridge.unfused = [{operand = i, reason = "..."}]`.
static void recordUnfusedEdges(const FusionPlan &plan) {
  llvm::MapVector<Operation *, SmallVector<Attribute>> byConsumer;
  for (const UnfusedEdge &edge : plan.unfused) {
    Builder b(edge.consumer->getContext());
    for (OpOperand &operand : edge.consumer->getOpOperands())
      if (operand.get().getDefiningOp() == edge.producer)
        byConsumer[edge.consumer].push_back(b.getDictionaryAttr({
            b.getNamedAttr("operand",
                           b.getI64IntegerAttr(operand.getOperandNumber())),
            b.getNamedAttr("reason", b.getStringAttr(edge.reason)),
        }));
  }
  for (auto &[consumer, edges] : byConsumer)
    consumer->setAttr(kUnfusedAttr,
                      ArrayAttr::get(consumer->getContext(), edges));
}

namespace {
struct FormFusionGroupsPass
    : public ridge::impl::FormFusionGroupsPassBase<FormFusionGroupsPass> {
  using Base::Base;

  /// The control function `policy` names, for the target's roofline.
  FailureOr<FusionControlFn> getControl(func::FuncOp func) {
    if (policy == "never")
      return makeNeverFusionControl();
    if (policy == "all-legal")
      return makeAllLegalFusionControl();
    if (policy != "roofline") {
      func.emitError() << "unknown fusion policy '" << policy
                       << "'; expected roofline, all-legal or never";
      return failure();
    }
    FailureOr<RooflineModel> model =
        getRooflineForPass(func, gpu, gpuSpec, precision);
    if (failed(model))
      return failure();
    FusionLimits limits;
    limits.maxKernelOperands = maxKernelOperands;
    limits.maxKernelOps = maxKernelOps;
    return makeRooflineFusionControl(*model, limits);
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // A function already grouped (ridge-run --verify fixes the groups
    // before compiling) keeps its plan.
    if (func.isExternal() || func->hasAttr(kKernelAttr) ||
        !func.getOps<FusionGroupOp>().empty())
      return;
    FailureOr<FusionControlFn> control = getControl(func);
    if (failed(control))
      return signalPassFailure();
    Block &block = func.front();
    FusionPlan plan = planFusion(block, *control);
    numKernels += plan.getNumKernels();
    numUnfusedEdges += plan.unfused.size();
    LLVM_DEBUG({
      llvm::dbgs() << "--- after planning " << func.getName() << " (" << policy
                   << "): " << plan.getNumKernels() << " kernels ---\n";
      for (const FusionGroup &group : plan.groups)
        if (group.isKernel())
          llvm::dbgs() << "  " << group.name << ": " << group.ops.size()
                       << " ops, " << group.bytes << " B, " << group.flops
                       << " FLOPs\n";
      for (const UnfusedEdge &edge : plan.unfused)
        llvm::dbgs() << "  unfused " << describeFusionOp(edge.producer)
                     << " -> " << describeFusionOp(edge.consumer) << ": "
                     << edge.reason << "\n";
    });
    if (remarks)
      for (const UnfusedEdge &edge : plan.unfused)
        emitRemark(edge.consumer->getLoc())
            << "not fused with its producer " << describeFusionOp(edge.producer)
            << ": " << edge.reason;
    if (recordUnfused)
      recordUnfusedEdges(plan);
    for (const FusionGroup &group : plan.groups)
      if (group.isKernel())
        wrapGroup(group);
    if (!sortTopologically(&block)) {
      func.emitError("fusion groups left the graph without a topological "
                     "order");
      return signalPassFailure();
    }
  }
};
} // namespace
