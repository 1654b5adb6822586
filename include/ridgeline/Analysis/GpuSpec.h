//===- GpuSpec.h - Machine model of a GPU for the roofline ------*- C++ -*-===//
//
// The few numbers of a GPU that a roofline needs: peak arithmetic rates per
// number format, device-memory bandwidth, and the on-chip capacities that
// fusion decisions consult. Ridgeline ships the specs of common datacenter and
// desktop GPUs and reads any other chip from a small JSON file.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_ANALYSIS_GPUSPEC_H
#define RIDGELINE_ANALYSIS_GPUSPEC_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir::ridge {

/// The number format matrix multiply-adds run in. `FP32` means CUDA cores
/// (SIMT FMA); the others mean tensor cores with fp32 accumulation.
enum class Precision { FP32, TF32, FP16, BF16, FP8 };

StringRef stringifyPrecision(Precision precision);
std::optional<Precision> parsePrecision(StringRef text);

/// Peak rates are dense (no 2:4 sparsity) at boost clock, counting a fused
/// multiply-add as 2 FLOPs; tensor-core rates are for fp32 accumulation. A
/// rate of 0 means the chip has no such unit.
struct GpuSpec {
  std::string name;
  /// FLOP/s of fp32 FMAs on the CUDA cores.
  double fp32Flops = 0;
  /// FLOP/s of tensor-core multiply-adds, per input format.
  double tf32Flops = 0;
  double fp16Flops = 0;
  double bf16Flops = 0;
  double fp8Flops = 0;
  /// Device-memory (HBM/GDDR) bandwidth in bytes/s.
  double bandwidth = 0;
  int64_t l2Bytes = 0;
  int64_t smCount = 0;
  /// Shared memory a block can use per SM, in bytes.
  int64_t sharedMemoryPerSm = 0;
  /// 32-bit registers per SM (65,536 on every chip since sm_50).
  int64_t registersPerSm = 65536;
  /// The chip's own architecture ("sm_90a"); empty when a spec file does not
  /// say. Used to warn when code is generated for another one.
  std::string chip;

  /// Peak FLOP/s of matrix multiply-adds in `precision`; 0 when the chip has
  /// no tensor cores for it.
  double getMatrixFlops(Precision precision) const;
};

/// The built-in specs, in a fixed order.
ArrayRef<GpuSpec> getBuiltinGpuSpecs();

/// The built-in spec called `name` (case-insensitive). On failure `error`
/// lists the known names.
std::optional<GpuSpec> lookupGpuSpec(StringRef name, std::string &error);

/// Parses a spec from JSON text; `source` names it in errors. The format, in
/// datasheet units:
///   {"name": "MyGPU", "memory_bandwidth_gb_s": 3350,
///    "peak_tflops": {"fp32": 67, "tf32": 494.7, "fp16": 989.4,
///                    "bf16": 989.4, "fp8": 1978.9},
///    "l2_mb": 50, "sm_count": 132, "shared_memory_per_sm_kb": 228,
///    "registers_per_sm": 65536, "chip": "sm_90a"}
/// `name`, `memory_bandwidth_gb_s` and `peak_tflops.fp32` are required;
/// unknown keys are errors, so that a misspelt field is not silently dropped.
std::optional<GpuSpec> parseGpuSpecJson(StringRef text, StringRef source,
                                        std::string &error);

/// Reads and parses the spec file at `path`.
std::optional<GpuSpec> readGpuSpecFile(StringRef path, std::string &error);

/// The spec a tool's `--gpu=NAME` / `--gpu-spec=FILE` options select: the
/// file when given, else the named built-in, else kDefaultGpuName.
std::optional<GpuSpec> resolveGpuSpec(StringRef name, StringRef specFile,
                                      std::string &error);

/// The GPU of a module or tool that names neither a GPU nor a chip that
/// implies one (Target.h, getDefaultGpuName).
inline constexpr llvm::StringLiteral kDefaultGpuName = "H100-SXM";

} // namespace mlir::ridge

#endif // RIDGELINE_ANALYSIS_GPUSPEC_H
