//===- Roofline.h - Arithmetic intensity and roofline placement -*- C++ -*-===//
//
// Two layers, kept apart so that fusion can reuse the second for kernels:
//
//  * CostAnalysis (an mlir analysis) records, for every op of the ridge graph
//    that implements CostOpInterface, its FLOPs, its minimum device-memory
//    bytes and whether its work is a contraction. These are properties of the
//    graph alone.
//  * RooflineModel places any (FLOPs, bytes, compute format) triple on the
//    roofline of one GPU: its time is max(FLOPs / peak, bytes / bandwidth),
//    and the larger term names the ceiling that binds. The peak is the one
//    of the unit the work runs on: the tensor-core peak of its format for a
//    MatMul or Gemm multiplied in bf16/fp16 (rounded by
//    ridge-select-precision, or stored so), the fp32 SIMT peak for
//    everything else (docs/roofline.md, "Precision and ceiling").
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_ANALYSIS_ROOFLINE_H
#define RIDGELINE_ANALYSIS_ROOFLINE_H

#include "ridgeline/Analysis/GpuSpec.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::ridge {

/// The number format a piece of work computes in, and the tensor cores it
/// asks for: what selects its compute ceiling.
struct ComputeFormat {
  /// "bf16", "fp16", "fp32", "tf32", "fp8" (stringifyPrecision), or the
  /// element type's name for other types ("fp64", "i64").
  std::string name = "fp32";
  /// The tensor-core format the work is placed on; nullopt for work on the
  /// CUDA cores (SIMT), placed on the fp32 peak.
  std::optional<Precision> tensorCores;
};

/// The format `op` computes in. A contraction computes in its
/// `ridge.precision` when it has one, else in its first operand's element
/// type; it asks for tensor cores when it is a MatMul or Gemm (the ops the
/// tensor-core code generator implements; a Conv, attention or Einsum runs
/// on SIMT whatever its format) in a format other than fp32. Other ops
/// compute in the widest float type they read or write (bf16 or fp16 in a
/// 16-bit model), else in their first element type. A fusion group computes
/// in the format of its contraction with the most FLOPs, or, without one,
/// in the widest float type of its ops.
ComputeFormat getComputeFormat(Operation *op);

/// The GPU-independent cost of one op.
struct OpCost {
  Operation *op = nullptr;
  /// FLOPs and minimum bytes; -1 when the op's shapes are not static.
  int64_t flops = 0;
  int64_t bytes = 0;
  /// The FLOPs are matrix multiply-adds (CostOpInterface::isContraction).
  bool contraction = false;
  /// The format they are computed in (getComputeFormat).
  ComputeFormat format;

  bool isKnown() const { return flops >= 0 && bytes >= 0; }
};

/// The bytes a rounded contraction moves beyond what its operands' stored
/// types say (docs/precision.md). bf16/fp16: a weight is read as the
/// narrow copy the compiled model stores (getCompileTimeWeightType), 2
/// bytes an element. fp8: a weight (a ridge.constant) is read as its
/// compile-time e4m3 copy, 1 byte an element, and an activation is read
/// once more, by its scale reduction, before the contraction reads it,
/// unless a tensor-core contraction or attention kernel or a row kernel
/// computes it (that kernel computes the amax as it stores the
/// activation). A fusion group adds its members'; 0 for any other op.
int64_t getPrecisionTrafficAdjustment(Operation *op);

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
  /// The format the work computes in (ComputeFormat::name).
  std::string precision = "fp32";
  /// The compute ceiling that applies (tensor-core or SIMT peak), FLOP/s.
  double peakFlops = 0;
  bool usesTensorCores = false;
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

  /// The compute ceiling of work in `format`: the tensor-core peak of its
  /// format, or the fp32 SIMT peak for SIMT work and for a format the GPU has
  /// no tensor cores for.
  double getPeak(const ComputeFormat &format) const;

  /// Places work computed in `format`.
  RooflinePoint place(int64_t flops, int64_t bytes,
                      const ComputeFormat &format) const;
  RooflinePoint place(const OpCost &cost) const {
    return place(cost.flops, cost.bytes, cost.format);
  }
  /// Places work as the fusion plan assumes it runs, before each
  /// contraction's format is known: contractions on the tensor cores of the
  /// model's precision, everything else on the fp32 SIMT peak.
  RooflinePoint placeAsPlanned(int64_t flops, int64_t bytes,
                               bool contraction) const;

private:
  RooflineModel(const GpuSpec &gpu, Precision precision)
      : gpu(gpu), precision(precision) {}

  GpuSpec gpu;
  Precision precision;
};

} // namespace mlir::ridge

#endif // RIDGELINE_ANALYSIS_ROOFLINE_H
