//===- Verify.cpp - Compare a fused plan with an unfused reference --------===//

#include "ridgeline/Driver/Verify.h"

#include "ridgeline/Analysis/FusionPlan.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"
#include "ridgeline/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::ridge;

FailureOr<std::vector<KernelProbe>>
mlir::ridge::exposeKernelOutputs(ModuleOp module, const TargetSpec &target) {
  setModuleTarget(module, target);
  PassManager pm(module.getContext());
  buildGraphOptimizationPipeline(pm);
  buildFusionGroupPipeline(pm, /*fusion=*/true);
  if (failed(pm.run(module)))
    return failure();

  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.isExternal())
    return module.emitError("the module has no @main to verify");
  auto ret = cast<func::ReturnOp>(main.front().getTerminator());
  SmallVector<Value> results(ret.getOperands());
  SmallVector<Type> types(main.getResultTypes());
  SmallVector<DictionaryAttr> resultAttrs;
  for (unsigned i = 0; i < main.getNumResults(); ++i)
    resultAttrs.push_back(main.getResultAttrDict(i));

  Builder builder(module.getContext());
  std::vector<KernelProbe> probes;
  for (FusionGroupOp group : main.getOps<FusionGroupOp>()) {
    KernelProbe probe;
    probe.name = group.getName().str();
    SmallVector<Operation *> ops;
    for (Operation &op : group.getBody().front().without_terminator())
      ops.push_back(&op);
    FusionGroup summary;
    summary.ops = ops;
    for (const std::string &node : FusionPlan::getNodeNames(summary))
      probe.nodes.push_back(node);
    for (auto [i, result] : llvm::enumerate(group.getResults())) {
      // A result the model already returns is compared there; returning a
      // value twice would alias two output buffers.
      auto *existing = llvm::find(results, Value(result));
      if (existing != results.end()) {
        probe.outputs.push_back(existing - results.begin());
        continue;
      }
      probe.outputs.push_back(results.size());
      results.push_back(result);
      types.push_back(result.getType());
      resultAttrs.push_back(builder.getDictionaryAttr(builder.getNamedAttr(
          kOnnxNameAttr,
          builder.getStringAttr(probe.name + "." + std::to_string(i)))));
    }
    probes.push_back(std::move(probe));
  }
  ret->setOperands(results);
  main.setType(builder.getFunctionType(main.getArgumentTypes(), types));
  main.setAllResultAttrs(resultAttrs);
  return probes;
}

void mlir::ridge::dissolveFusionGroups(ModuleOp module) {
  SmallVector<FusionGroupOp> groups;
  module.walk([&](FusionGroupOp group) { groups.push_back(group); });
  for (FusionGroupOp group : groups) {
    Block &body = group.getBody().front();
    Operation *yield = body.getTerminator();
    group.replaceAllUsesWith(yield->getOperands());
    yield->erase();
    group->getBlock()->getOperations().splice(Block::iterator(group),
                                              body.getOperations());
    group.erase();
  }
}
