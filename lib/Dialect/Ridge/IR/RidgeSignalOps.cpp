//===- RidgeSignalOps.cpp - ridge Signal ops ---------------------------===//
//
// Type inference, verifiers, folders and costs of the ops declared in
// RidgeSignalOps.td.
//
//===----------------------------------------------------------------------===//

#include "RidgeOpsCommon.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::detail;

//===----------------------------------------------------------------------===//
// DFTOp
//===----------------------------------------------------------------------===//

/// Why a DFT of a `type` input with these attributes is invalid, or empty.
static std::string checkDFT(RankedTensorType type, int64_t axis,
                            int64_t length) {
  int64_t rank = type.getRank();
  if (rank < 2)
    return "input rank " + std::to_string(rank) +
           " is below 2 (signal dims and the real/complex dim)";
  int64_t parts = type.getDimSize(rank - 1);
  if (parts != 1 && parts != 2)
    return "last input dimension must be 1 (real) or 2 (complex), got " +
           std::to_string(parts);
  if (axis < 0 || axis >= rank - 1)
    return "axis " + std::to_string(axis) + " out of range for rank " +
           std::to_string(rank) + " (the last dimension holds the parts)";
  if (length < 1)
    return "length " + std::to_string(length) + " must be positive";
  return "";
}

LogicalResult DFTOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &results) {
  auto type = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t axis = adaptor.getAxis(), length = adaptor.getLength();
  std::string error = checkDFT(type, axis, length);
  if (!error.empty())
    return inferenceError(loc, error);
  SmallVector<int64_t> shape(type.getShape());
  bool inverse = adaptor.getInverse(), onesided = adaptor.getOnesided();
  // Forward onesided keeps the non-redundant half of the spectrum; the
  // inverse onesided (real) transform yields `length` real samples.
  shape[axis] = (onesided && !inverse) ? length / 2 + 1 : length;
  shape.back() = (onesided && inverse) ? 1 : 2;
  results.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

LogicalResult DFTOp::verify() {
  std::string error = checkDFT(getInput().getType(), getAxis(), getLength());
  if (!error.empty())
    return emitOpError(error);
  return success();
}

// FLOPs: 8 * (|out| / parts) * min(n, length): a complex multiply-add
// (4 multiplies, 4 adds) per output bin per input sample it reads, where n
// is the input's size along `axis` (zero padding is not read, truncated
// samples are not used). Bytes: default (|in| + |out|).
int64_t DFTOp::getFlops() {
  int64_t in = getNumElements(getInput().getType());
  int64_t out = getNumElements(getType());
  if (in < 0 || out < 0)
    return -1;
  int64_t n = std::min<int64_t>(getInput().getType().getDimSize(getAxis()),
                                getLength());
  int64_t parts = getType().getShape().back();
  // Each output bin reads every input bin of its signal.
  return (out / parts) * n * 8;
}

//===----------------------------------------------------------------------===//
// DetOp
//===----------------------------------------------------------------------===//

LogicalResult DetOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &results) {
  auto type = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t rank = type.getRank();
  if (rank < 2)
    return inferenceError(loc, "input rank " + Twine(rank) +
                                   " is below 2 (needs [*, n, n] matrices)");
  results.push_back(RankedTensorType::get(type.getShape().drop_back(2),
                                          type.getElementType()));
  return success();
}

LogicalResult DetOp::verify() {
  RankedTensorType type = getInput().getType();
  int64_t rank = type.getRank();
  if (rank < 2)
    return emitOpError("input rank ")
           << rank << " is below 2 (needs [*, n, n] matrices)";
  int64_t rows = type.getDimSize(rank - 2), cols = type.getDimSize(rank - 1);
  if (!ShapedType::isDynamic(rows) && !ShapedType::isDynamic(cols) &&
      rows != cols)
    return emitOpError("matrices must be square, got ") << rows << "x" << cols;
  return success();
}

// FLOPs: matrices * 2n^3 / 3, the LU factorization. Bytes: default.
int64_t DetOp::getFlops() {
  int64_t matrices = getNumElements(getType());
  RankedTensorType type = getInput().getType();
  int64_t n = type.getShape().back();
  if (matrices < 0 || ShapedType::isDynamic(n))
    return -1;
  return matrices * 2 * n * n * n / 3;
}
