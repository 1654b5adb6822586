//===- Compiler.h - Compiler driver for ridgec, ridge-run -------*- C++ -*-===//
//
// Tool glue, linked only by the tools: target options, the lowering of an
// imported graph module by the pipelines (Pipelines.h) plus the model ABI
// (ridge-emit-model-abi), the shared object (Target/HostObject.h) that the
// runtime (libridge_runtime) loads, and one-line tool diagnostics. GPU
// kernels are embedded in the shared object as PTX or cubin and launched
// through the runtime's CUDA driver layer.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_DRIVER_COMPILER_H
#define RIDGELINE_DRIVER_COMPILER_H

#include "ridgeline/Analysis/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include <functional>
#include <string>

namespace mlir::ridge {

struct OnnxImportOptions;

/// What a GPU model embeds of its kernels (--gpu-binary).
enum class GpuBinary {
  /// A cubin for the target chip beside the PTX when ptxas and fatbinary
  /// are found, the PTX alone otherwise.
  Auto,
  /// The PTX alone: the driver JIT-compiles it at every load.
  Ptx,
  /// A cubin beside the PTX; an error without ptxas and fatbinary.
  Fatbin,
};

/// Where a compiled model keeps its weights (--weights).
enum class WeightStorage {
  /// Beside the shared object when the ONNX model kept them as external data
  /// (kExternalDataAttr), inside it otherwise.
  Auto,
  /// Inside the shared object, as constant data.
  Embedded,
  /// In a weights file beside the shared object (ridge-externalize-weights).
  External,
};

struct CompileOptions {
  /// The chip to generate code for and the GPU the kernels are planned for,
  /// resolved once (resolveTarget); stored on the module as `ridge.target`.
  TargetSpec target;
  /// GPU kernel format: "isa" (PTX) or "bin" (cubin; needs ptxas).
  std::string gpuFormat = "isa";
  /// CUDA toolkit for ptxas; empty: $CUDA_HOME, then PATH.
  std::string cudaToolkit;
  int64_t blockSize = 256;
  /// Test only: GpuPipelineOptions::kernelTestPasses of the GPU build.
  std::function<void(OpPassManager &)> kernelTestPasses;
  /// Fuse memory-bound chains into kernels (the roofline-driven plan).
  bool fusion = true;
  /// Free the weight blobs once the LLVM module holds the weights; off when
  /// the context still has to compile another module that shares them.
  bool releaseWeights = true;
  WeightStorage weights = WeightStorage::Auto;
  /// What a GPU model embeds of its kernels (with gpuFormat "isa").
  GpuBinary gpuBinary = GpuBinary::Auto;
  /// The host CPU the shared object is compiled for (getHostCpuName): empty
  /// for the architecture's baseline, "native", or a CPU name.
  std::string hostCpu;
  /// The weights file's name (in the shared object's folder) when they are
  /// kept beside it; compileGraphModule sets it from `weights`. Empty: the
  /// weights are embedded.
  std::string weightsFile;
  /// Where the phases report their wall time (ridgec --mlir-timing): the
  /// import, each pass, LLVM IR translation, LLVM optimization, code
  /// generation and linking. Null: nothing is timed.
  TimingScope *timing = nullptr;

  bool isGpu() const { return target.isGpu(); }
};

/// The target options every tool shares: `--target`, `--gpu`, `--gpu-spec`
/// and `--precision`, registered in the tool's option category.
struct TargetCLOptions {
  explicit TargetCLOptions(llvm::cl::OptionCategory &category);

  llvm::cl::opt<std::string> chip;
  llvm::cl::opt<std::string> gpu;
  llvm::cl::opt<std::string> gpuSpec;
  llvm::cl::opt<std::string> precision;

  /// Resolves the options (resolveTarget); warnings (a chip that is not the
  /// GPU's) are printed as "TOOL: warning: ...".
  FailureOr<TargetSpec> resolve(StringRef toolName, std::string &error) const;
};

/// The import options every tool shares: `--max-tensor-bytes`.
struct ImportCLOptions {
  explicit ImportCLOptions(llvm::cl::OptionCategory &category);

  llvm::cl::opt<int64_t> maxTensorBytes;

  /// Copies the options into `options`; fails with `error` on a bad value.
  LogicalResult apply(OnnxImportOptions &options, std::string &error) const;
};

/// The artifact options every compiling tool shares: `--weights` and
/// `--host-cpu`.
struct ArtifactCLOptions {
  explicit ArtifactCLOptions(llvm::cl::OptionCategory &category);

  llvm::cl::opt<WeightStorage> weights;
  llvm::cl::opt<std::string> hostCpu;
  llvm::cl::opt<GpuBinary> gpuBinary;

  void apply(CompileOptions &options) const {
    options.weights = weights;
    options.hostCpu = hostCpu;
    options.gpuBinary = gpuBinary;
  }
};

/// The weights file kept beside the shared object `outputPath`: its name
/// with the extension replaced by ".weights" ("model.so" ->
/// "model.weights").
std::string getWeightsFileName(StringRef outputPath);

/// How far lowerGraphModule goes.
/// Linalg: linalg on tensors. DeviceMemoryPlan (GPU targets): the host code
/// once ridge-plan-device-memory has planned it, kernels not yet lowered.
/// LLVMDialect: the complete LLVM dialect module.
enum class LoweringStage { Linalg, DeviceMemoryPlan, LLVMDialect };

/// Runs the shared graph pipeline, then (LLVMDialect) the target's back end,
/// ridge-externalize-weights when `options.weightsFile` is set, and
/// ridge-emit-model-abi.
LogicalResult lowerGraphModule(ModuleOp module, const CompileOptions &options,
                               LoweringStage stage);

/// Prints each diagnostic as one line, "TOOL: error: FILE: message", with
/// the model file and (through the message) the ONNX node it concerns.
class ToolDiagnosticHandler : public ScopedDiagnosticHandler {
public:
  ToolDiagnosticHandler(MLIRContext *context, StringRef toolName);
  unsigned getNumErrors() const { return numErrors; }

private:
  std::string toolName;
  unsigned numErrors = 0;
};

/// Lowers a graph module whose model ABI is attached (attachModelAbi) for
/// `options.target` and writes the shared object to `outputPath`, and the
/// weights file beside it when `options.weights` keeps them there.
LogicalResult compileGraphModule(ModuleOp module, const CompileOptions &options,
                                 StringRef outputPath);

/// Imports `modelPath`, lowers it for `options.target` and writes the shared
/// object to `outputPath`. Problems are reported through the context.
LogicalResult compileModelFile(MLIRContext &context, StringRef modelPath,
                               const OnnxImportOptions &importOptions,
                               const CompileOptions &options,
                               StringRef outputPath);

} // namespace mlir::ridge

#endif // RIDGELINE_DRIVER_COMPILER_H
