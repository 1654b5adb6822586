//===- HostObject.cpp - LLVM IR -> object -> shared object ----------------===//

#include "ridgeline/Target/HostObject.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
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

  auto optimize =
      makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0, machine.get());
  TimingScope optimizeTime = timing.nest("LLVM optimization (O3)");
  if (llvm::Error err = optimize(&module)) {
    error = "LLVM optimization failed: " + llvm::toString(std::move(err));
    return failure();
  }
  optimizeTime.stop();

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
