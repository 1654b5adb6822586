//===- EmulatorReport.cpp - Measured kernels against the plan -------------===//
//
// Joins what the PTX emulator measured for each GPU kernel (the counters
// JSON, docs/emulator.md "Counters") with the fusion group it was outlined
// from. The comparison that checks the plan is footprint against predicted
// bytes: the footprint counts each 32-byte sector a launch touches once,
// which is the DRAM traffic of a kernel whose caches hold its reuse, and
// what the plan's cost model counts (every operand read once, every result
// written once). Requested bytes (every lane's load, repeated reads
// included) are shown beside it: their excess over the footprint is reuse
// that caches or shared memory must serve.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Driver/EmulatorReport.h"

#include "ridgeline/Dialect/Ridge/Transforms/Passes.h"
#include "ridgeline/Driver/Compiler.h"
#include "ridgeline/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

#include <map>

using namespace mlir;
using namespace mlir::ridge;

/// A kernel whose measured footprint exceeds its prediction by more than
/// this is listed after the table (issue 13's bar).
static constexpr double kExcessRatio = 1.5;

std::optional<RooflineReport>
mlir::ridge::buildPlannedReport(ModuleOp module, const TargetSpec &target,
                                bool fusion, const RooflineModel &model,
                                StringRef modelName) {
  OwningOpRef<ModuleOp> clone = module.clone();
  setModuleTarget(*clone, target);
  PassManager pm(module.getContext());
  buildGraphOptimizationPipeline(pm, fusion);
  // Each contraction's format (and a convolution's layout), as
  // buildGraphToLinalgPipeline decides it before fusion: the report places
  // every op and kernel on the ceiling of the format it is built in.
  buildContractionFormatPipeline(pm);
  if (failed(pm.run(*clone)))
    return std::nullopt;
  CostAnalysis costs(*clone);
  RooflineReport report = buildRooflineReport(costs, model, modelName);
  // The kernels, and their formats: a contraction fused beside a rounded
  // one takes its format (PrecisionPolicy.h), as buildGraphToLinalgPipeline
  // decides once the groups are formed. The node rows above keep each op's
  // own decision.
  PassManager groups(module.getContext());
  buildFusionGroupPipeline(groups, fusion, /*recordUnfused=*/true);
  buildKernelFormatPipeline(groups);
  if (failed(groups.run(*clone)))
    return std::nullopt;
  auto main = clone->lookupSymbol<func::FuncOp>("main");
  if (main && !main.isExternal())
    addFusionGroups(report, main, model);

  // A GPU model's device memory: the host code lowered as far as its plan
  // (what the artifact's descriptor will say). Formats the report describes
  // but code generation does not build yet have none.
  std::string unsupported;
  if (target.isGpu() && succeeded(checkCodegenNumerics(target, unsupported))) {
    OwningOpRef<ModuleOp> lowered = module.clone();
    CompileOptions options;
    options.target = target;
    options.fusion = fusion;
    if (failed(lowerGraphModule(*lowered, options,
                                LoweringStage::DeviceMemoryPlan)))
      return std::nullopt;
    auto plan = (*lowered)->getAttrOfType<DictionaryAttr>(kDeviceMemoryAttr);
    auto size = [&](StringRef key) -> int64_t {
      auto value = plan ? plan.getAs<IntegerAttr>(key) : IntegerAttr();
      return value ? value.getInt() : 0;
    };
    auto weights = plan ? plan.getAs<ArrayAttr>("weights") : ArrayAttr();
    report.deviceMemory = RooflineReport::DeviceMemory{
        size("weights_bytes"),
        weights ? static_cast<int64_t>(weights.size()) : 0, size("arena_bytes"),
        size("peak_live_bytes"), size("zeroed_bytes")};
  }
  return report;
}

std::string mlir::ridge::getKernelGroupName(StringRef kernelName) {
  // gpu-kernel-outlining names a group's launches GROUP_kernel,
  // GROUP_kernel_0, GROUP_kernel_1, ...
  size_t at = kernelName.rfind("_kernel");
  if (at == StringRef::npos)
    return "";
  StringRef rest = kernelName.drop_front(at + strlen("_kernel"));
  if (!rest.empty() && !(rest.consume_front("_") && !rest.empty() &&
                         llvm::all_of(rest, llvm::isDigit)))
    return "";
  return kernelName.take_front(at).str();
}

