//===- HostObject.h - The host shared object --------------------*- C++ -*-===//
//
// The last step of a compilation: a module lowered to the LLVM dialect (with
// gpu.binary ops for GPU targets) is translated to LLVM IR, optimized for the
// host, emitted as an object file and linked into a shared object that the
// runtime (libridge_runtime) loads.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_TARGET_HOSTOBJECT_H
#define RIDGELINE_TARGET_HOSTOBJECT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace mlir::ridge {

/// Translates a module lowered to the LLVM dialect (with gpu.binary ops for
/// GPU targets) to LLVM IR for the host.
std::unique_ptr<llvm::Module> translateToLLVMIR(ModuleOp module,
                                                llvm::LLVMContext &context);

/// The host CPU the shared object is compiled for when none is named: a
/// baseline of the host's architecture (x86-64-v2 on x86-64: SSE4.2, every
/// x86-64 server of the last 15 years), so that an artifact runs where it is
/// deployed and not only where it was built; "native" names the compiling
/// machine's own CPU.
std::string getHostCpuName(StringRef requested);

/// Optimizes `module` for the host CPU `hostCpu` (getHostCpuName), emits an
/// object file and links it into a shared library at `outputPath` with the
/// system C compiler driver. The three phases are timed under `timing`.
LogicalResult emitSharedLibrary(llvm::Module &module, StringRef outputPath,
                                StringRef hostCpu, std::string &error,
                                TimingScope &timing);

} // namespace mlir::ridge

#endif // RIDGELINE_TARGET_HOSTOBJECT_H
