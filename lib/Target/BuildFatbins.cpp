//===- BuildFatbins.cpp - A cubin beside each GPU module's PTX ------------===//
//
// This file implements ridge-build-fatbins. A model whose kernels are PTX
// only is compiled by the driver's JIT at every load: 0.6 to 1.7 s for the
// shared models on an H200, before the first inference. Where the CUDA
// toolkit is at hand, each GPU module's PTX is assembled here by ptxas for
// its chip and packed with the PTX by fatbinary: the driver loads the cubin
// when the device is that chip and JIT-compiles the PTX otherwise (a newer
// GPU). The PTX stays uncompressed so that the PTX emulator (and
// RIDGE_PTX_JIT=1) can read it from the container.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Target/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>

#define DEBUG_TYPE "ridge-build-fatbins"

STATISTIC(numFatbins, "GPU modules embedded as cubin + PTX");

namespace mlir::ridge {
#define GEN_PASS_DEF_BUILDFATBINSPASS
#include "ridgeline/Target/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;

/// `tool` in `toolkit`/bin, $CUDA_HOME/bin, PATH or /usr/local/cuda/bin.
static std::optional<std::string> findCudaTool(StringRef tool,
                                               StringRef toolkit) {
  SmallVector<std::string> dirs;
  if (!toolkit.empty())
    dirs.push_back((toolkit + "/bin").str());
  if (const char *home = std::getenv("CUDA_HOME"))
    dirs.push_back(std::string(home) + "/bin");
  for (const std::string &dir : dirs) {
    SmallString<128> path(dir);
    llvm::sys::path::append(path, tool);
    if (llvm::sys::fs::can_execute(path))
      return path.str().str();
  }
  if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(tool))
    return *found;
  if (llvm::ErrorOr<std::string> found =
          llvm::sys::findProgramByName(tool, {"/usr/local/cuda/bin"}))
    return *found;
  return std::nullopt;
}

namespace {
struct BuildFatbinsPass : ridge::impl::BuildFatbinsPassBase<BuildFatbinsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::BinaryOp> binaries(module.getOps<gpu::BinaryOp>());
    if (binaries.empty())
      return;
    std::optional<std::string> ptxas = findCudaTool("ptxas", toolkit);
    std::optional<std::string> fatbinary = findCudaTool("fatbinary", toolkit);
    if (!ptxas || !fatbinary) {
      if (!required)
        return; // PTX only: the driver JIT-compiles it at load.
      module.emitError("ridge-build-fatbins: no CUDA ")
          << (ptxas ? "fatbinary" : "ptxas")
          << " found (looked in the toolkit given, $CUDA_HOME/bin, PATH and "
             "/usr/local/cuda/bin)";
      return signalPassFailure();
    }
    for (gpu::BinaryOp binary : binaries)
      if (failed(rebuild(binary, *ptxas, *fatbinary)))
        return signalPassFailure();
  }

  LogicalResult rebuild(gpu::BinaryOp binary, StringRef ptxas,
                        StringRef fatbinary) {
    SmallVector<Attribute> objects;
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget());
      if (!target || object.getFormat() != gpu::CompilationTarget::Assembly) {
        objects.push_back(object);
        continue;
      }
      FailureOr<std::string> fatbin =
          build(binary, object.getObject().getValue(), target.getChip(), ptxas,
                fatbinary);
      if (failed(fatbin))
        return failure();
      // The JIT optimization level ("O") belongs to PTX objects only.
      NamedAttrList properties;
      if (DictionaryAttr old = object.getProperties())
        for (NamedAttribute property : old)
          if (property.getName() != "O")
            properties.append(property);
      objects.push_back(gpu::ObjectAttr::get(
          &getContext(), target, gpu::CompilationTarget::Fatbin,
          StringAttr::get(&getContext(), *fatbin),
          properties.getDictionary(&getContext()), object.getKernels()));
      ++numFatbins;
    }
    binary.setObjectsAttr(ArrayAttr::get(&getContext(), objects));
    return success();
  }

  /// Runs ptxas and fatbinary on `ptx` for `chip` ("sm_90a"); the
  /// container's bytes, or failure after an error naming the tool and its
  /// log.
  FailureOr<std::string> build(gpu::BinaryOp binary, StringRef ptx,
                               StringRef chip, StringRef ptxas,
                               StringRef fatbinary) {
    SmallString<128> ptxPath, cubinPath, fatbinPath, logPath;
    for (auto [suffix, path] :
         {std::pair<StringRef, SmallString<128> *>{"ptx", &ptxPath},
          {"cubin", &cubinPath},
          {"fatbin", &fatbinPath},
          {"log", &logPath}}) {
      if (llvm::sys::fs::createTemporaryFile("ridge-kernels", suffix, *path))
        return binary.emitError("ridge-build-fatbins: cannot create a "
                                "temporary file");
    }
    llvm::FileRemover removePtx(ptxPath), removeCubin(cubinPath),
        removeFatbin(fatbinPath), removeLog(logPath);
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(ptxPath, ec);
      if (ec)
        return binary.emitError("ridge-build-fatbins: cannot write ")
               << ptxPath << ": " << ec.message();
      // The JIT copy of the PTX may carry a terminating NUL; ptxas and the
      // container take the text.
      os << ptx.rtrim('\0');
    }
    std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPath),
                                            StringRef(logPath)};
    auto run = [&](StringRef tool, ArrayRef<StringRef> args) -> LogicalResult {
      std::string message;
      int rc = llvm::sys::ExecuteAndWait(tool, args, std::nullopt, redirects, 0,
                                         0, &message);
      if (rc == 0)
        return success();
      auto log = llvm::MemoryBuffer::getFile(logPath);
      return binary.emitError("ridge-build-fatbins: ")
             << llvm::sys::path::filename(tool) << " failed for "
             << binary.getName() << " ("
             << (message.empty() ? "exit " + std::to_string(rc) : message)
             << ")" << (log ? ":\n" + (*log)->getBuffer().str() : "");
    };
    std::string arch = chip.str();
    StringRef sm = StringRef(arch).drop_front(3); // "sm_90a" -> "90a"
    std::string elfImage =
        ("--image3=kind=elf,sm=" + sm + ",file=" + cubinPath).str();
    std::string ptxImage =
        ("--image3=kind=ptx,sm=" + sm + ",file=" + ptxPath).str();
    if (failed(run(ptxas, {ptxas, "-arch", arch, "--opt-level", "3", ptxPath,
                           "-o", cubinPath})) ||
        failed(run(fatbinary, {fatbinary, "-64", "--compress=false", elfImage,
                               ptxImage, "--create", fatbinPath})))
      return failure();
    auto fatbin = llvm::MemoryBuffer::getFile(fatbinPath);
    if (!fatbin)
      return binary.emitError("ridge-build-fatbins: cannot read ")
             << fatbinPath;
    LLVM_DEBUG(llvm::dbgs()
               << binary.getName() << ": " << ptx.size() << " bytes of PTX -> "
               << (*fatbin)->getBufferSize() << "-byte fatbin\n");
    return (*fatbin)->getBuffer().str();
  }
};
} // namespace
