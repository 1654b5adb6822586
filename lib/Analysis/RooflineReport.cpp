//===- RooflineReport.cpp - Per-op roofline report of a model -------------===//

#include "ridgeline/Analysis/RooflineReport.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::ridge;

/// "1x128x256xf32"; "?" for unranked or non-tensor values.
static std::string formatType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return "?";
  std::string text;
  llvm::raw_string_ostream os(text);
  for (int64_t dim : tensor.getShape()) {
    if (ShapedType::isDynamic(dim))
      os << "?";
    else
      os << dim;
    os << "x";
  }
  os << tensor.getElementType();
  return text;
}

static std::string formatShapes(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(
      op->getOperandTypes(), os, [&](Type t) { os << formatType(t); }, ", ");
  os << " -> ";
  llvm::interleave(
      op->getResultTypes(), os, [&](Type t) { os << formatType(t); }, ", ");
  return text;
}

/// Sorts rows (with a `point`) longest predicted time first; ties keep
/// their order (the index breaks them, so a plain sort suffices).
template <typename Row> static void sortByTime(std::vector<Row> &rows) {
  std::vector<std::pair<size_t, Row>> indexed;
  for (auto [index, row] : llvm::enumerate(rows))
    indexed.emplace_back(index, std::move(row));
  llvm::sort(indexed, [](const auto &lhs, const auto &rhs) {
    double lhsTime = lhs.second.point.getTime();
    double rhsTime = rhs.second.point.getTime();
    return lhsTime != rhsTime ? lhsTime > rhsTime : lhs.first < rhs.first;
  });
  rows.clear();
  for (auto &entry : indexed)
    rows.push_back(std::move(entry.second));
}

RooflineReport mlir::ridge::buildRooflineReport(const CostAnalysis &costs,
                                                const RooflineModel &model,
                                                StringRef modelName) {
  RooflineReport report;
  report.modelName = modelName.str();
  for (const OpCost &cost : costs.getCosts()) {
    std::string ridgeOp = cost.op->getName().getStringRef().str();
    OnnxNodeRef node = getOnnxNode(cost.op->getLoc());
    std::string name = node.name.empty() ? ridgeOp : node.name.str();
    if (!cost.isKnown()) {
      report.unknownOps.push_back(name + " (" + ridgeOp + ")");
      continue;
    }
    RooflineReportRow row;
    row.name = name;
    row.opType = node.opType.empty() ? ridgeOp : node.opType.str();
    row.ridgeOp = ridgeOp;
    row.shapes = formatShapes(cost.op);
    row.point = model.place(cost);
    report.totalFlops += cost.flops;
    report.totalBytes += cost.bytes;
    report.totalTime += row.point.getTime();
    if (row.point.getBound() == Bound::Memory)
      report.memoryBoundTime += row.point.getTime();
    report.rows.push_back(std::move(row));
  }
  sortByTime(report.rows);
  return report;
}

static std::string describeNode(Operation *op) {
  OnnxNodeRef node = getOnnxNode(op->getLoc());
  if (node.name.empty())
    return op->getName().getStringRef().str();
  return node.name.str() + " (" +
         (node.opType.empty() ? op->getName().getStringRef() : node.opType)
             .str() +
         ")";
}

/// The op that computes `value`, looking into the fusion group that yields
/// it.
static Operation *getProducerOp(Value value) {
  Operation *def = value.getDefiningOp();
  // Through the casts of a narrowed kernel boundary (the reader's widening,
  // the producer's rounding): the op that computes the tensor.
  if (isa_and_present<CastOp>(def) && def->hasAttr(kBoundaryCastAttr))
    return getProducerOp(def->getOperand(0));
  if (auto group = dyn_cast_or_null<FusionGroupOp>(def)) {
    auto yield = cast<YieldOp>(group.getBody().front().getTerminator());
    return getProducerOp(
        yield.getValues()[cast<OpResult>(value).getResultNumber()]);
  }
  return def;
}

