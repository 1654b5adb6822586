//===- ridgec.cpp - Ridgeline's ahead-of-time model compiler --------------===//
//
//   ridgec MODEL.onnx --target=cpu|sm_80|sm_90a [-o OUT]
//   ridgec MODEL.onnx --emit=graph|linalg|llvm|ptx|cubin [-o OUT|-]
//
// Without --emit, ridgec writes a shared object that libridge_runtime loads
// (ridge-run, or any application embedding the runtime).
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Import/OnnxImporter.h"
#include "ridgeline/Target/Compiler.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
using namespace mlir::ridge;
namespace cl = llvm::cl;

static cl::OptionCategory category("ridgec options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.onnx>"),
                                      cl::Required, cl::cat(category));
static cl::opt<std::string> outputFile(
    "o",
    cl::desc("Output file ('-' for stdout). Default: MODEL.TARGET.so, or "
             "stdout for textual --emit stages"),
    cl::value_desc("file"), cl::init(""), cl::cat(category));
static cl::opt<std::string>
    target("target", cl::desc("Target: cpu, sm_80 or sm_90a (default cpu)"),
           cl::init("cpu"), cl::cat(category));

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

static int fail(const Twine &message) {
  llvm::WithColor::error(llvm::errs(), "ridgec") << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Ridgeline: ahead-of-time compiler from ONNX to native code and PTX\n");

  std::string targetError;
  if (failed(verifyTargetName(target, targetError)))
    return fail(targetError);
  bool gpu = target != "cpu";
  if ((emit == Emit::Ptx || emit == Emit::Cubin) && !gpu)
    return fail("--emit=ptx/cubin needs a GPU target (--target=sm_80 or "
                "sm_90a)");

  OnnxImportOptions importOptions;
  for (const std::string &spec : shapes) {
    auto [name, dims] = StringRef(spec).rsplit('=');
    FailureOr<SmallVector<int64_t>> parsed = parseShapeString(dims);
    if (name.empty() || dims.empty() || failed(parsed))
      return fail("malformed --shape '" + spec +
                  "' (expected NAME=DxD..., e.g. input_ids=1x128)");
    importOptions.inputShapes[name] = *parsed;
  }

  CompileOptions options;
  options.target = target;
  options.cudaToolkit = cudaToolkit;
  options.gpuFormat = emit == Emit::Cubin ? "bin" : "isa";

  DialectRegistry registry;
  registerCompilerDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  ToolDiagnosticHandler diagnostics(&context, "ridgec");

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
      (emit != Emit::Graph && failed(attachManifest(*module, target))))
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
