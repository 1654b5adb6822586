//===- Roofline.cpp - Arithmetic intensity and roofline placement ---------===//

#include "ridgeline/Analysis/Roofline.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-roofline"

using namespace mlir;
using namespace mlir::ridge;

CostAnalysis::CostAnalysis(Operation *root) {
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    auto costed = dyn_cast<CostOpInterface>(op);
    // A constant's bytes are read by its consumers; counting them again here
    // would charge every weight twice.
    if (!costed || isa<ConstantOp>(op))
      return WalkResult::advance();
    OpCost cost;
    cost.op = costed;
    cost.flops = costed.getFlops();
    cost.bytes = costed.getMinBytes();
    cost.contraction = costed.isContraction();
    LLVM_DEBUG(llvm::dbgs()
               << "cost of " << costed->getName() << " at " << costed->getLoc()
               << ": " << cost.flops << " FLOPs, " << cost.bytes << " bytes\n");
    indexOf[costed] = costs.size();
    costs.push_back(cost);
    // A fusion group is one kernel: its ops are not kernels of their own.
    return isa<FusionGroupOp>(op) ? WalkResult::skip() : WalkResult::advance();
  });
}

const OpCost *CostAnalysis::lookup(Operation *op) const {
  auto it = indexOf.find(op);
  return it == indexOf.end() ? nullptr : &costs[it->second];
}

StringRef mlir::ridge::stringifyBound(Bound bound) {
  return bound == Bound::Compute ? "compute" : "memory";
}

std::optional<RooflineModel> RooflineModel::create(const GpuSpec &gpu,
                                                   Precision precision,
                                                   std::string &error) {
  if (gpu.bandwidth <= 0 || gpu.fp32Flops <= 0) {
    error = "GPU spec '" + gpu.name +
            "' needs a memory bandwidth and an fp32 "
            "peak";
    return std::nullopt;
  }
  if (gpu.getMatrixFlops(precision) <= 0) {
    error = "GPU '" + gpu.name + "' has no " +
            stringifyPrecision(precision).str() +
            " tensor cores; choose another --precision";
    return std::nullopt;
  }
  return RooflineModel(gpu, precision);
}

RooflinePoint RooflineModel::place(int64_t flops, int64_t bytes,
                                   bool contraction) const {
  RooflinePoint point;
  point.flops = flops;
  point.bytes = bytes;
  point.usesMatrixPeak = contraction;
  point.peakFlops = contraction ? getMatrixPeak() : getVectorPeak();
  point.computeTime = static_cast<double>(flops) / point.peakFlops;
  point.memoryTime = static_cast<double>(bytes) / gpu.bandwidth;
  return point;
}
