//===- Compiler.cpp - The compiler driver behind ridgec and ridge-run -----===//
//
// Tool glue: target options, the lowering pipelines plus the model ABI, the
// host shared object, tool diagnostics and import + compile.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Driver/Compiler.h"

#include "ridgeline/Dialect/Ridge/Transforms/Passes.h"
#include "ridgeline/Import/OnnxImporter.h"
#include "ridgeline/Pipelines/Pipelines.h"
#include "ridgeline/Target/HostObject.h"
#include "ridgeline/Target/Passes.h"
#include "ridgeline/Target/WeightsFile.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::ridge;

TargetCLOptions::TargetCLOptions(llvm::cl::OptionCategory &category)
    : chip("target",
           llvm::cl::desc("Code-generation target: cpu (default), sm_80, "
                          "sm_86, sm_89, sm_90, sm_90a, sm_100, sm_100a"),
           llvm::cl::init("cpu"), llvm::cl::cat(category)),
      gpu("gpu",
          llvm::cl::desc("GPU the kernels are planned for and the report "
                         "describes (default: the target's, A100-SXM-80GB "
                         "for sm_8x, H100-SXM otherwise; --list-gpus)"),
          llvm::cl::value_desc("name"), llvm::cl::init(""),
          llvm::cl::cat(category)),
      gpuSpec("gpu-spec",
              llvm::cl::desc("JSON file describing that GPU (see "
                             "docs/roofline.md); overrides --gpu"),
              llvm::cl::value_desc("file"), llvm::cl::init(""),
              llvm::cl::cat(category)),
      precision("precision",
                llvm::cl::desc("Number format of compute-bound contractions "
                               "(docs/precision.md): fp32 (SIMT), fp16 or "
                               "bf16 (the default of GPU targets; the CPU "
                               "computes in fp32 unless given one), tf32 "
                               "(mma.sync m16n8k8); fp8 (e4m3 with per-tensor "
                               "scales: the CPU and sm_90a)"),
                llvm::cl::init(""), llvm::cl::cat(category)) {}

ImportCLOptions::ImportCLOptions(llvm::cl::OptionCategory &category)
    : maxTensorBytes(
          "max-tensor-bytes",
          llvm::cl::desc("Largest tensor (graph input, weight or node result) "
                         "accepted, in bytes; larger ones are errors naming "
                         "the ONNX tensor (default 2^36, 64 GiB)"),
          llvm::cl::value_desc("bytes"), llvm::cl::init(kDefaultMaxTensorBytes),
          llvm::cl::cat(category)) {}

ArtifactCLOptions::ArtifactCLOptions(llvm::cl::OptionCategory &category)
    : weights(
          "weights",
          llvm::cl::desc("Where the compiled model keeps its weights"),
          llvm::cl::values(
              clEnumValN(WeightStorage::Auto, "auto",
                         "beside the shared object when the ONNX model keeps "
                         "them as external data, inside it otherwise "
                         "(default)"),
              clEnumValN(WeightStorage::Embedded, "embed",
                         "inside the shared object"),
              clEnumValN(WeightStorage::External, "external",
                         "in OUTPUT.weights beside the shared object, read "
                         "when the runtime loads it")),
          llvm::cl::init(WeightStorage::Auto), llvm::cl::cat(category)),
      hostCpu("host-cpu",
              llvm::cl::desc("CPU the shared object's host code is compiled "
                             "for: native (this machine's), a name such as "
                             "x86-64-v3 or znver4, or (default) the "
                             "architecture's baseline, x86-64-v2"),
              llvm::cl::value_desc("cpu"), llvm::cl::init(""),
              llvm::cl::cat(category)),
      gpuBinary(
          "gpu-binary",
          llvm::cl::desc("What a GPU model embeds of its kernels"),
          llvm::cl::values(
              clEnumValN(GpuBinary::Auto, "auto",
                         "a cubin for the target chip beside the PTX when "
                         "ptxas and fatbinary are found, the PTX alone "
                         "otherwise (default)"),
              clEnumValN(GpuBinary::Ptx, "ptx",
                         "the PTX alone, JIT-compiled by the driver at load"),
              clEnumValN(GpuBinary::Fatbin, "fatbin",
                         "a cubin beside the PTX (needs ptxas and "
                         "fatbinary)")),
          llvm::cl::init(GpuBinary::Auto), llvm::cl::cat(category)) {}

std::string mlir::ridge::getWeightsFileName(StringRef outputPath) {
  SmallString<128> name(llvm::sys::path::filename(outputPath));
  llvm::sys::path::replace_extension(name, "weights");
  return std::string(name);
}

