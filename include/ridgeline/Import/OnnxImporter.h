//===- OnnxImporter.h - ONNX model -> ridge graph dialect ---------*- C++
//-*-===//
//
// Reads an ONNX ModelProto and builds a module with one `func.func @main` of
// `ridge` ops. Graph inputs become function arguments, initializers become
// `ridge.constant`s (large ones as dense_resource blobs), and ONNX node names
// become op locations. Every problem found (unsupported ops, dangling values,
// cycles, missing shapes) is reported as its own diagnostic before failing.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_IMPORT_ONNXIMPORTER_H
#define RIDGELINE_IMPORT_ONNXIMPORTER_H

#include "ridgeline/Dialect/Ridge/IR/Ridge.h"
#include "ridgeline/Import/TensorProto.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include <string>
#include <vector>

namespace mlir::ridge {

/// Unit module attribute: the ONNX model kept weights as external data (set
/// by the importer; the driver then keeps them beside the artifact too).
inline constexpr llvm::StringLiteral kExternalDataAttr =
    "ridge.onnx_external_data";

struct OnnxImportOptions {
  /// Static shapes for graph inputs, by input name. They specialize dynamic
  /// (symbolic) dimensions and must agree with static ones.
  llvm::StringMap<SmallVector<int64_t>> inputShapes;
  /// Constants with more elements than this are stored as dense_resource
  /// blobs, which IR dumps elide instead of printing the weights inline.
  int64_t inlineConstantLimit = 64;
  /// Values of graph inputs, by input name, that operands which must be
  /// constants (target shapes, axes, pads, slice bounds, ...) may be
  /// specialized to, as input shapes are. Data operands never read them, and
  /// the inputs stay in the signature.
  llvm::StringMap<TensorData> inputValues;
  /// The largest tensor (graph input, weight, node result) accepted, in
  /// bytes; larger ones, and sizes that overflow 64 bits, are errors naming
  /// the ONNX tensor.
  int64_t maxTensorBytes = kDefaultMaxTensorBytes;
};

/// Imports the ONNX model at `path`. Returns null after emitting diagnostics
/// on failure.
OwningOpRef<ModuleOp> importOnnxFile(MLIRContext *context, StringRef path,
                                     const OnnxImportOptions &options = {});

/// Imports the model whose serialized ModelProto is `contents`, as if it
/// were the file at `path`: diagnostics name `path`, and external data is
/// resolved relative to its folder. Returns null after emitting diagnostics
/// on failure.
OwningOpRef<ModuleOp> importOnnxBuffer(MLIRContext *context, StringRef contents,
                                       StringRef path,
                                       const OnnxImportOptions &options = {});

/// Parses "1x128" (or "scalar") into dimensions; failure on malformed text.
FailureOr<SmallVector<int64_t>> parseShapeString(StringRef text);

/// Names of the graph inputs of the model at `path` that are not
/// initializers, in order. Returns false and sets `error` on failure.
bool listOnnxGraphInputs(StringRef path, std::vector<std::string> &names,
                         std::string &error);

/// What a model is made of, read without importing it.
struct OnnxModelSummary {
  /// The default-domain opset the model imports.
  int64_t opset = 0;
  /// Distinct op types of the main graph, as `domain:Op` outside the default
  /// domain, in order of first appearance.
  std::vector<std::string> opTypes;
  /// Why the model lies outside what Ridgeline compiles, or empty when it is
  /// in scope. See getOnnxOutOfScopeReason.
  std::string outOfScopeReason;
};

/// Reads the model at `path` into `summary`. Returns false and sets `error`
/// when the file does not parse.
bool describeOnnxModel(StringRef path, OnnxModelSummary &summary,
                       std::string &error);

/// Why ONNX op `opType` of `domain` lies outside Ridgeline's scope (training,
/// random, string, sequence, optional and control-flow ops, and ops of
/// non-default domains), or empty when it is in scope. In-scope ops may still
/// be unsupported.
std::string getOnnxOutOfScopeReason(StringRef domain, StringRef opType);

/// Registers the dialects the importer creates.
void registerOnnxImportDialects(DialectRegistry &registry);

} // namespace mlir::ridge

#endif // RIDGELINE_IMPORT_ONNXIMPORTER_H