namespace {

/// What the report shows of the counters of one or more GPU kernels.
struct Measured {
  std::vector<std::string> kernels;
  int64_t launches = 0;
  int64_t warpInstructions = 0;
  int64_t tensorCore = 0;
  int64_t tensorCoreFlops = 0;
  int64_t requestedBytes = 0; // global load + store + atomic
  int64_t sectors = 0;
  int64_t footprintBytes = 0;
  int64_t footprintLoadBytes = 0, footprintStoreBytes = 0;
  int64_t sharedConflicts = 0;
  double hostSeconds = 0;

  void add(const Measured &other) {
    kernels.insert(kernels.end(), other.kernels.begin(), other.kernels.end());
    launches += other.launches;
    warpInstructions += other.warpInstructions;
    tensorCore += other.tensorCore;
    tensorCoreFlops += other.tensorCoreFlops;
    requestedBytes += other.requestedBytes;
    sectors += other.sectors;
    footprintBytes += other.footprintBytes;
    footprintLoadBytes += other.footprintLoadBytes;
    footprintStoreBytes += other.footprintStoreBytes;
    sharedConflicts += other.sharedConflicts;
    hostSeconds += other.hostSeconds;
  }
  /// Requested bytes per byte of the sectors fetched.
  std::optional<double> getCoalescing() const {
    if (!sectors)
      return std::nullopt;
    return double(requestedBytes) / (double(sectors) * 32);
  }
};

int64_t getInt(const llvm::json::Object *object, StringRef key) {
  if (!object)
    return 0;
  return object->getInteger(key).value_or(0);
}

/// One kernel of the counters document.
std::optional<Measured> readKernel(const llvm::json::Object &kernel) {
  Measured measured;
  std::optional<StringRef> name = kernel.getString("name");
  if (!name)
    return std::nullopt;
  measured.kernels.push_back(name->str());
  measured.launches = getInt(&kernel, "launches");
  measured.warpInstructions = getInt(&kernel, "warp_instructions");
  measured.hostSeconds = kernel.getNumber("host_seconds").value_or(0);
  measured.tensorCore = getInt(kernel.getObject("instructions"), "tensor_core");
  measured.tensorCoreFlops = getInt(&kernel, "tensor_core_flops");
  if (const llvm::json::Object *global = kernel.getObject("global"))
    for (StringRef kind : {"load", "store", "atomic"}) {
      const llvm::json::Object *access = global->getObject(kind);
      int64_t footprint = getInt(access, "footprint_bytes");
      measured.requestedBytes += getInt(access, "bytes");
      measured.sectors += getInt(access, "sectors");
      measured.footprintBytes += footprint;
      (kind == "load" ? measured.footprintLoadBytes
                      : measured.footprintStoreBytes) += footprint;
    }
  if (const llvm::json::Object *shared = kernel.getObject("shared"))
    for (StringRef kind : {"load", "store"})
      measured.sharedConflicts +=
          getInt(shared->getObject(kind), "bank_conflicts");
  return measured;
}

/// One row: a fusion group of the plan (or a kernel of none) and what its
/// kernels measured.
struct Row {
  std::string name;
  const RooflineKernelRow *planned = nullptr;
  Measured measured;

  std::optional<double> getRatio() const {
    if (!planned || planned->point.bytes <= 0)
      return std::nullopt;
    return double(measured.footprintBytes) / double(planned->point.bytes);
  }
};

std::string formatBytes(int64_t bytes) { return formatSI(bytes, "B"); }

std::string formatRatio(std::optional<double> ratio) {
  return ratio ? llvm::formatv("{0:F2}", *ratio).str() : std::string("-");
}

} // namespace

