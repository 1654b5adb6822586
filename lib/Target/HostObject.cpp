//===- HostObject.cpp - LLVM IR -> object -> shared object ----------------===//

#include "ridgeline/Target/HostObject.h"

#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;
using namespace mlir::ridge;

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

std::string mlir::ridge::getHostCpuName(StringRef requested) {
  if (requested == "native")
    return llvm::sys::getHostCPUName().str();
  if (!requested.empty())
    return requested.str();
  // Compile time matters too: AVX-512 code for 100k fused ops takes the
  // back end twice as long as SSE code (bench/compile-scaling.sh).
  llvm::Triple triple(llvm::sys::getProcessTriple());
  return triple.getArch() == llvm::Triple::x86_64 ? "x86-64-v2" : "generic";
}

/// Whether the shared object can link glibc's vector math library (libmvec):
/// an x86-64 GNU/Linux host with the library's development link.
static bool hasGlibcVectorMath(const llvm::Triple &triple) {
  if (triple.getArch() != llvm::Triple::x86_64 || !triple.isOSLinux() ||
      !triple.isGNUEnvironment())
    return false;
  for (const char *dir : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                          "/usr/lib64", "/lib64"}) {
    llvm::SmallString<64> path(dir);
    llvm::sys::path::append(path, "libmvec.so");
    if (llvm::sys::fs::exists(path))
      return true;
  }
  return false;
}

/// glibc's vector math functions (libmvec, glibc 2.35 or later), each with
/// its ISA letter of the x86 vector ABI: 'b' (SSE: 4 x f32, 2 x f64) or 'd'
/// (AVX2: 8 x f32, 4 x f64). LLVM's own libmvec table has only sin, cos, tan,
/// exp, log and pow; without the others a vectorized kernel loop calls the
/// scalar tanhf or erff once per lane, with a spill of every live vector
/// around each call, which is slower to run and, for a chain of GELUs or
/// tanhs, the larger part of the back end's compile time. Built once: the
/// descriptors refer to the names it keeps.
static ArrayRef<std::pair<char, llvm::VecDesc>> getGlibcVectorMath() {
  static const auto *table = [] {
    static const std::pair<const char *, unsigned> functions[] = {
        {"acos", 1},  {"acosh", 1}, {"asin", 1},  {"asinh", 1}, {"atan", 1},
        {"atanh", 1}, {"cbrt", 1},  {"cos", 1},   {"cosh", 1},  {"erf", 1},
        {"erfc", 1},  {"exp", 1},   {"exp10", 1}, {"exp2", 1},  {"expm1", 1},
        {"log", 1},   {"log10", 1}, {"log1p", 1}, {"log2", 1},  {"sin", 1},
        {"sinh", 1},  {"tan", 1},   {"tanh", 1},  {"atan2", 2}, {"hypot", 2},
        {"pow", 2}};
    static llvm::BumpPtrAllocator allocator;
    static llvm::StringSaver names(allocator);
    auto *descriptors = new std::vector<std::pair<char, llvm::VecDesc>>();
    for (auto [name, arity] : functions) {
      std::string params(arity, 'v');
      for (bool f32 : {true, false}) {
        std::string scalar = std::string(name) + (f32 ? "f" : "");
        std::string intrinsic =
            std::string("llvm.") + name + (f32 ? ".f32" : ".f64");
        for (auto [isa, lanes] :
             {std::pair<char, unsigned>{'b', f32 ? 4 : 2},
              std::pair<char, unsigned>{'d', f32 ? 8 : 4}}) {
          std::string width = std::to_string(lanes) + params;
          StringRef vector = names.save(
              ("_ZGV" + Twine(isa) + "N" + width + "_" + scalar).str());
          StringRef prefix = names.save("_ZGV_LLVM_N" + width);
          for (const std::string &source : {scalar, intrinsic})
            descriptors->emplace_back(
                isa, llvm::VecDesc(names.save(source), vector,
                                   llvm::ElementCount::getFixed(lanes),
                                   /*Masked=*/false, prefix, std::nullopt));
        }
      }
    }
    return descriptors;
  }();
  return *table;
}

/// Tells the vectorizer about libmvec's functions for the host's ISA.
static void addGlibcVectorMath(llvm::TargetLibraryInfoImpl &library,
                               bool avx2) {
  SmallVector<llvm::VecDesc> descriptors;
  for (const auto &[isa, descriptor] : getGlibcVectorMath())
    if (isa == 'b' || avx2)
      descriptors.push_back(descriptor);
  library.addVectorizableFunctions(descriptors);
}

/// LLVM's O3 pipeline for the host, with `library` as what it knows of the
/// C library.
static void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine,
                           const llvm::TargetLibraryInfoImpl &library) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = true;
  tuning.LoopInterleaving = true;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder builder(&machine, tuning);
  // Registered first, so that registerFunctionAnalyses keeps this one.
  functions.registerPass([&] { return llvm::TargetLibraryAnalysis(library); });
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  llvm::ModulePassManager pipeline =
      builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  pipeline.run(module, modules);
}