void mlir::ridge::addFusionGroups(RooflineReport &report, func::FuncOp func,
                                  const RooflineModel &model) {
  report.hasKernels = true;
  Block &block = func.front();
  report.traffic = computeFusionTraffic(block);
  for (FusionGroupOp group : block.getOps<FusionGroupOp>()) {
    FusionGroup members;
    for (Operation &op : group.getBody().front().without_terminator())
      members.ops.push_back(&op);
    RooflineKernelRow row;
    row.name = group.getName().str();
    row.kind = group.getKind().str();
    row.nodes = FusionPlan::getNodeNames(members);
    row.numOps = members.ops.size();
    // A kernel with a contraction is placed, epilogue included, on the
    // contraction's ceiling: the epilogue's few FLOPs overlap its
    // multiply-adds.
    auto cost = cast<CostOpInterface>(group.getOperation());
    int64_t bytes = cost.getMinBytes();
    if (bytes >= 0)
      bytes += getPrecisionTrafficAdjustment(group);
    row.point =
        model.place(std::max<int64_t>(0, cost.getFlops()),
                    std::max<int64_t>(0, bytes), getComputeFormat(group));
    report.kernelTime += row.point.getTime();
    report.kernels.push_back(std::move(row));
  }
  sortByTime(report.kernels);
  // An ONNX node lowered to several ops (Split) would repeat its edges.
  llvm::StringSet<> seen;
  block.walk([&](Operation *consumer) {
    auto edges = consumer->getAttrOfType<ArrayAttr>(kUnfusedAttr);
    if (!edges)
      return;
    for (auto edge : edges.getAsRange<DictionaryAttr>()) {
      auto operand = edge.getAs<IntegerAttr>("operand");
      auto reason = edge.getAs<StringAttr>("reason");
      if (!operand || !reason || operand.getInt() >= consumer->getNumOperands())
        continue;
      Operation *producer =
          getProducerOp(consumer->getOperand(operand.getInt()));
      if (!producer)
        continue;
      RooflineUnfusedRow row{describeNode(producer), describeNode(consumer),
                             reason.getValue().str()};
      if (seen.insert(row.producer + "\n" + row.consumer + "\n" + row.reason)
              .second)
        report.unfused.push_back(std::move(row));
    }
  });
}

//===----------------------------------------------------------------------===//
// Text table
//===----------------------------------------------------------------------===//

std::string mlir::ridge::formatSI(double value, StringRef unit) {
  static const char *prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  unsigned index = 0;
  while (std::abs(value) >= 999.95 && index + 1 < std::size(prefixes)) {
    value /= 1000;
    ++index;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  if (index == 0 && value == static_cast<int64_t>(value))
    os << static_cast<int64_t>(value);
  else if (std::abs(value) >= 99.95)
    os << llvm::format("%.0f", value);
  else if (std::abs(value) >= 9.995)
    os << llvm::format("%.1f", value);
  else
    os << llvm::format("%.2f", value);
  os << " " << prefixes[index] << unit;
  return text;
}

static std::string formatFixed(double value, int decimals) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.*f", decimals, value);
  return text;
}

/// A predicted time in microseconds with three significant digits.
static std::string formatMicros(double seconds) {
  double micros = seconds * 1e6;
  if (micros == 0)
    return "0";
  if (micros >= 100)
    return formatFixed(micros, 0);
  if (micros >= 10)
    return formatFixed(micros, 1);
  if (micros >= 1)
    return formatFixed(micros, 2);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.2g", micros);
  return text;
}

/// Keeps the end of long node names (the op part is the informative one).
static std::string clipFront(const std::string &text, size_t width) {
  if (text.size() <= width)
    return text;
  return "..." + text.substr(text.size() - (width - 3));
}

static std::string clipBack(const std::string &text, size_t width) {
  if (text.size() <= width)
    return text;
  return text.substr(0, width - 3) + "...";
}

