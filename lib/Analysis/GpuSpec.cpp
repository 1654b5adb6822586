//===- GpuSpec.cpp - Built-in GPU specs and the spec-file reader ----------===//

#include "ridgeline/Analysis/GpuSpec.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::ridge;

StringRef mlir::ridge::stringifyPrecision(Precision precision) {
  switch (precision) {
  case Precision::FP32:
    return "fp32";
  case Precision::TF32:
    return "tf32";
  case Precision::FP16:
    return "fp16";
  case Precision::BF16:
    return "bf16";
  case Precision::FP8:
    return "fp8";
  }
  llvm_unreachable("unknown precision");
}

std::optional<Precision> mlir::ridge::parsePrecision(StringRef text) {
  return llvm::StringSwitch<std::optional<Precision>>(text.lower())
      .Case("fp32", Precision::FP32)
      .Case("tf32", Precision::TF32)
      .Case("fp16", Precision::FP16)
      .Case("bf16", Precision::BF16)
      .Case("fp8", Precision::FP8)
      .Default(std::nullopt);
}

double GpuSpec::getMatrixFlops(Precision precision) const {
  switch (precision) {
  case Precision::FP32:
    return fp32Flops;
  case Precision::TF32:
    return tf32Flops;
  case Precision::FP16:
    return fp16Flops;
  case Precision::BF16:
    return bf16Flops;
  case Precision::FP8:
    return fp8Flops;
  }
  llvm_unreachable("unknown precision");
}

//===----------------------------------------------------------------------===//
// Built-in specs
//===----------------------------------------------------------------------===//

static constexpr double kTera = 1e12;
static constexpr double kGiga = 1e9;
static constexpr int64_t kMiB = 1024 * 1024;
static constexpr int64_t kKiB = 1024;

static GpuSpec makeSpec(StringRef name, StringRef chip, double fp32,
                        double tf32, double fp16, double bf16, double fp8,
                        double bandwidthGBs, int64_t l2MiB, int64_t sms,
                        int64_t smemKiB) {
  GpuSpec spec;
  spec.name = name.str();
  spec.chip = chip.str();
  spec.fp32Flops = fp32 * kTera;
  spec.tf32Flops = tf32 * kTera;
  spec.fp16Flops = fp16 * kTera;
  spec.bf16Flops = bf16 * kTera;
  spec.fp8Flops = fp8 * kTera;
  spec.bandwidth = bandwidthGBs * kGiga;
  spec.l2Bytes = l2MiB * kMiB;
  spec.smCount = sms;
  spec.sharedMemoryPerSm = smemKiB * kKiB;
  return spec;
}

