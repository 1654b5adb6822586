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
/// Element count of a static ranked tensor type; -1 for other types and
/// when the count overflows int64.
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
OpFoldResult foldCastConstant(Attribute input, Type inputType, Type resultType,
                              bool saturate = true);

/// True when `axes` are the trailing `axes.size()` axes of a rank-`rank`
/// tensor, in order: a reduction the fusion planner's row kernel can run,
/// since every output element then owns one contiguous row.
bool reducesTrailingAxes(ArrayRef<int64_t> axes, int64_t rank);

/// Rows of `input` when each row is made of its dims from `axis` to the end
/// (softmax, the norms): elements / row length. Failure when the shape is not
/// static or a row is empty. Defined with the reductions
/// (RidgeReductionOps.cpp).
FailureOr<int64_t> getRowsOfTrailingDims(Value input, int64_t axis);
} // namespace mlir::ridge::detail

#endif // RIDGELINE_DIALECTS_RIDGE_RIDGEOPSCOMMON_H
