//===- RidgeOpsCommon.h - helpers shared by the ridge op files -*- C++ -*-===//
//
// Private to the dialect library: type-inference and diagnostic helpers used
// by the per-family op implementation files (RidgeOps.cpp, Ridge*Ops.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_DIALECTS_RIDGE_RIDGEOPSCOMMON_H
#define RIDGELINE_DIALECTS_RIDGE_RIDGEOPSCOMMON_H

#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

#include <string>

namespace mlir::ridge::detail {
/// Element count of a static ranked tensor type, -1 otherwise.
int64_t getNumElements(Type type);

/// `type` printed as in the IR, for diagnostics.
std::string typeToString(Type type);

/// Emits `message` at `loc` when inference runs with a location (building an
/// op); stays silent when only probing. Always returns failure.
LogicalResult inferenceError(std::optional<Location> loc, const Twine &message);

/// Result type of a numpy-broadcasting binary op whose operands share an
/// element type.
LogicalResult inferBinaryType(std::optional<Location> loc, Value lhs, Value rhs,
                              SmallVectorImpl<Type> &results);

/// ONNX Cast of the dense constant `input` (of `inputType`) to `resultType`;
/// null when `input` is not a splat or a small dense constant. Defined with
/// the elementwise folders (RidgeElementwiseOps.cpp).
OpFoldResult foldCastConstant(Attribute input, Type inputType, Type resultType);
} // namespace mlir::ridge::detail

#endif // RIDGELINE_DIALECTS_RIDGE_RIDGEOPSCOMMON_H