// Datasheets quote tensor-core rates "with sparsity"; the dense rates below are
// half of those. Units: TFLOP/s, GB/s, MiB, SMs, KiB. The chip is the
// architecture's compute capability (CUDA C++ Programming Guide).
static const GpuSpec kBuiltinSpecs[] = {
    // NVIDIA A100 Tensor Core GPU datasheet (2021), SXM column: FP32 19.5,
    // TF32 156, FP16/BF16 312 TFLOP/s, 2,039 GB/s HBM2e. No fp8. "NVIDIA A100
    // Tensor Core GPU Architecture" whitepaper: 108 SMs, 40 MB L2, up to 164 KB
    // shared memory per SM.
    makeSpec("A100-SXM-80GB", "sm_80", 19.5, 156, 312, 312, 0, 2039, 40, 108,
             164),
    // NVIDIA H100 Tensor Core GPU datasheet, SXM column: FP32 67, TF32 989,
    // FP16/BF16 1,979, FP8 3,958 TFLOP/s with sparsity; 3.35 TB/s HBM3.
    // "NVIDIA H100 Tensor Core GPU Architecture" whitepaper: 132 SMs, 50 MB L2,
    // 228 KB shared memory per SM.
    makeSpec("H100-SXM", "sm_90a", 67, 494.7, 989.4, 989.4, 1978.9, 3350, 50,
             132, 228),
    // NVIDIA H200 Tensor Core GPU datasheet, SXM column: the H100's GH100 die
    // and rates (FP32 67, TF32 989, BF16 1,979, FP8 3,958 with sparsity) with
    // 141 GB of HBM3e at 4.8 TB/s; SMs, L2 and shared memory as the H100.
    makeSpec("H200", "sm_90a", 67, 494.7, 989.4, 989.4, 1978.9, 4800, 50, 132,
             228),
    // NVIDIA L4 Tensor Core GPU datasheet: FP32 30.3, TF32 120, FP16/BF16 242,
    // FP8 485 TFLOP/s with sparsity; 300 GB/s GDDR6. "NVIDIA Ada GPU
    // Architecture" whitepaper: AD104 with 58 SMs and 48 MB L2; CUDA C++
    // Programming Guide, compute capability 8.9: 100 KB shared memory per SM.
    makeSpec("L4", "sm_89", 30.3, 60, 121, 121, 242.5, 300, 48, 58, 100),
    // NVIDIA HGX B200 datasheet (8 GPUs; per GPU = 1/8): FP32 600, TF32 18 P,
    // FP16/BF16 36 P, FP8 72 P FLOP/s with sparsity; 8 TB/s HBM3e per GPU.
    // 148 SMs (two dies); CUDA C++ Programming Guide, compute capability 10.0:
    // 228 KB shared memory per SM. The datasheet gives no L2 size; 126 MB is
    // what the CUDA runtime reports in public measurements: approximate.
    makeSpec("B200", "sm_100a", 75, 1125, 2250, 2250, 4500, 8000, 126, 148,
             228),
    // "NVIDIA Ada GPU Architecture" whitepaper, appendix table for GeForce RTX
    // 4090: FP32 82.6, TF32 82.6, FP16/BF16 165.2 (FP32 accumulate), FP8 330.3
    // (FP32 accumulate) TFLOP/s dense; 1,008 GB/s GDDR6X; 128 SMs, 72 MB L2;
    // 100 KB shared memory per SM (compute capability 8.9).
    makeSpec("RTX-4090", "sm_89", 82.6, 82.6, 165.2, 165.2, 330.3, 1008, 72,
             128, 100),
};

ArrayRef<GpuSpec> mlir::ridge::getBuiltinGpuSpecs() { return kBuiltinSpecs; }

