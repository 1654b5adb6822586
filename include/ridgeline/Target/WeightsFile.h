//===- WeightsFile.h - Weights kept beside a compiled model -----*- C++ -*-===//
//
// ridge-externalize-weights moves the bytes of a model's weights out of the
// module into a description, kExternalWeightsAttr, on the module; the driver
// writes that description's weights file next to the shared object, and
// ridge-emit-model-abi lowers it to the descriptor's weight table
// (include/ridgeline/Runtime/ModelAbi.h).
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_TARGET_WEIGHTSFILE_H
#define RIDGELINE_TARGET_WEIGHTSFILE_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::ridge {

/// The module attribute ridge-externalize-weights writes:
///   {file = "model.weights", fingerprint = <i64>, bytes = <i64>,
///    weights = [{name = "w", global = @sym, offset = <i64>, bytes = <i64>,
///                data = dense_resource<w> : tensor<...>}, ...]}
/// `bytes` is the file's size; offsets count from the file's start, after
/// the ridge_weights_header.
constexpr StringLiteral kExternalWeightsAttr = "ridge.external_weights";

/// One weight of a kExternalWeightsAttr description, checked.
struct ExternalWeight {
  StringRef name;
  FlatSymbolRefAttr global;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  /// The weight's bytes (the dense_resource blob); empty once released.
  ArrayRef<char> data;
};

/// The whole description.
struct ExternalWeights {
  StringRef file;
  uint64_t fingerprint = 0;
  uint64_t bytes = 0;
  SmallVector<ExternalWeight> weights;
};

/// Reads and checks `module`'s kExternalWeightsAttr. Returns std::nullopt
/// when the module has none, failure (with a diagnostic on the module) when
/// it is malformed.
FailureOr<std::optional<ExternalWeights>> readExternalWeights(ModuleOp module);

/// Writes the weights file `path` that `weights` describes: the
/// ridge_weights_header, then each weight's bytes at its offset, zeros
/// between them. On failure sets `error`, naming the file.
LogicalResult writeWeightsFile(const ExternalWeights &weights, StringRef path,
                               std::string &error);

} // namespace mlir::ridge

#endif // RIDGELINE_TARGET_WEIGHTSFILE_H