/// One left- or right-aligned table cell and its gap.
static void printCell(llvm::raw_ostream &os, StringRef text, size_t width,
                      bool right) {
  size_t pad = width > text.size() ? width - text.size() : 0;
  if (right)
    os.indent(pad) << text;
  else
    os << text << std::string(pad, ' ');
  os << "  ";
}

/// A compute ceiling without its unit: "312T", "19.5T".
static std::string formatCeiling(double flopsPerSecond) {
  std::string text = formatSI(flopsPerSecond, "");
  llvm::erase(text, ' ');
  return text;
}

/// The columns every row of a table shares: where its work sits on the
/// roofline (with the format it computes in and the ceiling that gives) and
/// its share of `totalTime`.
static void printPointHeader(llvm::raw_ostream &os) {
  printCell(os, "FLOPs", 9, true);
  printCell(os, "bytes", 9, true);
  printCell(os, "FLOP/B", 8, true);
  printCell(os, "precision", 9, false);
  printCell(os, "ceiling", 7, true);
  printCell(os, "bound", 7, false);
  printCell(os, "time us", 8, true);
  os << "share\n";
}

static void printPointCells(llvm::raw_ostream &os, const RooflinePoint &point,
                            double totalTime) {
  printCell(os, formatSI(point.flops, ""), 9, true);
  printCell(os, formatSI(point.bytes, "B"), 9, true);
  printCell(
      os, formatFixed(point.getIntensity(), point.getIntensity() < 10 ? 2 : 1),
      8, true);
  printCell(os, point.precision, 9, false);
  printCell(os, formatCeiling(point.peakFlops), 7, true);
  printCell(os, stringifyBound(point.getBound()), 7, false);
  printCell(os, formatMicros(point.getTime()), 8, true);
  os << formatFixed(totalTime > 0 ? 100 * point.getTime() / totalTime : 0.0, 1)
     << "%\n";
}

/// The fusion plan: one row per kernel, the traffic of the three plans and
/// the reason behind every edge left between kernels.
static void printKernelTable(const RooflineReport &report,
                             llvm::raw_ostream &os) {
  os << "\nfusion plan: " << report.kernels.size() << " kernels for "
     << report.rows.size() << " ops, predicted "
     << formatMicros(report.kernelTime) << " us ("
     << formatMicros(report.totalTime) << " us op by op)\n";
  constexpr size_t kMaxNodes = 56;
  size_t nameWidth = 6, kindWidth = 4, nodesWidth = 5;
  std::vector<std::string> nodeTexts;
  for (const RooflineKernelRow &row : report.kernels) {
    std::string text = row.nodes.empty() ? "" : row.nodes.front();
    if (row.nodes.size() > 1)
      text += " +" + std::to_string(row.nodes.size() - 1);
    nodeTexts.push_back(clipFront(text, kMaxNodes));
    nameWidth = std::max(nameWidth, row.name.size());
    kindWidth = std::max(kindWidth, row.kind.size());
    nodesWidth = std::max(nodesWidth, nodeTexts.back().size());
  }
  auto cell = [&](StringRef text, size_t width, bool right) {
    printCell(os, text, width, right);
  };
  cell("kernel", nameWidth, false);
  cell("kind", kindWidth, false);
  cell("nodes", nodesWidth, false);
  printPointHeader(os);
  for (auto [row, nodes] : llvm::zip(report.kernels, nodeTexts)) {
    const RooflinePoint &point = row.point;
    cell(row.name, nameWidth, false);
    cell(row.kind, kindWidth, false);
    cell(nodes, nodesWidth, false);
    printPointCells(os, point, report.kernelTime);
  }
  const FusionTraffic &traffic = report.traffic;
  auto activations = [&](int64_t bytes) {
    return std::max<int64_t>(0, bytes - traffic.weightsReadBytes);
  };
  os << "traffic: " << formatSI(traffic.perNodeBytes, "B")
     << " one kernel per ONNX node, " << formatSI(traffic.fusedBytes, "B")
     << " fused, " << formatSI(traffic.lowerBoundBytes, "B")
     << " lower bound; weights " << formatSI(traffic.weightsBytes, "B") << "\n";
  if (traffic.numAttentions > 0 && traffic.attentionBytes > 0)
    os << "attention: " << traffic.numAttentions << " fused, "
       << formatSI(traffic.attentionBytes, "B") << " (scores on chip), "
       << formatSI(traffic.attentionExportedBytes, "B")
       << " as exported one kernel per node ("
       << formatFixed(static_cast<double>(traffic.attentionExportedBytes) /
                          traffic.attentionBytes,
                      1)
       << "x)\n";
  if (activations(traffic.perNodeBytes) > 0)
    os << "activation traffic fused / per node: "
       << formatFixed(static_cast<double>(activations(traffic.fusedBytes)) /
                          activations(traffic.perNodeBytes),
                      3)
       << "\n";
  if (!report.unfused.empty()) {
    os << "unfused edges:\n";
    for (const RooflineUnfusedRow &edge : report.unfused)
      os << "  " << edge.producer << " -> " << edge.consumer << ": "
         << edge.reason << "\n";
  }
}