LogicalResult mlir::ridge::printEmulatorReport(
    const RooflineReport &plan, StringRef countersJson, StringRef chip,
    StringRef gpuName, bool json, llvm::raw_ostream &os, std::string &error) {
  llvm::Expected<llvm::json::Value> document = llvm::json::parse(countersJson);
  if (!document) {
    error = "the emulator's counters are not JSON: " +
            llvm::toString(document.takeError());
    return failure();
  }
  const llvm::json::Object *root = document->getAsObject();
  const llvm::json::Array *kernels = root ? root->getArray("kernels") : nullptr;
  if (!kernels) {
    error = "the emulator's counters have no 'kernels' list";
    return failure();
  }

  // Rows in plan order (the groups' program order, k0, k1, ...), then the
  // kernels that belong to no group of the plan.
  std::vector<Row> rows;
  std::map<std::string, size_t> rowOf;
  std::vector<const RooflineKernelRow *> planned;
  for (const RooflineKernelRow &kernel : plan.kernels)
    planned.push_back(&kernel);
  llvm::sort(planned,
             [](const RooflineKernelRow *a, const RooflineKernelRow *b) {
               unsigned x = 0, y = 0;
               StringRef(a->name).drop_front().consumeInteger(10, x);
               StringRef(b->name).drop_front().consumeInteger(10, y);
               return x != y ? x < y : a->name < b->name;
             });
  for (const RooflineKernelRow *kernel : planned) {
    rowOf[kernel->name] = rows.size();
    rows.push_back(Row{kernel->name, kernel, {}});
  }
  for (const llvm::json::Value &value : *kernels) {
    const llvm::json::Object *object = value.getAsObject();
    std::optional<Measured> measured =
        object ? readKernel(*object) : std::nullopt;
    if (!measured) {
      error = "a kernel of the emulator's counters has no name";
      return failure();
    }
    std::string group = getKernelGroupName(measured->kernels.front());
    auto it = rowOf.find(group);
    if (it == rowOf.end()) {
      rowOf[measured->kernels.front()] = rows.size();
      rows.push_back(Row{measured->kernels.front(), nullptr, {}});
      it = rowOf.find(measured->kernels.front());
    }
    rows[it->second].measured.add(*measured);
  }

  Measured total;
  int64_t predictedTotal = 0;
  for (const Row &row : rows) {
    total.add(row.measured);
    if (row.planned)
      predictedTotal += row.planned->point.bytes;
  }
  auto excess = [&](const Row &row) {
    std::optional<double> ratio = row.getRatio();
    return ratio && *ratio > kExcessRatio;
  };

  if (json) {
    llvm::json::OStream out(os, 2);
    out.object([&] {
      out.attribute("schema", "ridgeline-emulator-report");
      out.attribute("version", 1);
      out.attribute("model", plan.modelName);
      out.attribute("target", chip);
      out.attribute("planned_for", gpuName);
      out.attributeArray("kernels", [&] {
        for (const Row &row : rows)
          out.object([&] {
            out.attribute("name", row.name);
            out.attributeArray("gpu_kernels", [&] {
              for (const std::string &kernel : row.measured.kernels)
                out.value(kernel);
            });
            if (row.planned) {
              out.attribute("kind", row.planned->kind);
              out.attributeArray("nodes", [&] {
                for (const std::string &node : row.planned->nodes)
                  out.value(node);
              });
              out.attribute("predicted_bytes", row.planned->point.bytes);
              out.attribute("predicted_flops", row.planned->point.flops);
              out.attribute("predicted_us", row.planned->point.getTime() * 1e6);
            } else {
              out.attribute("predicted_bytes", nullptr);
            }
            out.attribute("launches", row.measured.launches);
            out.attribute("warp_instructions", row.measured.warpInstructions);
            out.attribute("tensor_core_instructions", row.measured.tensorCore);
            out.attribute("tensor_core_flops", row.measured.tensorCoreFlops);
            out.attribute("requested_bytes", row.measured.requestedBytes);
            out.attribute("sectors", row.measured.sectors);
            if (std::optional<double> c = row.measured.getCoalescing())
              out.attribute("coalescing", *c);
            else
              out.attribute("coalescing", nullptr);
            out.attribute("footprint_bytes", row.measured.footprintBytes);
            out.attribute("footprint_load_bytes",
                          row.measured.footprintLoadBytes);
            out.attribute("footprint_store_bytes",
                          row.measured.footprintStoreBytes);
            if (std::optional<double> ratio = row.getRatio())
              out.attribute("measured_over_predicted", *ratio);
            else
              out.attribute("measured_over_predicted", nullptr);
            out.attribute("shared_bank_conflicts",
                          row.measured.sharedConflicts);
          });
      });
      out.attribute("predicted_bytes", predictedTotal);
      out.attribute("footprint_bytes", total.footprintBytes);
      out.attribute("requested_bytes", total.requestedBytes);
      out.attribute("warp_instructions", total.warpInstructions);
      out.attribute("emulated_seconds", total.hostSeconds);
    });
    os << "\n";
    return success();
  }

  os << "emulator report: " << rows.size() << " kernels of '" << plan.modelName
     << "' on " << chip << " (planned for " << gpuName << "), "
     << total.launches << " launches, " << total.warpInstructions
     << " warp instructions emulated in "
     << llvm::formatv("{0:F2}", total.hostSeconds) << " s";
  if (total.hostSeconds > 0)
    os << llvm::formatv(" ({0:F1} M/s)",
                        total.warpInstructions / total.hostSeconds / 1e6);
  os << "\n";
  size_t nameWidth = 6;
  for (const Row &row : rows)
    nameWidth = std::max(nameWidth, row.name.size());
  auto printRow = [&](ArrayRef<std::string> cells) {
    os << llvm::left_justify(cells[0], nameWidth);
    const unsigned widths[] = {8, 13, 9, 11, 6, 11, 11, 7, 9};
    for (auto [cell, width] : llvm::zip(cells.drop_front(), widths))
      os << ' ' << llvm::right_justify(cell, width);
    os << '\n';
  };
  printRow({"kernel", "launches", "warp instrs", "tensor", "requested", "coal.",
            "footprint", "predicted", "ratio", "bank cfl."});
  for (const Row &row : rows) {
    const Measured &m = row.measured;
    std::optional<double> coalescing = m.getCoalescing();
    printRow({row.name, std::to_string(m.launches),
              std::to_string(m.warpInstructions), std::to_string(m.tensorCore),
              formatBytes(m.requestedBytes),
              coalescing ? llvm::formatv("{0:F2}", *coalescing).str() : "-",
              formatBytes(m.footprintBytes),
              row.planned ? formatBytes(row.planned->point.bytes) : "-",
              formatRatio(row.getRatio()), std::to_string(m.sharedConflicts)});
  }
  os << "total: footprint " << formatBytes(total.footprintBytes)
     << ", predicted " << formatBytes(predictedTotal) << " (ratio "
     << formatRatio(predictedTotal
                        ? std::optional<double>(double(total.footprintBytes) /
                                                double(predictedTotal))
                        : std::nullopt)
     << "), requested " << formatBytes(total.requestedBytes) << "\n";
  for (const Row &row : rows) {
    if (!excess(row))
      continue;
    os << "over the plan by more than " << kExcessRatio << "x: " << row.name
       << " (" << formatRatio(row.getRatio()) << "x";
    if (row.planned && !row.planned->nodes.empty())
      os << "; " << llvm::join(row.planned->nodes, ", ");
    os << ")\n";
  }
  return success();
}