LogicalResult ImportCLOptions::apply(OnnxImportOptions &options,
                                     std::string &error) const {
  if (maxTensorBytes <= 0) {
    error = "--max-tensor-bytes must be positive, got " +
            std::to_string(maxTensorBytes);
    return failure();
  }
  options.maxTensorBytes = maxTensorBytes;
  return success();
}

FailureOr<TargetSpec> TargetCLOptions::resolve(StringRef toolName,
                                               std::string &error) const {
  if (!precision.empty() && !parsePrecision(precision)) {
    error = "unknown --precision '" + precision +
            "'; expected fp32, tf32, fp16, bf16 or fp8";
    return failure();
  }
  TargetRequest request;
  request.chip = chip;
  request.gpu = gpu;
  request.gpuSpecFile = gpuSpec;
  request.precision = precision;
  SmallVector<std::string> warnings;
  FailureOr<TargetSpec> target = resolveTarget(request, error, &warnings);
  for (const std::string &warning : warnings)
    llvm::errs() << toolName << ": warning: " << warning << "\n";
  return target;
}

LogicalResult mlir::ridge::lowerGraphModule(ModuleOp module,
                                            const CompileOptions &options,
                                            LoweringStage stage) {
  // fp8 kernels are built for sm_90a only; fp8 describes others' in the
  // report.
  std::string error;
  if (failed(checkCodegenNumerics(options.target, error)))
    return emitError(module->getLoc(), error);
  // The target is resolved by the tool; every pass reads it from here.
  setModuleTarget(module, options.target);
  PassManager pm(module.getContext());
  // The tools' --mlir-* pass manager options (IR printing, crash
  // reproducers), where the tool registered them.
  (void)applyPassManagerCLOptions(pm);
  TimingScope passTime;
  if (options.timing) {
    passTime = options.timing->nest("MLIR passes");
    pm.enableTiming(passTime);
  }
  GraphToLinalgOptions graph;
  graph.fusion = options.fusion;
  buildGraphToLinalgPipeline(pm, graph);
  if (stage == LoweringStage::DeviceMemoryPlan && !options.isGpu())
    return emitError(module->getLoc(),
                     "a device memory plan needs a GPU target");
  if (stage != LoweringStage::Linalg) {
    if (options.isGpu()) {
      GpuPipelineOptions gpu;
      gpu.chip = options.target.chip;
      gpu.format = options.gpuFormat;
      gpu.toolkit = options.cudaToolkit;
      gpu.blockSize = options.blockSize;
      gpu.kernelTestPasses = options.kernelTestPasses;
      gpu.stopAfterDeviceMemoryPlan = stage == LoweringStage::DeviceMemoryPlan;
      buildGpuLoweringPipeline(pm, gpu);
      if (stage == LoweringStage::DeviceMemoryPlan)
        return pm.run(module);
      // A cubin beside the PTX, so that loading needs no JIT compilation.
      if (options.gpuFormat == "isa" && options.gpuBinary != GpuBinary::Ptx)
        pm.addPass(createBuildFatbinsPass(
            {options.cudaToolkit, options.gpuBinary == GpuBinary::Fatbin}));
    } else {
      buildCpuLoweringPipeline(pm);
    }
    // The weights file's layout, then the model's C entry points and
    // descriptor (Target), after either back end.
    if (!options.weightsFile.empty())
      pm.addPass(createExternalizeWeightsPass({options.weightsFile}));
    pm.addPass(createEmitModelAbiPass());
  }
  return pm.run(module);
}

//===----------------------------------------------------------------------===//
// Tool support
//===----------------------------------------------------------------------===//

/// The file part of a location, looking through name locations.
static std::string getFileOf(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    std::string text = file.getFilename().str();
    if (file.getLine() != 0)
      text += ":" + std::to_string(file.getLine()) + ":" +
              std::to_string(file.getColumn());
    return text;
  }
  if (auto name = dyn_cast<NameLoc>(loc))
    return getFileOf(name.getChildLoc());
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string text = getFileOf(inner); !text.empty())
        return text;
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return getFileOf(callSite.getCallee());
  return {};
}

/// The ONNX node a location names, if any.
static std::string getNodeOf(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string text = getNodeOf(inner); !text.empty())
        return text;
  return {};
}