void mlir::ridge::printRooflineTable(const RooflineReport &report,
                                     const RooflineModel &model,
                                     llvm::raw_ostream &os) {
  const GpuSpec &gpu = model.getGpu();
  os << "Roofline of " << report.modelName << " on " << gpu.name << ": ";
  if (model.getPrecision() == Precision::FP32)
    os << "contractions on fp32 SIMT ";
  else
    os << stringifyPrecision(model.getPrecision()) << " tensor cores ";
  os << formatSI(model.getMatrixPeak(), "FLOP/s") << ", fp32 SIMT "
     << formatSI(model.getVectorPeak(), "FLOP/s") << ", memory "
     << formatSI(gpu.bandwidth, "B/s") << "\n";
  // Each row's own ceiling is in its row: the tensor-core peak for a MatMul
  // or Gemm computed in a tensor-core format, the SIMT peak otherwise.
  os << "ridge point ";
  if (model.getPrecision() != Precision::FP32)
    os << formatFixed(model.getRidgePoint(), 1) << " FLOP/B on "
       << stringifyPrecision(model.getPrecision()) << " tensor cores, ";
  os << formatFixed(model.getVectorRidgePoint(), 1) << " FLOP/B on fp32 SIMT\n";

  // Rows that take no time (views such as reshapes) are summarized in one
  // line instead of filling the bottom of the table.
  std::vector<const RooflineReportRow *> timed;
  llvm::StringMap<unsigned> untimed;
  for (const RooflineReportRow &row : report.rows) {
    if (row.point.getTime() > 0)
      timed.push_back(&row);
    else
      ++untimed[row.opType];
  }

  constexpr size_t kMaxName = 44, kMaxShapes = 48;
  size_t nameWidth = 4, opWidth = 2, shapeWidth = 6;
  for (const RooflineReportRow *row : timed) {
    nameWidth = std::max(nameWidth, std::min(row->name.size(), kMaxName));
    opWidth = std::max(opWidth, row->opType.size());
    shapeWidth = std::max(shapeWidth, std::min(row->shapes.size(), kMaxShapes));
  }
  auto cell = [&](StringRef text, size_t width, bool right) {
    printCell(os, text, width, right);
  };
  if (!timed.empty()) {
    os << "\n";
    cell("node", nameWidth, false);
    cell("op", opWidth, false);
    cell("shapes", shapeWidth, false);
    printPointHeader(os);
  }
  for (const RooflineReportRow *row : timed) {
    const RooflinePoint &point = row->point;
    cell(clipFront(row->name, kMaxName), nameWidth, false);
    cell(row->opType, opWidth, false);
    cell(clipBack(row->shapes, kMaxShapes), shapeWidth, false);
    printPointCells(os, point, report.totalTime);
  }
  if (!untimed.empty()) {
    unsigned count = 0;
    std::vector<std::string> kinds;
    for (const auto &entry : untimed) {
      count += entry.second;
      kinds.push_back(entry.first().str() + " x" +
                      std::to_string(entry.second));
    }
    llvm::sort(kinds);
    os << "(" << count << (count == 1 ? " more op moves" : " more ops move")
       << " no device memory and take" << (count == 1 ? "s" : "")
       << " no time: " << llvm::join(kinds, ", ") << ")\n";
  }
  if (!report.unknownOps.empty())
    os << "(" << report.unknownOps.size()
       << " ops have dynamic shapes and no cost; give --shape for the graph "
          "inputs)\n";

  double intensity = report.totalBytes > 0
                         ? static_cast<double>(report.totalFlops) /
                               static_cast<double>(report.totalBytes)
                         : 0.0;
  os << "\ntotal: " << report.rows.size()
     << (report.rows.size() == 1 ? " op, " : " ops, ")
     << formatSI(report.totalFlops, "FLOP") << ", "
     << formatSI(report.totalBytes, "B") << ", predicted "
     << formatMicros(report.totalTime) << " us\n";
  if (report.totalTime > 0)
    os << "memory-bound ops take "
       << formatFixed(100 * report.memoryBoundTime / report.totalTime, 1)
       << "% of the predicted time\n";
  os << "model intensity " << formatFixed(intensity, 2) << " FLOP/B";
  if (intensity > 0 && intensity < model.getRidgePoint())
    os << ": " << formatFixed(model.getRidgePoint() / intensity, 1)
       << "x below the ridge point";
  else if (intensity > 0)
    os << ": " << formatFixed(intensity / model.getRidgePoint(), 2)
       << "x the ridge point";
  os << " (" << formatFixed(model.getRidgePoint(), 1) << " FLOP/B)\n";
  if (report.hasKernels)
    printKernelTable(report, os);
  if (const auto &memory = report.deviceMemory) {
    os << "\ndevice memory per session: weights "
       << formatSI(memory->weightsBytes, "B") << " (" << memory->numWeights
       << (memory->numWeights == 1 ? " weight" : " weights")
       << ", uploaded once), arena " << formatSI(memory->arenaBytes, "B")
       << " for the temporaries (peak live "
       << formatSI(memory->peakLiveBytes, "B");
    if (memory->zeroedBytes)
      os << "; " << formatSI(memory->zeroedBytes, "B")
         << " of split-K counters, zeroed once";
    os << ")\n";
  }
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

void mlir::ridge::printRooflineJson(const RooflineReport &report,
                                    const RooflineModel &model,
                                    llvm::raw_ostream &os) {
  const GpuSpec &gpu = model.getGpu();
  llvm::json::OStream json(os, /*IndentSize=*/1);
  json.object([&] {
    json.attribute("schema", kRooflineSchema);
    json.attribute("model", report.modelName);
    json.attributeObject("gpu", [&] {
      json.attribute("name", gpu.name);
      json.attribute("precision", stringifyPrecision(model.getPrecision()));
      json.attribute("peak_flops", model.getMatrixPeak());
      json.attribute("simt_peak_flops", model.getVectorPeak());
      json.attribute("bandwidth", gpu.bandwidth);
      json.attribute("ridge_point", model.getRidgePoint());
      json.attribute("simt_ridge_point", model.getVectorRidgePoint());
      json.attribute("l2_bytes", gpu.l2Bytes);
      json.attribute("sm_count", gpu.smCount);
      json.attribute("shared_memory_per_sm", gpu.sharedMemoryPerSm);
    });
    json.attributeArray("ops", [&] {
      for (const RooflineReportRow &row : report.rows) {
        const RooflinePoint &point = row.point;
        json.object([&] {
          json.attribute("name", row.name);
          json.attribute("op", row.opType);
          json.attribute("ridge_op", row.ridgeOp);
          json.attribute("shapes", row.shapes);
          json.attribute("flops", point.flops);
          json.attribute("bytes", point.bytes);
          json.attribute("intensity", point.getIntensity());
          json.attribute("ceiling", point.usesTensorCores ? "tensor" : "simt");
          json.attribute("precision", point.precision);
          json.attribute("ceiling_flops", point.peakFlops);
          json.attribute("bound", stringifyBound(point.getBound()));
          json.attribute("time_s", point.getTime());
          json.attribute("share", report.totalTime > 0
                                      ? point.getTime() / report.totalTime
                                      : 0.0);
        });
      }
    });
    json.attributeArray("unknown_ops", [&] {
      for (const std::string &name : report.unknownOps)
        json.value(name);
    });
    if (report.hasKernels) {
      json.attributeArray("kernels", [&] {
        for (const RooflineKernelRow &row : report.kernels) {
          const RooflinePoint &point = row.point;
          json.object([&] {
            json.attribute("name", row.name);
            json.attribute("kind", row.kind);
            json.attributeArray("nodes", [&] {
              for (const std::string &node : row.nodes)
                json.value(node);
            });
            json.attribute("ops", static_cast<int64_t>(row.numOps));
            json.attribute("flops", point.flops);
            json.attribute("bytes", point.bytes);
            json.attribute("intensity", point.getIntensity());
            json.attribute("ceiling",
                           point.usesTensorCores ? "tensor" : "simt");
            json.attribute("precision", point.precision);
            json.attribute("ceiling_flops", point.peakFlops);
            json.attribute("bound", stringifyBound(point.getBound()));
            json.attribute("time_s", point.getTime());
            json.attribute("share", report.kernelTime > 0
                                        ? point.getTime() / report.kernelTime
                                        : 0.0);
          });
        }
      });
      json.attributeObject("traffic", [&] {
        json.attribute("per_node_bytes", report.traffic.perNodeBytes);
        json.attribute("fused_bytes", report.traffic.fusedBytes);
        json.attribute("lower_bound_bytes", report.traffic.lowerBoundBytes);
        json.attribute("weights_bytes", report.traffic.weightsBytes);
        json.attribute("weights_read_bytes", report.traffic.weightsReadBytes);
        json.attribute("attentions", report.traffic.numAttentions);
        json.attribute("attention_bytes", report.traffic.attentionBytes);
        json.attribute("attention_exported_bytes",
                       report.traffic.attentionExportedBytes);
      });
      json.attributeArray("unfused", [&] {
        for (const RooflineUnfusedRow &edge : report.unfused)
          json.object([&] {
            json.attribute("producer", edge.producer);
            json.attribute("consumer", edge.consumer);
            json.attribute("reason", edge.reason);
          });
      });
    }
    if (const auto &memory = report.deviceMemory)
      json.attributeObject("device_memory", [&] {
        json.attribute("weights_bytes", memory->weightsBytes);
        json.attribute("weights", memory->numWeights);
        json.attribute("arena_bytes", memory->arenaBytes);
        json.attribute("peak_live_bytes", memory->peakLiveBytes);
        json.attribute("zeroed_bytes", memory->zeroedBytes);
      });
    json.attributeObject("total", [&] {
      json.attribute("ops", static_cast<int64_t>(report.rows.size()));
      json.attribute("flops", report.totalFlops);
      json.attribute("bytes", report.totalBytes);
      json.attribute("time_s", report.totalTime);
      json.attribute("intensity",
                     report.totalBytes > 0
                         ? static_cast<double>(report.totalFlops) /
                               static_cast<double>(report.totalBytes)
                         : 0.0);
      json.attribute("memory_bound_time_share",
                     report.totalTime > 0
                         ? report.memoryBoundTime / report.totalTime
                         : 0.0);
    });
  });
  os << "\n";
}
