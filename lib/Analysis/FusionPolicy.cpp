//===- FusionPolicy.cpp - Roofline-driven fusion control function ---------===//
//
// The policy half of fusion: given a merge the code generator can emit as one
// kernel, decide whether it pays, from the roofline of the target GPU.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Analysis/FusionPlan.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::ridge;

static std::string formatBytes(int64_t bytes) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (bytes >= 1 << 20)
    os << llvm::format("%.1f MiB", bytes / double(1 << 20));
  else if (bytes >= 1 << 10)
    os << llvm::format("%.1f KiB", bytes / double(1 << 10));
  else
    os << bytes << " B";
  return text;
}

/// Whether `value` costs the kernel no parameter: a splat constant folds into
/// the kernel body as an immediate (linalg's scalar-or-splat constant folding
/// in FuseKernelBodies), so it takes neither an address register nor a slot
/// in the kernel's parameter list.
static bool isImmediate(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                        : DenseElementsAttr();
  return dense && dense.isSplat();
}

FusionControlFn mlir::ridge::makeAllLegalFusionControl() {
  return [](const FusionCandidate &) { return FusionDecision::accept(); };
}

FusionControlFn mlir::ridge::makeNeverFusionControl() {
  return [](const FusionCandidate &) {
    return FusionDecision::reject("fusion is off");
  };
}

FusionControlFn
mlir::ridge::makeRooflineFusionControl(const RooflineModel &model,
                                       FusionLimits limits) {
  return [model, limits](const FusionCandidate &candidate) -> FusionDecision {
    const FusionGroup &merged = candidate.merged;

    // Resources first: a merge that does not fit is no kernel at all.
    int64_t operands =
        llvm::count_if(merged.inputs,
                       [](Value input) { return !isImmediate(input); }) +
        merged.outputs.size();
    if (operands > limits.maxKernelOperands)
      return FusionDecision::reject(
          "would exceed the register budget: " + std::to_string(operands) +
          " tensors in one kernel (limit " +
          std::to_string(limits.maxKernelOperands) + ")");
    if (static_cast<int64_t>(merged.ops.size()) > limits.maxKernelOps)
      return FusionDecision::reject("would exceed the register budget: " +
                                    std::to_string(merged.ops.size()) +
                                    " ops in one kernel (limit " +
                                    std::to_string(limits.maxKernelOps) + ")");
    // A row-reduction kernel stages its row in shared memory so that the
    // ops around the reduction read it once.
    int64_t sharedMemory = model.getGpu().sharedMemoryPerSm;
    if (candidate.rowBytes > 0 && sharedMemory > 0 &&
        candidate.rowBytes > sharedMemory)
      return FusionDecision::reject("would exceed shared memory: a row of " +
                                    formatBytes(candidate.rowBytes) + " > " +
                                    formatBytes(sharedMemory) + " per SM on " +
                                    model.getGpu().name);

    // A view of the producer's result (a Reshape after it) moves no data:
    // the kernel hands the view out and stores what it views, as it would
    // store the producer's result, so taking it in saves nothing and costs
    // nothing.
    bool takesView = candidate.consumer.kind == FusionRole::View;
    if (candidate.savedBytes < 0 || (candidate.savedBytes == 0 && !takesView))
      return FusionDecision::reject("saves no device-memory traffic");

    // A prologue is recomputed for every tile of the contraction that reads
    // the operand; a compute-bound contraction has no time to spare for it.
    // A prologue that computes nothing (an attention's head split: reshapes
    // and transposes) only changes the indices the kernel reads at.
    RooflinePoint consumer =
        model.placeAsPlanned(candidate.consumer.flops, candidate.consumer.bytes,
                             candidate.consumer.contraction);
    bool onlyReindexes = candidate.consumer.kind == FusionRole::Attention &&
                         candidate.producer.flops == 0;
    // A rotary embedding in the tiled attention's tile loads: its FLOPs, at
    // every staging, are at most 1/64 of the attention's, SIMT work beside
    // the tensor-core products.
    bool negligible =
        candidate.consumer.kind == FusionRole::Attention &&
        64 * (candidate.producer.flops + candidate.recomputedFlops) <=
            candidate.consumer.flops;
    if (candidate.isPrologue && !onlyReindexes && !negligible &&
        consumer.getBound() == Bound::Compute)
      return FusionDecision::reject(
          "consumer is compute-bound: a prologue would be recomputed per "
          "tile");

    // Bytes saved must outweigh the work repeated to save them.
    double savedTime =
        static_cast<double>(candidate.savedBytes) / model.getGpu().bandwidth;
    double recomputeTime =
        static_cast<double>(candidate.recomputedFlops) / model.getVectorPeak();
    if (recomputeTime > savedTime)
      return FusionDecision::reject(
          "recomputing " + std::to_string(candidate.recomputedFlops) +
          " FLOPs costs more than the " + formatBytes(candidate.savedBytes) +
          " of traffic it saves");
    return FusionDecision::accept();
  };
}
