//===- ridgec.cpp - Ridgeline's ahead-of-time model compiler --------------===//
//
//   ridgec MODEL.onnx --target=cpu|sm_80|sm_90a [-o OUT]
//   ridgec MODEL.onnx --emit=graph|linalg|llvm|ptx|cubin [-o OUT|-]
//   ridgec MODEL.onnx --report[=json] [-o OUT]
//   ridgec --list-gpus
// Every mode takes the target options --target, --gpu (or --gpu-spec) and
// --precision, resolved once: the report describes the kernels that the same
// options build.
//
// Without --emit, ridgec writes a shared object that libridge_runtime loads
// (ridge-run, or any application embedding the runtime).
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Analysis/RooflineReport.h"
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h"
#include "ridgeline/Driver/Compiler.h"
#include "ridgeline/Driver/EmulatorReport.h"
#include "ridgeline/Import/OnnxImporter.h"
#include "ridgeline/Pipelines/Pipelines.h"
#include "ridgeline/Target/HostObject.h"
#include "ridgeline/Target/KernelObjects.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
using namespace mlir::ridge;
namespace cl = llvm::cl;

static cl::OptionCategory category("ridgec options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.onnx>"),
                                      cl::Optional, cl::cat(category));
static cl::opt<std::string> outputFile(
    "o",
    cl::desc("Output file ('-' for stdout). Default: MODEL.TARGET.so, or "
             "stdout for textual --emit stages"),
    cl::value_desc("file"), cl::init(""), cl::cat(category));
static TargetCLOptions targetOptions(category);
static ImportCLOptions importCLOptions(category);
static ArtifactCLOptions artifactOptions(category);

enum class Emit { SharedObject, Graph, Linalg, LLVM, Ptx, Cubin };
static cl::opt<Emit> emit(
    "emit", cl::desc("Print one stage instead of writing a shared object"),
    cl::values(clEnumValN(Emit::Graph, "graph", "the imported ridge graph"),
               clEnumValN(Emit::Linalg, "linalg", "linalg on tensors"),
               clEnumValN(Emit::LLVM, "llvm", "host LLVM IR"),
               clEnumValN(Emit::Ptx, "ptx", "PTX of the GPU kernels"),
               clEnumValN(Emit::Cubin, "cubin",
                          "cubin of the GPU kernels (needs ptxas)"),
               clEnumValN(Emit::SharedObject, "so",
                          "the model as a shared object (default)")),
    cl::init(Emit::SharedObject), cl::cat(category));
static cl::list<std::string>
    shapes("shape",
           cl::desc("Static shape of a graph input, e.g. --shape "
                    "input_ids=1x128 (repeatable)"),
           cl::value_desc("NAME=DIMS"), cl::cat(category));
static cl::opt<std::string> cudaToolkit(
    "cuda-toolkit",
    cl::desc("CUDA toolkit holding ptxas (default: $CUDA_HOME, then PATH)"),
    cl::init(""), cl::cat(category));
static cl::opt<bool> printWeights(
    "print-weights",
    cl::desc("Print weight blobs in --emit=graph/linalg output (elided by "
             "default)"),
    cl::init(false), cl::cat(category));

static cl::opt<bool> printLocations(
    "print-locations",
    cl::desc("Print op locations (ONNX node names) in --emit=graph/linalg"),
    cl::init(false), cl::cat(category));

static cl::opt<std::string>
    report("report",
           cl::desc("Print the roofline report instead of compiling: a table "
                    "(--report) or JSON (--report=json)"),
           cl::value_desc("text|json"), cl::ValueOptional, cl::init(""),
           cl::cat(category));
static cl::opt<bool>
    fusion("fusion",
           cl::desc("Fuse memory-bound chains into kernels (default on; off: "
                    "one kernel per graph op), in the artifact and the "
                    "report"),
           cl::init(true), cl::cat(category));
static cl::opt<bool> listGpus("list-gpus",
                              cl::desc("List the built-in GPU specs and exit"),
                              cl::init(false), cl::cat(category));

static int fail(const Twine &message) {
  llvm::WithColor::error(llvm::errs(), "ridgec") << message << "\n";
  return 1;
}

static void printBuiltinGpus(llvm::raw_ostream &os) {
  os << llvm::formatv("{0,-14} {1,9} {2,9} {3,9} {4,9} {5,9} {6,8} {7,5} "
                      "{8,5} {9,8}\n",
                      "GPU", "fp32", "tf32", "fp16", "bf16", "fp8", "HBM TB/s",
                      "SMs", "L2 MB", "ridge");
  for (const GpuSpec &spec : getBuiltinGpuSpecs())
    os << llvm::formatv("{0,-14} {1,9:F1} {2,9:F1} {3,9:F1} {4,9:F1} {5,9:F1} "
                        "{6,8:F2} {7,5} {8,5} {9,8:F1}\n",
                        spec.name, spec.fp32Flops / 1e12, spec.tf32Flops / 1e12,
                        spec.fp16Flops / 1e12, spec.bf16Flops / 1e12,
                        spec.fp8Flops / 1e12, spec.bandwidth / 1e12,
                        spec.smCount, spec.l2Bytes >> 20,
                        spec.bf16Flops / spec.bandwidth);
  os << "(peak TFLOP/s, dense; ridge = bf16 FLOP per byte of memory traffic)\n";
}

