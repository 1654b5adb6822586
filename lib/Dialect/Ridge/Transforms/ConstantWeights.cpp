//===- ConstantWeights.cpp - Weights rearranged at compile time -----------===//

#include "ConstantWeights.h"

#include "ridgeline/Dialect/Ridge/IR/ConstantElements.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;
using namespace mlir::ridge;

SmallVector<int64_t> mlir::ridge::getPermutedShape(ArrayRef<int64_t> shape,
                                                   ArrayRef<int64_t> perm) {
  SmallVector<int64_t> result;
  for (int64_t p : perm)
    result.push_back(shape[p]);
  return result;
}

Value mlir::ridge::permuteConstantWeight(OpBuilder &b, Location loc,
                                         Value weight, ArrayRef<int64_t> perm,
                                         int64_t lastDimSize,
                                         StringRef layoutSuffix,
                                         ArrayRef<int64_t> viewShape) {
  auto constant = weight.getDefiningOp<ConstantOp>();
  auto type = cast<RankedTensorType>(weight.getType());
  if (!constant || !type.getElementType().isF32() || !type.hasStaticShape())
    return Value();
  std::optional<ConstantElementFn> element = getConstantElements(weight);
  if (!element)
    return Value();
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> permuted = getPermutedShape(shape, perm);
  SmallVector<int64_t> resultShape = permuted;
  bool padded = lastDimSize > permuted.back();
  if (padded)
    resultShape.back() = lastDimSize;
  int64_t rank = shape.size();
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  // Result element r at coordinates c reads input coordinates c' with
  // c'[perm[i]] = c[i]; past the permuted last dimension it is a zero.
  SmallVector<float> values(ShapedType::getNumElements(resultShape));
  SmallVector<int64_t> coords(rank, 0);
  for (float &value : values) {
    int64_t source = 0;
    for (int64_t i = 0; i < rank; ++i)
      source += coords[i] * strides[perm[i]];
    value = coords.back() < permuted.back()
                ? static_cast<float>((*element)(source))
                : 0.0f;
    for (int64_t i = rank - 1; i >= 0; --i) {
      if (++coords[i] < resultShape[i])
        break;
      coords[i] = 0;
    }
  }
  auto resultType = RankedTensorType::get(
      viewShape.empty() ? ArrayRef<int64_t>(resultShape) : viewShape,
      type.getElementType());
  std::string suffix = layoutSuffix.str();
  if (padded)
    suffix += std::to_string(lastDimSize);
  std::string key = "weight" + suffix;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(constant.getValue()))
    key = resource.getRawHandle().getKey().str() + suffix;
  auto attr = DenseResourceElementsAttr::get(
      resultType, key,
      HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef<float>(values)));
  return ConstantOp::create(b, loc, attr).getResult();
}
