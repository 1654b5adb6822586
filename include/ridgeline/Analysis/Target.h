//===- Target.h - The one target a compilation is for -----------*- C++ -*-===//
//
// A compilation is for one target: the chip the code is generated for
// ("cpu", "sm_80", "sm_90a", ...), the GPU whose machine model drives the
// decisions (the fusion plan, kernel configurations, the roofline report) and
// the number format of contractions. The driver resolves it once from
// `--target`, `--gpu`, `--gpu-spec` and `--precision`; `ridge-attach-target`
// stores it on the module as the `ridge.target` dictionary, and every pass
// that needs a target fact reads it from there (as Triton's passes read
// `triton_gpu.num-warps` and the compute capability from the module).
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_ANALYSIS_TARGET_H
#define RIDGELINE_ANALYSIS_TARGET_H

#include "ridgeline/Analysis/GpuSpec.h"
#include "ridgeline/Analysis/Roofline.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>

namespace mlir::ridge {

/// Module attribute holding the target (see buildTargetAttr).
inline constexpr llvm::StringLiteral kTargetAttr = "ridge.target";

/// The chip of a module that names none (ridge-opt input without a target).
inline constexpr llvm::StringLiteral kDefaultChip = "sm_90a";

struct TargetSpec {
  /// "cpu" or an NVIDIA architecture ("sm_80", "sm_90a").
  std::string chip = "cpu";
  /// The GPU whose machine model drives fusion, kernel configuration and
  /// the roofline. A CPU compilation still plans its kernels for one (the
  /// CPU path is the numerics oracle of the GPU plan).
  GpuSpec gpu;
  /// The number format the kernels are planned for: the tensor-core peak of
  /// contractions in the roofline (fusion plan, kernel configurations, the
  /// report). `--precision`, default bf16 for every target, so that a CPU
  /// build plans the same kernels as the GPU build it is the oracle of.
  Precision precision = Precision::BF16;
  /// The number format contractions compute in where the precision policy
  /// (PrecisionPolicy.h) finds that it pays: `--precision` when given,
  /// otherwise bf16 for a GPU chip and fp32 for the CPU (the CPU's default
  /// numerics are fp32; `--target=cpu --precision=bf16` rounds exactly where
  /// the GPU build with the same `--gpu` does).
  Precision numerics = Precision::BF16;

  bool isGpu() const { return chip != "cpu"; }
};

/// What a tool's options ask for; empty fields take their defaults.
struct TargetRequest {
  std::string chip;
  std::string gpu;
  std::string gpuSpecFile;
  std::string precision;
};

/// Whether `chip` is a target Ridgeline generates code for.
bool isKnownChip(StringRef chip);
/// "cpu, sm_80, ..." for messages.
std::string getKnownChipList();

/// The built-in GPU a chip stands for when no `--gpu` is given: the A100 for
/// sm_8x, the B200 for sm_100, the H100 otherwise (and for "cpu").
StringRef getDefaultGpuName(StringRef chip);

/// Resolves a request: the chip (default "cpu"), the GPU (`gpuSpecFile`,
/// else `gpu`, else the chip's default), the precision (default bf16) and the
/// numerics (the precision when given; else bf16 on a GPU chip, fp32 on the
/// CPU). Fails with `error` on an unknown chip, GPU or precision, an
/// unreadable spec file, fp8 for a chip without fp8 tensor cores (before
/// sm_89), or a precision the GPU has no tensor cores for. A chip that
/// differs from the GPU's own architecture (sm_80 code planned for an H200)
/// is legal and adds a line to `warnings`.
FailureOr<TargetSpec> resolveTarget(const TargetRequest &request,
                                    std::string &error,
                                    SmallVectorImpl<std::string> *warnings);

/// The target as the `ridge.target` dictionary: chip, gpu, numerics,
/// precision, sm_count, smem_per_sm (bytes), registers_per_sm, l2_bytes,
/// bandwidth (bytes/s) and peak_flops {fp32, tf32, fp16, bf16, fp8} (FLOP/s).
DictionaryAttr buildTargetAttr(MLIRContext *context, const TargetSpec &target);
/// Reads a `ridge.target` dictionary back; `error` names a missing or
/// mistyped field. A dictionary without `numerics` computes in its
/// `precision`.
FailureOr<TargetSpec> parseTargetAttr(DictionaryAttr attr, std::string &error);

/// Stores `target` on `module` as its `ridge.target`.
void setModuleTarget(Operation *module, const TargetSpec &target);

/// The target of the module enclosing `op` (or `op` itself), with the
/// override options of a pass (lit tests) applied: a non-empty `gpu` or
/// `gpuSpecFile` replaces the GPU, a non-empty `precision` the precision and
/// the numerics. A
/// module without `ridge.target` gets the default target of kDefaultChip.
/// Errors are emitted at the module.
FailureOr<TargetSpec> getTargetForPass(Operation *op, StringRef gpu = "",
                                       StringRef gpuSpecFile = "",
                                       StringRef precision = "");

/// The roofline of getTargetForPass's target: the GPU at its precision.
FailureOr<RooflineModel> getRooflineForPass(Operation *op, StringRef gpu = "",
                                            StringRef gpuSpecFile = "",
                                            StringRef precision = "");

/// Whether the code generator can compute contractions in `numerics`:
/// fp32, tf32, bf16 and fp16 (operands rounded in the contraction's body);
/// fp8 (per-tensor scaled e4m3) on the CPU and sm_90a (wgmma); another GPU
/// target at fp8 describes kernels in the roofline report only. Fails with
/// an `error` naming `--precision`.
LogicalResult checkCodegenNumerics(const TargetSpec &target,
                                   std::string &error);

} // namespace mlir::ridge

#endif // RIDGELINE_ANALYSIS_TARGET_H