void mlir::ridge::printKernelTimes(const RooflineReport &plan,
                                   ArrayRef<MeasuredKernelTime> times,
                                   StringRef chip, StringRef gpuName,
                                   StringRef what, llvm::raw_ostream &os) {
  struct Group {
    std::string name;
    const RooflineKernelRow *planned = nullptr;
    uint64_t launches = 0;
    double milliseconds = 0;
  };
  std::vector<Group> groups;
  std::map<std::string, size_t> groupOf;
  for (const MeasuredKernelTime &time : times) {
    std::string name = getKernelGroupName(time.name);
    if (name.empty())
      name = time.name;
    auto [it, inserted] = groupOf.try_emplace(name, groups.size());
    if (inserted) {
      Group group{name, nullptr, 0, 0};
      for (const RooflineKernelRow &kernel : plan.kernels)
        if (kernel.name == name)
          group.planned = &kernel;
      groups.push_back(group);
    }
    groups[it->second].launches += time.launches;
    groups[it->second].milliseconds += time.milliseconds;
  }
  double measuredTotal = 0, predictedTotal = 0;
  size_t nameWidth = 6;
  for (const Group &group : groups) {
    measuredTotal += group.milliseconds * 1e3;
    if (group.planned)
      predictedTotal += group.planned->point.getTime() * 1e6;
    nameWidth = std::max(nameWidth, group.name.size());
  }
  os << "kernel times: " << groups.size() << " kernels of '" << plan.modelName
     << "' on " << chip << " (" << what << "), roofline of " << gpuName << "\n";
  auto printRow = [&](ArrayRef<std::string> cells) {
    os << llvm::left_justify(cells[0], nameWidth);
    const unsigned widths[] = {8, 12, 12, 9, 10};
    for (auto [cell, width] : llvm::zip(cells.drop_front(), widths))
      os << ' ' << llvm::right_justify(cell, width);
    os << '\n';
  };
  printRow(
      {"kernel", "launches", "measured us", "roofline us", "ratio", "bound"});
  for (const Group &group : groups) {
    double measured = group.milliseconds * 1e3;
    double predicted = group.planned ? group.planned->point.getTime() * 1e6 : 0;
    bool memoryBound = group.planned && group.planned->point.memoryTime >=
                                            group.planned->point.computeTime;
    printRow({group.name, std::to_string(group.launches),
              llvm::formatv("{0:F2}", measured).str(),
              group.planned ? llvm::formatv("{0:F3}", predicted).str() : "-",
              predicted > 0
                  ? llvm::formatv("{0:F2}", measured / predicted).str()
                  : "-",
              group.planned ? (memoryBound ? "memory" : "compute") : "-"});
  }
  os << llvm::formatv("total: measured {0:F2} us, roofline {1:F3} us",
                      measuredTotal, predictedTotal);
  if (predictedTotal > 0)
    os << llvm::formatv(" (ratio {0:F2})", measuredTotal / predictedTotal);
  os << "\n";
}