ToolDiagnosticHandler::ToolDiagnosticHandler(MLIRContext *context,
                                             StringRef toolName)
    : ScopedDiagnosticHandler(context), toolName(toolName) {
  setHandler([this](Diagnostic &diag) {
    llvm::raw_ostream &os = llvm::errs();
    os << this->toolName << ": ";
    switch (diag.getSeverity()) {
    case DiagnosticSeverity::Error:
      ++numErrors;
      os << "error: ";
      break;
    case DiagnosticSeverity::Warning:
      os << "warning: ";
      break;
    case DiagnosticSeverity::Note:
      os << "note: ";
      break;
    case DiagnosticSeverity::Remark:
      os << "remark: ";
      break;
    }
    std::string file = getFileOf(diag.getLocation());
    if (!file.empty())
      os << file << ": ";
    std::string message = diag.str();
    std::string node = getNodeOf(diag.getLocation());
    // Importer messages already name their node; others (verifier, lowering)
    // get it added.
    if (!node.empty() && message.find("'" + node + "'") == std::string::npos)
      os << "node '" << node << "': ";
    os << message << "\n";
    for (Diagnostic &note : diag.getNotes()) {
      // The failing op's full IR is for ridge-opt users, not for one-line
      // tool diagnostics.
      std::string text = note.str();
      if (StringRef(text).starts_with("see current operation"))
        continue;
      os << "  note: " << text << "\n";
    }
    return success();
  });
}

/// Frees the weight blobs the module refers to. Once the LLVM module holds its
/// own copy of every weight, keeping the blobs alive through code generation
/// (which makes a third copy, the object file's sections) only raises the
/// compiler's peak memory.
static void releaseWeightBlobs(ModuleOp module) {
  module->walk([](Operation *op) {
    for (NamedAttribute attr : op->getAttrs())
      if (auto weights = dyn_cast<DenseResourceElementsAttr>(attr.getValue()))
        if (auto *entry = weights.getRawHandle().getResource())
          entry->setBlob(AsmResourceBlob());
  });
}

LogicalResult
mlir::ridge::compileModelFile(MLIRContext &context, StringRef modelPath,
                              const OnnxImportOptions &importOptions,
                              const CompileOptions &options,
                              StringRef outputPath) {
  TimingScope importTime;
  if (options.timing)
    importTime = options.timing->nest("ONNX import");
  OwningOpRef<ModuleOp> module =
      importOnnxFile(&context, modelPath, importOptions);
  importTime.stop();
  if (!module || failed(attachModelAbi(*module, options.target.chip)))
    return failure();
  return compileGraphModule(*module, options, outputPath);
}

/// Writes the weights file that ridge-externalize-weights described next to
/// the shared object `outputPath`, then drops the description: from here on
/// the descriptor holds it.
static LogicalResult writeExternalWeights(ModuleOp module, StringRef outputPath,
                                          bool releaseBlobs) {
  FailureOr<std::optional<ExternalWeights>> weights =
      readExternalWeights(module);
  if (failed(weights))
    return failure();
  if (!*weights)
    return success();
  SmallString<256> path(llvm::sys::path::parent_path(outputPath));
  llvm::sys::path::append(path, (*weights)->file);
  std::string error;
  if (failed(writeWeightsFile(**weights, path, error)))
    return emitError(module->getLoc(), error);
  // The file has the bytes; code generation no longer needs them.
  if (releaseBlobs)
    for (Attribute entry :
         module->getAttrOfType<DictionaryAttr>(kExternalWeightsAttr)
             .getAs<ArrayAttr>("weights"))
      if (auto data =
              cast<DictionaryAttr>(entry).getAs<DenseResourceElementsAttr>(
                  "data"))
        if (auto *resource = data.getRawHandle().getResource())
          resource->setBlob(AsmResourceBlob());
  module->removeAttr(kExternalWeightsAttr);
  return success();
}

LogicalResult mlir::ridge::compileGraphModule(ModuleOp module,
                                              const CompileOptions &options,
                                              StringRef outputPath) {
  CompileOptions resolved = options;
  bool external = options.weights == WeightStorage::External ||
                  (options.weights == WeightStorage::Auto &&
                   module->hasAttr(kExternalDataAttr));
  resolved.weightsFile = external ? getWeightsFileName(outputPath) : "";
  if (failed(lowerGraphModule(module, resolved, LoweringStage::LLVMDialect)))
    return failure();
  if (external &&
      failed(writeExternalWeights(module, outputPath, options.releaseWeights)))
    return failure();
  TimingScope noTiming;
  TimingScope &timing = options.timing ? *options.timing : noTiming;
  llvm::LLVMContext llvmContext;
  TimingScope translateTime = timing.nest("translation to LLVM IR");
  std::unique_ptr<llvm::Module> llvmModule =
      translateToLLVMIR(module, llvmContext);
  translateTime.stop();
  if (!llvmModule)
    return emitError(module->getLoc(), "translation to LLVM IR failed");
  if (options.releaseWeights)
    releaseWeightBlobs(module);
  std::string error;
  if (failed(emitSharedLibrary(*llvmModule, outputPath, options.hostCpu, error,
                               timing)))
    return emitError(module->getLoc(), error);
  return success();
}