/// Defines `__truncsfbf2` (f32 -> bf16, round to nearest even, NaN kept) as
/// a hidden function of `module` when its code has bf16 values. The x86
/// back end calls it to legalize some bf16 values the MLIR lowering leaves
/// (phis and selects of bf16), and the C runtime the model links against
/// (libgcc 12) lacks it.
static void defineBF16Truncation(llvm::Module &module) {
  const char *name = "__truncsfbf2";
  if (module.getFunction(name))
    return;
  llvm::LLVMContext &context = module.getContext();
  llvm::Type *bf16 = llvm::Type::getBFloatTy(context);
  bool hasBF16 = false;
  for (llvm::Function &function : module) {
    for (llvm::Instruction &inst : llvm::instructions(function))
      if (inst.getType()->getScalarType() == bf16) {
        hasBF16 = true;
        break;
      }
    if (hasBF16)
      break;
  }
  if (!hasBF16)
    return;
  llvm::Type *f32 = llvm::Type::getFloatTy(context);
  llvm::Type *i32 = llvm::Type::getInt32Ty(context);
  llvm::Type *i16 = llvm::Type::getInt16Ty(context);
  auto *function = llvm::Function::Create(
      llvm::FunctionType::get(bf16, {f32}, false),
      llvm::GlobalValue::LinkOnceODRLinkage, name, module);
  function->setVisibility(llvm::GlobalValue::HiddenVisibility);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", function));
  llvm::Value *x = function->getArg(0);
  llvm::Value *bits = b.CreateBitCast(x, i32);
  llvm::Value *lsb = b.CreateAnd(b.CreateLShr(bits, 16), 1);
  llvm::Value *rounded =
      b.CreateLShr(b.CreateAdd(bits, b.CreateAdd(lsb, b.getInt32(0x7fff))), 16);
  llvm::Value *result =
      b.CreateSelect(b.CreateFCmpUNO(x, x), llvm::ConstantInt::get(i16, 0x7fc0),
                     b.CreateTrunc(rounded, i16));
  b.CreateRet(b.CreateBitCast(result, bf16));
}

LogicalResult mlir::ridge::emitSharedLibrary(llvm::Module &module,
                                             StringRef outputPath,
                                             StringRef hostCpu,
                                             std::string &error,
                                             TimingScope &timing) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return failure();
  std::string cpu = getHostCpuName(hostCpu);
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(triple, "", ""));
  if (!subtarget || !subtarget->isCPUStringValid(cpu)) {
    error = "unknown host CPU '" + cpu + "' for " + triple.str() +
            " (--host-cpu: a CPU name such as x86-64-v3 or znver4, or native)";
    return failure();
  }
  llvm::TargetOptions targetOptions;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu, "", targetOptions, llvm::Reloc::PIC_));
  module.setTargetTriple(triple);
  module.setDataLayout(machine->createDataLayout());

  llvm::TargetLibraryInfoImpl library(triple);
  bool vectorMath = hasGlibcVectorMath(triple);
  if (vectorMath)
    addGlibcVectorMath(library,
                       machine->getMCSubtargetInfo()->checkFeatures("+avx2"));
  TimingScope optimizeTime = timing.nest("LLVM optimization (O3)");
  optimizeModule(module, *machine, library);
  optimizeTime.stop();
  // After optimization, which would drop it unused: only code generation
  // introduces its calls.
  defineBF16Truncation(module);

  llvm::SmallString<128> objectPath;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("ridge-model", "o", objectPath)) {
    error = "cannot create a temporary object file: " + ec.message();
    return failure();
  }
  llvm::FileRemover removeObject(objectPath);
  llvm::sys::RemoveFileOnSignal(objectPath);
  llvm::scope_exit unregister(
      [&] { llvm::sys::DontRemoveFileOnSignal(objectPath); });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objectPath, ec, llvm::sys::fs::OF_None);
    if (ec) {
      error = "cannot write '" + objectPath.str().str() + "': " + ec.message();
      return failure();
    }
    llvm::legacy::PassManager codegen;
    // Vector math intrinsics left after optimization become libmvec calls
    // too (ReplaceWithVeclib).
    codegen.add(new llvm::TargetLibraryInfoWrapperPass(library));
    if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                     llvm::CodeGenFileType::ObjectFile)) {
      error = "the host target cannot emit object files";
      return failure();
    }
    TimingScope codegenTime = timing.nest("LLVM code generation");
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
  if (vectorMath)
    args.append({"-Wl,--as-needed", "-lmvec"});
  std::string message;
  TimingScope linkTime = timing.nest("link");
  int status =
      llvm::sys::ExecuteAndWait(driver, args, std::nullopt, {}, 0, 0, &message);
  if (status != 0) {
    error = "linking '" + out + "' with " + driver + " failed" +
            (message.empty() ? "" : ": " + message);
    return failure();
  }
  return success();
}
