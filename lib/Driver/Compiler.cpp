//===- Compiler.cpp - From an imported graph module to an artifact --------===//

#include "ridgeline/Driver/Compiler.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include "ridgeline/Dialect/Ridge/IR/Ridge.h"
#include "ridgeline/Import/OnnxImporter.h"
#include "ridgeline/Pipelines/Pipelines.h"
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

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
                llvm::cl::desc("Number format of contractions: fp32 (SIMT), "
                               "tf32, fp16, bf16 (default) or fp8"),
                llvm::cl::init(""), llvm::cl::cat(category)) {}

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

void mlir::ridge::registerCompilerDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registry.insert<RidgeDialect>();
}

LogicalResult mlir::ridge::lowerGraphModule(ModuleOp module,
                                            const CompileOptions &options,
                                            LoweringStage stage) {
  // The target is resolved by the tool; every pass reads it from here.
  setModuleTarget(module, options.target);
  PassManager pm(module.getContext());
  GraphToLinalgOptions graph;
  graph.fusion = options.fusion;
  buildGraphToLinalgPipeline(pm, graph);
  if (stage == LoweringStage::LLVMDialect) {
    if (options.isGpu()) {
      GpuPipelineOptions gpu;
      gpu.chip = options.target.chip;
      gpu.format = options.gpuFormat;
      gpu.toolkit = options.cudaToolkit;
      gpu.blockSize = options.blockSize;
      buildGpuLoweringPipeline(pm, gpu);
    } else {
      buildCpuLoweringPipeline(pm);
    }
  }
  return pm.run(module);
}

std::unique_ptr<llvm::Module>
mlir::ridge::translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context) {
  return translateModuleToLLVMIR(module, context, "ridgeline-model");
}

/// Finds a C compiler driver to link the shared object with.
static std::string findLinkerDriver() {
  for (const char *name : {"cc", "gcc", "clang", "clang-22", "c++", "g++"})
    if (auto path = llvm::sys::findProgramByName(name))
      return *path;
  return {};
}

LogicalResult mlir::ridge::emitSharedLibrary(llvm::Module &module,
                                             StringRef outputPath,
                                             std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return failure();
  llvm::TargetOptions targetOptions;
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(triple, llvm::sys::getHostCPUName(), "",
                                  targetOptions, llvm::Reloc::PIC_));
  module.setTargetTriple(triple);
  module.setDataLayout(machine->createDataLayout());

  auto optimize =
      makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0, machine.get());
  if (llvm::Error err = optimize(&module)) {
    error = "LLVM optimization failed: " + llvm::toString(std::move(err));
    return failure();
  }

  llvm::SmallString<128> objectPath;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("ridge-model", "o", objectPath)) {
    error = "cannot create a temporary object file: " + ec.message();
    return failure();
  }
  llvm::FileRemover removeObject(objectPath);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objectPath, ec, llvm::sys::fs::OF_None);
    if (ec) {
      error = "cannot write '" + objectPath.str().str() + "': " + ec.message();
      return failure();
    }
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                     llvm::CodeGenFileType::ObjectFile)) {
      error = "the host target cannot emit object files";
      return failure();
    }
    codegen.run(module);
  }

  std::string driver = findLinkerDriver();
  if (driver.empty()) {
    error = "no C compiler driver (cc, gcc, clang) found to link the shared "
            "object; install gcc or clang";
    return failure();
  }
  std::string out = outputPath.str();
  SmallVector<StringRef> args{driver, "-shared", "-o", out, objectPath, "-lm"};
  std::string message;
  int status =
      llvm::sys::ExecuteAndWait(driver, args, std::nullopt, {}, 0, 0, &message);
  if (status != 0) {
    error = "linking '" + out + "' with " + driver + " failed" +
            (message.empty() ? "" : ": " + message);
    return failure();
  }
  return success();
}

SmallVector<std::pair<std::string, std::string>>
mlir::ridge::getKernelObjects(ModuleOp module) {
  SmallVector<std::pair<std::string, std::string>> objects;
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      objects.emplace_back(binary.getName().str(),
                           object.getObject().getValue().str());
    }
  });
  return objects;
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
  OwningOpRef<ModuleOp> module =
      importOnnxFile(&context, modelPath, importOptions);
  if (!module || failed(attachModelAbi(*module, options.target.chip)))
    return failure();
  return compileGraphModule(*module, options, outputPath);
}

LogicalResult mlir::ridge::compileGraphModule(ModuleOp module,
                                              const CompileOptions &options,
                                              StringRef outputPath) {
  if (failed(lowerGraphModule(module, options, LoweringStage::LLVMDialect)))
    return failure();
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateToLLVMIR(module, llvmContext);
  if (!llvmModule)
    return emitError(module->getLoc(), "translation to LLVM IR failed");
  if (options.releaseWeights)
    releaseWeightBlobs(module);
  std::string error;
  if (failed(emitSharedLibrary(*llvmModule, outputPath, error)))
    return emitError(module->getLoc(), error);
  return success();
}