/// Imports the model, runs the graph-level pipeline and prints its roofline:
/// one row per graph op, then the kernels that the compilation with the same
/// options forms (the same fusion-group pipeline, read back from the
/// `ridge.fusion_group` ops).
static int runReport(MLIRContext &context,
                     const OnnxImportOptions &importOptions,
                     const TargetSpec &target, bool json, StringRef output) {
  std::string error;
  std::optional<RooflineModel> model =
      RooflineModel::create(target.gpu, target.precision, error);
  if (!model)
    return fail(error);

  OwningOpRef<ModuleOp> module =
      importOnnxFile(&context, inputFile, importOptions);
  if (!module)
    return 1;
  std::optional<RooflineReport> report =
      buildPlannedReport(*module, target, fusion, *model, inputFile);
  if (!report)
    return 1;

  auto out = openOutputFile(output, &error);
  if (!out)
    return fail(error);
  if (json)
    printRooflineJson(*report, *model, out->os());
  else
    printRooflineTable(*report, *model, out->os());
  out->keep();
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // --mlir-timing (with the LLVM phases of the back end), --mlir-print-ir-*
  // and the other pass manager options of mlir-opt, for compiler engineers
  // (README, "Compile time"; not in --help, which lists ridgec's own).
  registerMLIRContextCLOptions();
  registerAsmPrinterCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Ridgeline: ahead-of-time compiler from ONNX to native code and PTX\n");
  if (listGpus) {
    printBuiltinGpus(llvm::outs());
    return 0;
  }
  if (inputFile.empty())
    return fail("no model given (usage: ridgec MODEL.onnx [options]; "
                "--help lists them)");

  std::string targetError;
  FailureOr<TargetSpec> resolved = targetOptions.resolve("ridgec", targetError);
  if (failed(resolved))
    return fail(targetError);
  const std::string &target = resolved->chip;
  bool gpu = resolved->isGpu();
  if ((emit == Emit::Ptx || emit == Emit::Cubin) && !gpu)
    return fail("--emit=ptx/cubin needs a GPU target (--target=sm_80 or "
                "sm_90a)");

  OnnxImportOptions importOptions;
  std::string importError;
  if (failed(importCLOptions.apply(importOptions, importError)))
    return fail(importError);
  for (const std::string &spec : shapes) {
    auto [name, dims] = StringRef(spec).rsplit('=');
    FailureOr<SmallVector<int64_t>> parsed = parseShapeString(dims);
    if (name.empty() || dims.empty() || failed(parsed))
      return fail("malformed --shape '" + spec +
                  "' (expected NAME=DxD..., e.g. input_ids=1x128)");
    importOptions.inputShapes[name] = *parsed;
  }

  bool reporting = report.getNumOccurrences() > 0;
  if (reporting && report != "" && report != "text" && report != "json")
    return fail("unknown --report format '" + report +
                "'; expected --report (a table) or --report=json");
  if (reporting && emit.getNumOccurrences() > 0)
    return fail("--report and --emit cannot be combined");

  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  TimingScope timing = timingManager.getRootScope();
  CompileOptions options;
  options.timing = &timing;
  options.target = *resolved;
  options.fusion = fusion;
  artifactOptions.apply(options);
  options.cudaToolkit = cudaToolkit;
  options.gpuFormat = emit == Emit::Cubin ? "bin" : "isa";
  // --emit=ptx prints the PTX, not the container it would be packed in.
  if (emit == Emit::Ptx)
    options.gpuBinary = GpuBinary::Ptx;

  DialectRegistry registry;
  registerCompilerDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  ToolDiagnosticHandler diagnostics(&context, "ridgec");

  if (reporting)
    return runReport(context, importOptions, *resolved, report == "json",
                     outputFile.empty() ? "-" : StringRef(outputFile));

  std::string output = outputFile;
  bool textual = emit == Emit::Graph || emit == Emit::Linalg ||
                 emit == Emit::LLVM || emit == Emit::Ptx;
  if (output.empty()) {
    if (textual) {
      output = "-";
    } else {
      llvm::SmallString<128> stem(llvm::sys::path::stem(inputFile));
      output = (stem + "." + target + (emit == Emit::Cubin ? ".cubin" : ".so"))
                   .str();
    }
  }

  if (emit == Emit::SharedObject) {
    if (output == "-")
      return fail("a shared object cannot be written to stdout; give -o FILE");
    if (failed(compileModelFile(context, inputFile, importOptions, options,
                                output)))
      return 1;
    return 0;
  }

  OwningOpRef<ModuleOp> module =
      importOnnxFile(&context, inputFile, importOptions);
  if (!module ||
      (emit != Emit::Graph && failed(attachModelAbi(*module, target))))
    return 1;

  std::string error;
  auto out = openOutputFile(output, &error);
  if (!out)
    return fail(error);
  OpPrintingFlags flags;
  if (!printWeights)
    flags.elideLargeResourceString(64);
  if (printLocations)
    flags.enableDebugInfo();

  switch (emit) {
  case Emit::Graph:
    module->print(out->os(), flags);
    break;
  case Emit::Linalg:
    if (failed(lowerGraphModule(*module, options, LoweringStage::Linalg)))
      return 1;
    module->print(out->os(), flags);
    break;
  case Emit::LLVM: {
    if (failed(lowerGraphModule(*module, options, LoweringStage::LLVMDialect)))
      return 1;
    llvm::LLVMContext llvmContext;
    auto llvmModule = translateToLLVMIR(*module, llvmContext);
    if (!llvmModule)
      return fail("translation to LLVM IR failed");
    llvmModule->print(out->os(), nullptr);
    break;
  }
  case Emit::Ptx:
  case Emit::Cubin: {
    if (failed(lowerGraphModule(*module, options, LoweringStage::LLVMDialect)))
      return 1;
    auto objects = getKernelObjects(*module);
    if (objects.empty())
      return fail("the model has no GPU kernels");
    for (auto &[name, payload] : objects)
      out->os() << payload;
    break;
  }
  case Emit::SharedObject:
    break;
  }
  out->keep();
  return 0;
}
