//===- Roofline.cpp - Arithmetic intensity and roofline placement ---------===//

#include "ridgeline/Analysis/Roofline.h"
#include "ridgeline/Analysis/PrecisionPolicy.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

#define DEBUG_TYPE "ridge-roofline"

using namespace mlir;
using namespace mlir::ridge;

/// The format name of an element type: the --precision spelling for the
/// formats it has (fp32, bf16, fp16, tf32, fp8), "fp64", or the type as MLIR
/// prints it ("i64").
static std::string getFormatName(Type element) {
  if (element.isF32())
    return "fp32";
  if (element.isBF16())
    return "bf16";
  if (element.isF16())
    return "fp16";
  if (element.isF64())
    return "fp64";
  if (isa<FloatTF32Type>(element))
    return "tf32";
  if (auto floatType = dyn_cast<FloatType>(element);
      floatType && floatType.getWidth() == 8)
    return "fp8";
  std::string name;
  llvm::raw_string_ostream os(name);
  os << element;
  return name;
}

/// The widest float element type of the operands and results of `ops` (the
/// first of equal width), or the first element type when none is a float;
/// null for ops without operands and results.
static Type getWidestElementType(ArrayRef<Operation *> ops) {
  Type first, widest;
  auto visit = [&](Type type) {
    Type element = getElementTypeOrSelf(type);
    if (!first)
      first = element;
    auto floatType = dyn_cast<FloatType>(element);
    if (floatType &&
        (!widest || floatType.getWidth() > cast<FloatType>(widest).getWidth()))
      widest = floatType;
  };
  for (Operation *op : ops) {
    for (Type type : op->getOperandTypes())
      visit(type);
    for (Type type : op->getResultTypes())
      visit(type);
  }
  return widest ? widest : first;
}

ComputeFormat mlir::ridge::getComputeFormat(Operation *op) {
  if (auto group = dyn_cast<FusionGroupOp>(op)) {
    SmallVector<Operation *> members;
    Operation *contraction = nullptr;
    int64_t contractionFlops = 0;
    for (Operation &member : group.getBody().front().without_terminator()) {
      members.push_back(&member);
      auto costed = dyn_cast<CostOpInterface>(&member);
      if (costed && costed.isContraction() &&
          (!contraction || costed.getFlops() > contractionFlops)) {
        contraction = &member;
        contractionFlops = costed.getFlops();
      }
    }
    if (contraction)
      return getComputeFormat(contraction);
    Type element = getWidestElementType(members);
    return {element ? getFormatName(element) : "fp32", std::nullopt};
  }

  auto costed = dyn_cast<CostOpInterface>(op);
  if (!costed || !costed.isContraction()) {
    Type element = getWidestElementType(ArrayRef<Operation *>(op));
    return {element ? getFormatName(element) : "fp32", std::nullopt};
  }
  std::optional<Precision> precision;
  std::string name;
  if (auto attr = op->getAttrOfType<StringAttr>(kPrecisionAttr))
    precision = parsePrecision(attr.getValue());
  if (precision) {
    name = stringifyPrecision(*precision).str();
  } else {
    Type element = op->getNumOperands() > 0
                       ? getElementTypeOrSelf(op->getOperand(0).getType())
                       : Type();
    name = element ? getFormatName(element) : "fp32";
    precision = parsePrecision(name);
  }
  // The tensor-core code generator implements MatMul, Gemm, Conv (as
  // implicit GEMM; docs/tensor-cores.md) and the online attention
  // (docs/attention.md); the other contractions (transposed convolutions,
  // Einsum) run on SIMT in any format.
  bool hasTensorCoreKernel = isa<MatMulOp, GemmOp, ConvOp, AttentionOp>(op);
  if (!hasTensorCoreKernel || !precision || *precision == Precision::FP32)
    return {name, std::nullopt};
  // A skinny MatMul or Gemm stored in f16/bf16 (a half-precision decode
  // step, a router's logits: isBandwidthPathSide), or rounded to them for
  // its weight's bytes (an f32 decode step, its weight stored narrow:
  // getCompileTimeWeightType), is a GEMV: f32 FMA on SIMT, its bytes what
  // it costs.
  if (isa<MatMulOp, GemmOp>(op))
    if (std::optional<ContractionShape> shape = getContractionShape(op);
        shape &&
        isBandwidthPathSide(std::min(shape->m, shape->n), /*elementBytes=*/2))
      return {name, std::nullopt};
  return {name, precision};
}

