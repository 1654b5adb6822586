//===- Target.cpp - The one target a compilation is for -------------------===//

#include "ridgeline/Analysis/Target.h"
#include "ridgeline/Analysis/Roofline.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::ridge;

/// The chips the GPU back end has PTX features for (Pipelines.cpp,
/// getPtxFeatures), in the order messages list them.
static constexpr llvm::StringLiteral kKnownChips[] = {
    "cpu", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_100a"};

bool mlir::ridge::isKnownChip(StringRef chip) {
  return llvm::is_contained(kKnownChips, chip);
}

std::string mlir::ridge::getKnownChipList() {
  return llvm::join(ArrayRef<llvm::StringLiteral>(kKnownChips), ", ");
}

StringRef mlir::ridge::getDefaultGpuName(StringRef chip) {
  if (chip.starts_with("sm_8"))
    return "A100-SXM-80GB";
  if (chip.starts_with("sm_10"))
    return "B200";
  return kDefaultGpuName;
}

/// "sm_90a" -> "90": architectures that run the same code, ignoring the
/// arch-specific suffix.
static StringRef getComputeCapability(StringRef chip) {
  return chip.drop_front(3).rtrim('a');
}

/// Replaces the GPU of `target` (a spec file wins over a name) and its
/// precision where given, then checks that the roofline model can describe
/// the result (tensor cores for the precision). Both the tools' resolution
/// and the passes' override options go through here.
static LogicalResult overrideTarget(TargetSpec &target, StringRef gpu,
                                    StringRef gpuSpecFile, StringRef precision,
                                    std::string &error) {
  if (!gpu.empty() || !gpuSpecFile.empty()) {
    std::optional<GpuSpec> spec = resolveGpuSpec(gpu, gpuSpecFile, error);
    if (!spec)
      return failure();
    target.gpu = std::move(*spec);
  }
  if (!precision.empty()) {
    std::optional<Precision> parsed = parsePrecision(precision);
    if (!parsed) {
      error = "unknown precision '" + precision.str() +
              "'; expected fp32, tf32, fp16, bf16 or fp8";
      return failure();
    }
    // fp8 tensor cores came with Ada (sm_89) and Hopper (sm_90a); name the
    // chip rather than the GPU, which may be planned for another one.
    unsigned capability = 0;
    if (*parsed == Precision::FP8 && target.isGpu() &&
        !getComputeCapability(target.chip).getAsInteger(10, capability) &&
        capability < 89) {
      error = "--precision=fp8 needs fp8 tensor cores (sm_89, sm_90a or "
              "newer); target " +
              target.chip + " has none";
      return failure();
    }
    target.precision = *parsed;
    target.numerics = *parsed;
  }
  // The roofline model is what every decision consults; a GPU it cannot
  // describe (no tensor cores for the precision) is no usable target.
  return success(
      RooflineModel::create(target.gpu, target.precision, error).has_value());
}

FailureOr<TargetSpec>
mlir::ridge::resolveTarget(const TargetRequest &request, std::string &error,
                           SmallVectorImpl<std::string> *warnings) {
  TargetSpec target;
  target.chip = request.chip.empty() ? "cpu" : request.chip;
  if (!isKnownChip(target.chip)) {
    error = "unknown target '" + target.chip + "' (expected " +
            getKnownChipList() + ")";
    return failure();
  }
  StringRef gpuName =
      request.gpu.empty() ? getDefaultGpuName(target.chip) : request.gpu;
  if (failed(overrideTarget(target, gpuName, request.gpuSpecFile,
                            request.precision, error)))
    return failure();
  // Without --precision the CPU computes in fp32 (and still plans its
  // kernels at the GPU's default precision, as the GPU build does).
  if (request.precision.empty())
    target.numerics = target.isGpu() ? target.precision : Precision::FP32;
  if (warnings && target.isGpu() && !target.gpu.chip.empty() &&
      getComputeCapability(target.chip) !=
          getComputeCapability(target.gpu.chip))
    warnings->push_back("kernels are planned for the " + target.gpu.name +
                        " (" + target.gpu.chip + ") but compiled for " +
                        target.chip +
                        "; pass --gpu to plan for the GPU that runs them");
  return target;
}

DictionaryAttr mlir::ridge::buildTargetAttr(MLIRContext *context,
                                            const TargetSpec &target) {
  Builder b(context);
  const GpuSpec &gpu = target.gpu;
  auto peaks = b.getDictionaryAttr({
      b.getNamedAttr("fp32", b.getF64FloatAttr(gpu.fp32Flops)),
      b.getNamedAttr("tf32", b.getF64FloatAttr(gpu.tf32Flops)),
      b.getNamedAttr("fp16", b.getF64FloatAttr(gpu.fp16Flops)),
      b.getNamedAttr("bf16", b.getF64FloatAttr(gpu.bf16Flops)),
      b.getNamedAttr("fp8", b.getF64FloatAttr(gpu.fp8Flops)),
  });
  SmallVector<NamedAttribute> fields = {
      b.getNamedAttr("chip", b.getStringAttr(target.chip)),
      b.getNamedAttr("gpu", b.getStringAttr(gpu.name)),
      b.getNamedAttr("numerics",
                     b.getStringAttr(stringifyPrecision(target.numerics))),
      b.getNamedAttr("precision",
                     b.getStringAttr(stringifyPrecision(target.precision))),
      b.getNamedAttr("sm_count", b.getI64IntegerAttr(gpu.smCount)),
      b.getNamedAttr("smem_per_sm", b.getI64IntegerAttr(gpu.sharedMemoryPerSm)),
      b.getNamedAttr("registers_per_sm",
                     b.getI64IntegerAttr(gpu.registersPerSm)),
      b.getNamedAttr("l2_bytes", b.getI64IntegerAttr(gpu.l2Bytes)),
      b.getNamedAttr("bandwidth", b.getF64FloatAttr(gpu.bandwidth)),
      b.getNamedAttr("peak_flops", peaks),
  };
  if (!gpu.chip.empty())
    fields.push_back(b.getNamedAttr("gpu_chip", b.getStringAttr(gpu.chip)));
  return b.getDictionaryAttr(fields);
}

FailureOr<TargetSpec> mlir::ridge::parseTargetAttr(DictionaryAttr attr,
                                                   std::string &error) {
  TargetSpec target;
  auto fail = [&](StringRef field, StringRef expected) {
    error = ("'" + kTargetAttr + "' needs a field '" + field + "' (" +
             expected + ")")
                .str();
    return failure();
  };
  auto text = [&](DictionaryAttr dict, StringRef name, std::string &out) {
    auto value = dict.getAs<StringAttr>(name);
    if (value)
      out = value.getValue().str();
    return static_cast<bool>(value);
  };
  auto integer = [&](StringRef name, int64_t &out) {
    auto value = attr.getAs<IntegerAttr>(name);
    if (value)
      out = value.getInt();
    return value && out >= 0;
  };
  auto real = [&](DictionaryAttr dict, StringRef name, double &out) {
    auto value = dict.getAs<FloatAttr>(name);
    if (value)
      out = value.getValueAsDouble();
    return value && out >= 0;
  };
  GpuSpec &gpu = target.gpu;
  std::string precision;
  if (!text(attr, "chip", target.chip) || !isKnownChip(target.chip))
    return fail("chip", getKnownChipList());
  if (!text(attr, "gpu", gpu.name))
    return fail("gpu", "a string");
  if (!text(attr, "precision", precision) || !parsePrecision(precision))
    return fail("precision", "fp32, tf32, fp16, bf16 or fp8");
  target.precision = *parsePrecision(precision);
  target.numerics = target.precision;
  std::string numerics;
  if (attr.get("numerics")) {
    if (!text(attr, "numerics", numerics) || !parsePrecision(numerics))
      return fail("numerics", "fp32, tf32, fp16, bf16 or fp8");
    target.numerics = *parsePrecision(numerics);
  }
  if (!integer("sm_count", gpu.smCount))
    return fail("sm_count", "a non-negative integer");
  if (!integer("smem_per_sm", gpu.sharedMemoryPerSm))
    return fail("smem_per_sm", "bytes, a non-negative integer");
  if (!integer("registers_per_sm", gpu.registersPerSm))
    return fail("registers_per_sm", "a non-negative integer");
  if (!integer("l2_bytes", gpu.l2Bytes))
    return fail("l2_bytes", "a non-negative integer");
  if (!real(attr, "bandwidth", gpu.bandwidth) || gpu.bandwidth == 0)
    return fail("bandwidth", "bytes/s, a positive float");
  auto peaks = attr.getAs<DictionaryAttr>("peak_flops");
  if (!peaks || !real(peaks, "fp32", gpu.fp32Flops) ||
      !real(peaks, "tf32", gpu.tf32Flops) ||
      !real(peaks, "fp16", gpu.fp16Flops) ||
      !real(peaks, "bf16", gpu.bf16Flops) || !real(peaks, "fp8", gpu.fp8Flops))
    return fail("peak_flops", "{fp32, tf32, fp16, bf16, fp8} in FLOP/s");
  (void)text(attr, "gpu_chip", gpu.chip);
  return target;
}

void mlir::ridge::setModuleTarget(Operation *module, const TargetSpec &target) {
  module->setAttr(kTargetAttr, buildTargetAttr(module->getContext(), target));
}

FailureOr<TargetSpec> mlir::ridge::getTargetForPass(Operation *op,
                                                    StringRef gpu,
                                                    StringRef gpuSpecFile,
                                                    StringRef precision) {
  Operation *module = isa<ModuleOp>(op) ? op : op->getParentOfType<ModuleOp>();
  std::string error;
  FailureOr<TargetSpec> target = failure();
  if (auto attr = module ? module->getAttrOfType<DictionaryAttr>(kTargetAttr)
                         : DictionaryAttr()) {
    target = parseTargetAttr(attr, error);
    if (succeeded(target) &&
        failed(overrideTarget(*target, gpu, gpuSpecFile, precision, error)))
      target = failure();
  } else {
    TargetRequest request;
    request.chip = kDefaultChip.str();
    request.gpu = gpu.str();
    request.gpuSpecFile = gpuSpecFile.str();
    request.precision = precision.str();
    target = resolveTarget(request, error, /*warnings=*/nullptr);
  }
  if (failed(target))
    (module ? module : op)->emitError() << error;
  return target;
}

FailureOr<RooflineModel> mlir::ridge::getRooflineForPass(Operation *op,
                                                         StringRef gpu,
                                                         StringRef gpuSpecFile,
                                                         StringRef precision) {
  FailureOr<TargetSpec> target =
      getTargetForPass(op, gpu, gpuSpecFile, precision);
  if (failed(target))
    return failure();
  // getTargetForPass checked that the model exists.
  std::string unused;
  return *RooflineModel::create(target->gpu, target->precision, unused);
}

LogicalResult mlir::ridge::checkCodegenNumerics(const TargetSpec &target,
                                                std::string &error) {
  if (target.numerics != Precision::FP8 || !target.isGpu() ||
      target.chip == "sm_90a")
    return success();
  error = "--precision=fp8 kernels are generated for sm_90a only (e4m3 "
          "wgmma), not for target " +
          target.chip +
          "; the CPU build (--target=cpu) computes it, and the roofline "
          "report (--report) accepts it";
  return failure();
}
