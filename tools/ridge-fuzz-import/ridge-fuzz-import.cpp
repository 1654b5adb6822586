//===- ridge-fuzz-import.cpp - libFuzzer target: bytes -> ONNX -> linalg --===//
//
// Feeds each input through the path `ridgec MODEL --emit=linalg` takes: the
// bytes are imported as a serialized onnx::ModelProto (importOnnxBuffer),
// the model ABI is attached for the CPU, and the shared graph pipeline runs
// up to linalg on tensors (lowerGraphModule). Every diagnostic is swallowed,
// so error paths run silently; a crash, a sanitizer finding or a timeout is a
// bug. An input is a plain .onnx file: `ridgec INPUT --emit=linalg`
// reproduces it.
//
// External data is resolved in a private folder holding only `external.bin`
// (4 KiB), so hostile locations cannot reach other files. Huge and
// wrapping tensor sizes are fuzzed too: the importer refuses them
// (--max-tensor-bytes, at its default).
//
// Built with -DRIDGE_ENABLE_FUZZER=ON (bench/fuzz-campaign.sh). The
// ONNX-aware mutator is in OnnxMutator.cpp.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Analysis/Target.h"
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h"
#include "ridgeline/Driver/Compiler.h"
#include "ridgeline/Import/OnnxImporter.h"
#include "ridgeline/Pipelines/Pipelines.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "onnx/onnx_pb.h"

#include <cstdint>
#include <cstdlib>

using namespace mlir;
using namespace mlir::ridge;

namespace {
/// State shared by every input: built once in LLVMFuzzerInitialize.
struct FuzzState {
  DialectRegistry registry;
  TargetSpec target;
  /// The model path the importer sees; its folder is the private data dir.
  std::string modelPath;
  llvm::SmallString<128> dataDir;
};
} // namespace

static FuzzState *state;

static void removeDataDir() {
  if (state && !state->dataDir.empty())
    llvm::sys::fs::remove_directories(state->dataDir);
}

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
  state = new FuzzState();
  registerCompilerDialects(state->registry);

  std::string error;
  FailureOr<TargetSpec> target =
      resolveTarget(TargetRequest{"cpu", "", "", ""}, error, nullptr);
  if (failed(target)) {
    llvm::errs() << "ridge-fuzz-import: " << error << "\n";
    std::abort();
  }
  state->target = *target;

  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory(
          "ridge-fuzz-import", state->dataDir)) {
    llvm::errs() << "ridge-fuzz-import: cannot create a data folder: "
                 << ec.message() << "\n";
    std::abort();
  }
  std::atexit(removeDataDir);
  // The external data every seed may point at: bytes 0..255 repeated.
  llvm::SmallString<128> bin(state->dataDir);
  llvm::sys::path::append(bin, "external.bin");
  std::error_code ec;
  llvm::raw_fd_ostream os(bin, ec);
  for (int i = 0; i < 4096 && !ec; ++i)
    os << static_cast<char>(i & 0xff);
  llvm::SmallString<128> model(state->dataDir);
  llvm::sys::path::append(model, "fuzz.onnx");
  state->modelPath = std::string(model);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MLIRContext context(state->registry, MLIRContext::Threading::DISABLED);
  // Dialects load on demand (the importer's, then each pass's dependent
  // ones) rather than all up front as in ridgec: loading every registered
  // dialect would take 30x longer than rejecting a malformed input.
  // Error paths are part of what is fuzzed: count nothing, print nothing.
  ScopedDiagnosticHandler silence(&context,
                                  [](Diagnostic &) { return success(); });

  StringRef bytes(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module =
      importOnnxBuffer(&context, bytes, state->modelPath);
  if (!module || failed(attachModelAbi(*module, state->target.chip)))
    return 0;
  CompileOptions options;
  options.target = state->target;
  (void)lowerGraphModule(*module, options, LoweringStage::Linalg);
  return 0;
}
