//===- FormFusionGroups.cpp - Wrap each fusion group in a region ----------===//
//
// Mechanism only: the plan (FusionPlan.h) says which ops share a kernel; this
// pass moves them into `ridge.fusion_group` ops and restores a topological
// order of the block.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Analysis/FusionPlan.h"
#include "ridgeline/Transforms/Passes.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-form-fusion-groups"

namespace mlir::ridge {
#define GEN_PASS_DEF_FORMFUSIONGROUPSPASS
#include "ridgeline/Transforms/Passes.h.inc"
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
                            group.name, stringifyFusionKind(group.kind));
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

namespace {
struct FormFusionGroupsPass
    : public ridge::impl::FormFusionGroupsPassBase<FormFusionGroupsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // A function already grouped (ridge-run --verify fixes the groups
    // before compiling) keeps its plan.
    if (func.isExternal() || func->hasAttr(kKernelAttr) ||
        !func.getOps<FusionGroupOp>().empty())
      return;
    std::string error;
    std::optional<RooflineModel> model =
        resolveRooflineModel(gpu, gpuSpec, precision, error);
    if (!model) {
      func.emitError() << error;
      return signalPassFailure();
    }
    Block &block = func.front();
    FusionPlan plan = planFusion(block, makeRooflineFusionControl(*model));
    LLVM_DEBUG(llvm::dbgs() << func.getName() << ": " << plan.getNumKernels()
                            << " kernels\n");
    if (remarks)
      for (const UnfusedEdge &edge : plan.unfused)
        emitRemark(edge.consumer->getLoc())
            << "not fused with its producer " << describeFusionOp(edge.producer)
            << ": " << edge.reason;
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