std::optional<GpuSpec> mlir::ridge::lookupGpuSpec(StringRef name,
                                                  std::string &error) {
  for (const GpuSpec &spec : kBuiltinSpecs)
    if (StringRef(spec.name).equals_insensitive(name))
      return spec;
  error = "unknown GPU '" + name.str() + "'; known GPUs: ";
  llvm::ListSeparator separator(", ");
  for (const GpuSpec &spec : kBuiltinSpecs)
    error += (StringRef(separator) + spec.name).str();
  error += " (or describe one with --gpu-spec=FILE.json)";
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Spec files
//===----------------------------------------------------------------------===//

namespace {
/// Reads the fields of one spec object, remembering the first problem.
class SpecReader {
public:
  SpecReader(StringRef source, std::string &error)
      : source(source), error(error) {}

  /// A positive number at `key` of `object` (path `where` for messages);
  /// `required` fields must be present.
  std::optional<double> number(const llvm::json::Object &object, StringRef key,
                               StringRef where, bool required) {
    const llvm::json::Value *value = object.get(key);
    if (!value) {
      if (required)
        fail("missing required field '" + (where + key).str() + "'");
      return std::nullopt;
    }
    std::optional<double> number = value->getAsNumber();
    if (!number || *number < 0 || (required && *number == 0)) {
      fail("field '" + (where + key).str() + "' must be a " +
           (required ? "positive" : "non-negative") + " number");
      return std::nullopt;
    }
    return number;
  }

  void rejectUnknownKeys(const llvm::json::Object &object,
                         ArrayRef<StringRef> known, StringRef where) {
    for (const auto &entry : object)
      if (!llvm::is_contained(known, StringRef(entry.first)))
        fail("unknown field '" + (where + entry.first.str()).str() +
             "' (known: " + llvm::join(known, ", ") + ")");
  }

  void fail(const std::string &message) {
    if (error.empty())
      error = source.str() + ": " + message;
  }
  bool failed() const { return !error.empty(); }

private:
  StringRef source;
  std::string &error;
};
} // namespace

std::optional<GpuSpec> mlir::ridge::parseGpuSpecJson(StringRef text,
                                                     StringRef source,
                                                     std::string &error) {
  error.clear();
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json) {
    error = source.str() + ": not valid JSON: " + toString(json.takeError());
    return std::nullopt;
  }
  const llvm::json::Object *object = json->getAsObject();
  if (!object) {
    error = source.str() + ": expected a JSON object describing one GPU";
    return std::nullopt;
  }

  SpecReader reader(source, error);
  reader.rejectUnknownKeys(*object,
                           {"name", "memory_bandwidth_gb_s", "peak_tflops",
                            "l2_mb", "sm_count", "shared_memory_per_sm_kb",
                            "registers_per_sm", "chip", "source"},
                           "");
  GpuSpec spec;
  if (std::optional<StringRef> name = object->getString("name");
      name && !name->empty())
    spec.name = name->str();
  else
    reader.fail("missing required field 'name' (a non-empty string)");
  if (auto bandwidth =
          reader.number(*object, "memory_bandwidth_gb_s", "", true))
    spec.bandwidth = *bandwidth * kGiga;

  const llvm::json::Object *peaks = object->getObject("peak_tflops");
  if (!peaks) {
    reader.fail("missing required field 'peak_tflops' (an object with at "
                "least \"fp32\")");
  } else {
    reader.rejectUnknownKeys(*peaks, {"fp32", "tf32", "fp16", "bf16", "fp8"},
                             "peak_tflops.");
    auto rate = [&](StringRef key, bool required, double &field) {
      if (auto value = reader.number(*peaks, key, "peak_tflops.", required))
        field = *value * kTera;
    };
    rate("fp32", true, spec.fp32Flops);
    rate("tf32", false, spec.tf32Flops);
    rate("fp16", false, spec.fp16Flops);
    rate("bf16", false, spec.bf16Flops);
    rate("fp8", false, spec.fp8Flops);
  }
  if (auto l2 = reader.number(*object, "l2_mb", "", false))
    spec.l2Bytes = static_cast<int64_t>(*l2 * kMiB);
  if (auto sms = reader.number(*object, "sm_count", "", false))
    spec.smCount = static_cast<int64_t>(*sms);
  if (auto smem = reader.number(*object, "shared_memory_per_sm_kb", "", false))
    spec.sharedMemoryPerSm = static_cast<int64_t>(*smem * kKiB);
  if (auto registers = reader.number(*object, "registers_per_sm", "", false))
    spec.registersPerSm = static_cast<int64_t>(*registers);
  if (const llvm::json::Value *chip = object->get("chip")) {
    std::optional<StringRef> text = chip->getAsString();
    if (!text || !text->starts_with("sm_"))
      reader.fail("field 'chip' must be an architecture name such as "
                  "\"sm_90a\"");
    else
      spec.chip = text->str();
  }
  if (reader.failed())
    return std::nullopt;
  return spec;
}

std::optional<GpuSpec> mlir::ridge::readGpuSpecFile(StringRef path,
                                                    std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    error = path.str() +
            ": cannot read GPU spec file: " + buffer.getError().message();
    return std::nullopt;
  }
  return parseGpuSpecJson((*buffer)->getBuffer(), path, error);
}

std::optional<GpuSpec> mlir::ridge::resolveGpuSpec(StringRef name,
                                                   StringRef specFile,
                                                   std::string &error) {
  if (!specFile.empty())
    return readGpuSpecFile(specFile, error);
  return lookupGpuSpec(name.empty() ? StringRef(kDefaultGpuName) : name, error);
}
