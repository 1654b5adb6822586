//===- RooflineReport.h - Per-op roofline report of a model -----*- C++ -*-===//
//
// What `ridgec --report` prints: one row per costed op of the graph (the
// ONNX node it came from, its shapes, FLOPs, bytes, intensity, the format it
// computes in, its compute ceiling, the binding ceiling, predicted time and
// share of the total), sorted by predicted time, and totals. The same data
// is written as JSON (schema in docs/roofline.md) for tools such as
// python/ridgeline/roofline_plot.py.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_ANALYSIS_ROOFLINEREPORT_H
#define RIDGELINE_ANALYSIS_ROOFLINEREPORT_H

#include "ridgeline/Analysis/FusionPlan.h"
#include "ridgeline/Analysis/Roofline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::ridge {

/// The version tag written into every JSON report.
inline constexpr llvm::StringLiteral kRooflineSchema = "ridgeline-roofline/1";

struct RooflineReportRow {
  /// ONNX node name and op type (from the op's location); the ridge op name
  /// stands in for both when the op came from no ONNX node.
  std::string name;
  std::string opType;
  std::string ridgeOp;
  /// "1x128x256, 256x768 -> 1x128x768".
  std::string shapes;
  RooflinePoint point;
};

/// One kernel of the fusion plan.
struct RooflineKernelRow {
  std::string name;
  std::string kind;
  /// ONNX nodes the kernel computes, in program order.
  SmallVector<std::string> nodes;
  unsigned numOps = 0;
  RooflinePoint point;
};

/// A producer -> consumer edge between two kernels and why it stayed.
struct RooflineUnfusedRow {
  std::string producer;
  std::string consumer;
  std::string reason;
};

struct RooflineReport {
  std::string modelName;
  std::vector<RooflineReportRow> rows;
  /// Ops whose cost is unknown because a shape is dynamic.
  std::vector<std::string> unknownOps;
  int64_t totalFlops = 0;
  int64_t totalBytes = 0;
  double totalTime = 0;
  double memoryBoundTime = 0;

  /// The kernels, when they were added (addFusionGroups).
  bool hasKernels = false;
  std::vector<RooflineKernelRow> kernels;
  std::vector<RooflineUnfusedRow> unfused;
  FusionTraffic traffic;
  double kernelTime = 0;

  /// GPU targets: the device memory a session of the compiled model holds
  /// (ridge-plan-device-memory's plan), when it was added.
  struct DeviceMemory {
    int64_t weightsBytes = 0;
    int64_t numWeights = 0;
    int64_t arenaBytes = 0;
    int64_t peakLiveBytes = 0;
    /// The arena's first bytes, zeroed once a session (split-K counters).
    int64_t zeroedBytes = 0;
  };
  std::optional<DeviceMemory> deviceMemory;
};

/// Builds the report of every op `costs` covers, rows sorted by predicted
/// time (longest first, ties in program order).
RooflineReport buildRooflineReport(const CostAnalysis &costs,
                                   const RooflineModel &model,
                                   StringRef modelName);

/// Adds the kernels of `func`, its `ridge.fusion_group` ops (sorted by
/// predicted time), the unfused edges their ops record
/// (ridge-form-fusion-groups{record-unfused}) and the traffic to `report`.
void addFusionGroups(RooflineReport &report, func::FuncOp func,
                     const RooflineModel &model);

/// `value` with an SI prefix and three significant digits: "67.1 MB" for
/// (67.1e6, "B").
std::string formatSI(double value, StringRef unit);

/// The human-readable table with a header naming the GPU and a totals line.
void printRooflineTable(const RooflineReport &report,
                        const RooflineModel &model, llvm::raw_ostream &os);

/// The JSON document (schema `kRooflineSchema`).
void printRooflineJson(const RooflineReport &report, const RooflineModel &model,
                       llvm::raw_ostream &os);

} // namespace mlir::ridge

#endif // RIDGELINE_ANALYSIS_ROOFLINEREPORT_H