/// Whether the kernel that computes `activation` (possibly through reshapes
/// and transposes) folds the activation's amax in as it stores it
/// (ridge-move-scale-reductions-to-producers), so that no launch reads the
/// activation again for its scale: a tensor-core contraction or attention
/// (a contraction or attention fusion group, or a MatMul, Gemm or Conv
/// alone, in a tensor-core format), or a row kernel (a reduction fusion
/// group: LayerNorm, RMSNorm).
static bool isAmaxComputedByProducer(Value activation) {
  Operation *producer = activation.getDefiningOp();
  // Views and permutations keep the elements, and so the amax.
  while (isa_and_present<ReshapeOp, TransposeOp>(producer))
    producer = producer->getOperand(0).getDefiningOp();
  if (!producer)
    return false;
  if (auto group = dyn_cast<FusionGroupOp>(producer)) {
    if (group.getKind() == "reduction")
      return true;
    if (group.getKind() != "contraction" && group.getKind() != "attention")
      return false;
  } else if (!isa<MatMulOp, GemmOp, ConvOp>(producer)) {
    return false;
  }
  return getComputeFormat(producer).tensorCores.has_value();
}

int64_t mlir::ridge::getPrecisionTrafficAdjustment(Operation *op) {
  if (auto group = dyn_cast<FusionGroupOp>(op)) {
    int64_t delta = 0;
    for (Operation &member : group.getBody().front().without_terminator())
      delta += getPrecisionTrafficAdjustment(&member);
    return delta;
  }
  auto attr = op->getAttrOfType<StringAttr>(kPrecisionAttr);
  if (!attr || !isa<MatMulOp, GemmOp, ConvOp>(op))
    return 0;
  if (attr.getValue() != "fp8") {
    std::optional<Precision> format = parsePrecision(attr.getValue());
    return format ? -getNarrowedWeightBytes(op, *format) : 0;
  }
  if (!isa<MatMulOp, GemmOp>(op))
    return 0;
  // The multiplied operands: MatMul's and Gemm's first two.
  int64_t delta = 0;
  for (Value operand : op->getOperands().take_front(2)) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type || !type.hasStaticShape())
      return 0;
    int64_t elements = type.getNumElements();
    int64_t bytes = elements * type.getElementTypeBitWidth() / 8;
    if (operand.getDefiningOp<ConstantOp>())
      delta += elements - bytes;
    else if (!isAmaxComputedByProducer(operand))
      delta += bytes;
  }
  return delta;
}

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
    if (cost.bytes >= 0)
      cost.bytes += getPrecisionTrafficAdjustment(op);
    cost.contraction = costed.isContraction();
    cost.format = getComputeFormat(costed);
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

double RooflineModel::getPeak(const ComputeFormat &format) const {
  double matrixPeak =
      format.tensorCores ? gpu.getMatrixFlops(*format.tensorCores) : 0;
  return matrixPeak > 0 ? matrixPeak : getVectorPeak();
}

RooflinePoint RooflineModel::place(int64_t flops, int64_t bytes,
                                   const ComputeFormat &format) const {
  RooflinePoint point;
  point.flops = flops;
  point.bytes = bytes;
  point.precision = format.name;
  point.peakFlops = getPeak(format);
  point.usesTensorCores =
      format.tensorCores && gpu.getMatrixFlops(*format.tensorCores) > 0;
  point.computeTime = static_cast<double>(flops) / point.peakFlops;
  point.memoryTime = static_cast<double>(bytes) / gpu.bandwidth;
  return point;
}

RooflinePoint RooflineModel::placeAsPlanned(int64_t flops, int64_t bytes,
                                            bool contraction) const {
  ComputeFormat format;
  if (contraction) {
    format.name = stringifyPrecision(precision).str();
    if (precision != Precision::FP32)
      format.tensorCores = precision;
  }
  return place(flops, bytes, format);
}
