//===- Roofline.h - Arithmetic intensity and roofline placement -*- C++ -*-===//
//
// Two layers, kept apart so that fusion can reuse the second for kernels:
//
//  * CostAnalysis (an mlir analysis) records, for every op of the ridge graph
//    that implements CostOpInterface, its FLOPs, its minimum device-memory
//    bytes and whether its work is a contraction. These are properties of the
//    graph alone.
//  * RooflineModel places any (FLOPs, bytes, contraction) triple on the
//    roofline of one GPU at one precision: its time is
//    max(FLOPs / peak, bytes / bandwidth), and the larger term names the
//    ceiling that binds. Contractions use the tensor-core peak of the chosen
//    precision; everything else uses the fp32 SIMT peak.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_ANALYSIS_ROOFLINE_H
#define RIDGELINE_ANALYSIS_ROOFLINE_H

#include "ridgeline/Analysis/GpuSpec.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::ridge {

/// The GPU-independent cost of one op.
struct OpCost {
  Operation *op = nullptr;
  /// FLOPs and minimum bytes; -1 when the op's shapes are not static.
  int64_t flops = 0;
  int64_t bytes = 0;
  /// The FLOPs are matrix multiply-adds (CostOpInterface::isContraction).
  bool contraction = false;

  bool isKnown() const { return flops >= 0 && bytes >= 0; }
};

/// The cost of every costed op nested under the root, in program order.
/// Constants are left out: their bytes are charged to the ops that read them.
class CostAnalysis {
public:
  explicit CostAnalysis(Operation *root);

  ArrayRef<OpCost> getCosts() const { return costs; }
  /// The cost of `op`, or null when it has none.
  const OpCost *lookup(Operation *op) const;

private:
  SmallVector<OpCost> costs;
  DenseMap<Operation *, unsigned> indexOf;
};

enum class Bound { Memory, Compute };

StringRef stringifyBound(Bound bound);

/// Where one piece of work sits on a roofline.
struct RooflinePoint {
  int64_t flops = 0;
  int64_t bytes = 0;
  /// The compute ceiling that applies (tensor-core or SIMT peak), FLOP/s.
  double peakFlops = 0;
  bool usesMatrixPeak = false;
  /// FLOPs / peakFlops and bytes / bandwidth, in seconds.
  double computeTime = 0;
  double memoryTime = 0;

  /// FLOPs per byte; 0 for work that moves no bytes.
  double getIntensity() const {
    return bytes > 0 ? static_cast<double>(flops) / bytes : 0.0;
  }
  /// The predicted time: the roof the point is under.
  double getTime() const { return std::max(computeTime, memoryTime); }
  /// Compute-bound at or beyond the ridge point, memory-bound below it.
  Bound getBound() const {
    return flops > 0 && computeTime >= memoryTime ? Bound::Compute
                                                  : Bound::Memory;
  }
};

/// One GPU at one precision.
class RooflineModel {
public:
  /// Fails (describing why in `error`) when the GPU has no tensor cores for
  /// `precision`.
  static std::optional<RooflineModel>
  create(const GpuSpec &gpu, Precision precision, std::string &error);

  const GpuSpec &getGpu() const { return gpu; }
  Precision getPrecision() const { return precision; }
  /// Peak of contractions (tensor cores at the precision) and of other work
  /// (fp32 SIMT), FLOP/s.
  double getMatrixPeak() const { return gpu.getMatrixFlops(precision); }
  double getVectorPeak() const { return gpu.fp32Flops; }
  /// Intensity (FLOP/byte) at which contractions, or other work, turn
  /// compute-bound.
  double getRidgePoint() const { return getMatrixPeak() / gpu.bandwidth; }
  double getVectorRidgePoint() const { return getVectorPeak() / gpu.bandwidth; }

  RooflinePoint place(int64_t flops, int64_t bytes, bool contraction) const;
  RooflinePoint place(const OpCost &cost) const {
    return place(cost.flops, cost.bytes, cost.contraction);
  }

private:
  RooflineModel(const GpuSpec &gpu, Precision precision)
      : gpu(gpu), precision(precision) {}

  GpuSpec gpu;
  Precision precision;
};

} // namespace mlir::ridge

#endif // RIDGELINE_ANALYSIS_ROOFLINE_H
