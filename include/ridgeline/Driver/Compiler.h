//===- Compiler.h - From an imported graph module to an artifact --*- C++
//-*-===//
//
// The library behind ridgec and ridge-run: runs the pipelines on an imported
// module, translates to LLVM IR and produces a shared object that the
// runtime (libridge_runtime) loads. GPU kernels are embedded in it as PTX or
// cubin and launched through the runtime's CUDA driver layer.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_DRIVER_COMPILER_H
#define RIDGELINE_DRIVER_COMPILER_H

#include "ridgeline/Analysis/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/Support/CommandLine.h"
#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace mlir::ridge {

struct CompileOptions {
  /// The chip to generate code for and the GPU the kernels are planned for,
  /// resolved once (resolveTarget); stored on the module as `ridge.target`.
  TargetSpec target;
  /// GPU kernel format: "isa" (PTX) or "bin" (cubin; needs ptxas).
  std::string gpuFormat = "isa";
  /// CUDA toolkit for ptxas; empty: $CUDA_HOME, then PATH.
  std::string cudaToolkit;
  int64_t blockSize = 256;
  /// Fuse memory-bound chains into kernels (the roofline-driven plan).
  bool fusion = true;
  /// Free the weight blobs once the LLVM module holds the weights; off when
  /// the context still has to compile another module that shares them.
  bool releaseWeights = true;

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

/// How far lowerGraphModule goes.
enum class LoweringStage { Linalg, LLVMDialect };

/// Every dialect, interface and translation the pipelines need. Missing
/// registrations crash rather than diagnose with Debian's MLIR (notes, P5).
void registerCompilerDialects(DialectRegistry &registry);

/// Runs the shared graph pipeline, then the target's back end.
LogicalResult lowerGraphModule(ModuleOp module, const CompileOptions &options,
                               LoweringStage stage);

/// Translates a module lowered to the LLVM dialect (with gpu.binary ops for
/// GPU targets) to LLVM IR for the host.
std::unique_ptr<llvm::Module> translateToLLVMIR(ModuleOp module,
                                                llvm::LLVMContext &context);

/// Optimizes `module` for the host, emits an object file and links it into a
/// shared library at `outputPath` with the system C compiler driver.
LogicalResult emitSharedLibrary(llvm::Module &module, StringRef outputPath,
                                std::string &error);

/// Kernel objects of a GPU-lowered module: (gpu.binary name, payload). The
/// payload is PTX text for format "isa" and a cubin for "bin".
SmallVector<std::pair<std::string, std::string>>
getKernelObjects(ModuleOp module);

} // namespace mlir::ridge

#include "mlir/IR/Diagnostics.h"
#include "ridgeline/Import/OnnxImporter.h"

namespace mlir::ridge {

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
/// `options.target` and writes the shared object to `outputPath`.
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
