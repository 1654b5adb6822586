//===- ConstantElements.cpp - Reading a ridge.constant's elements ---------===//

#include "ridgeline/Dialect/Ridge/IR/ConstantElements.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;
using namespace mlir::ridge;

std::optional<ConstantElementFn> mlir::ridge::getConstantElements(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto type = cast<RankedTensorType>(value.getType());
  Type element = type.getElementType();
  Attribute attr = constant.getValue();
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (element.isInteger(1)) {
      auto values = dense.getValues<bool>();
      return ConstantElementFn(
          [values](int64_t i) { return values[i] ? 1.0 : 0.0; });
    }
    if (isa<FloatType>(element)) {
      auto values = dense.getValues<APFloat>();
      return ConstantElementFn(
          [values](int64_t i) { return values[i].convertToDouble(); });
    }
    if (element.isInteger()) {
      auto values = dense.getValues<APInt>();
      return ConstantElementFn([values](int64_t i) {
        return static_cast<double>(values[i].getSExtValue());
      });
    }
    return std::nullopt;
  }
  // Weights and large initializers are resources: raw little-endian
  // elements (booleans one byte each).
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  AsmResourceBlob *blob =
      resource ? resource.getRawHandle().getBlob() : nullptr;
  if (!blob)
    return std::nullopt;
  ArrayRef<char> data = blob->getData();
  int64_t width =
      element.isInteger(1) ? 1 : element.getIntOrFloatBitWidth() / 8;
  if (static_cast<int64_t>(data.size()) != type.getNumElements() * width)
    return std::nullopt;
  auto reader = [data, width](auto sample) {
    return ConstantElementFn([data, width](int64_t i) {
      decltype(sample) x;
      std::memcpy(&x, data.data() + width * i, sizeof(x));
      return static_cast<double>(x);
    });
  };
  if (element.isF32())
    return reader(float());
  if (element.isF64())
    return reader(double());
  if (element.isInteger(64))
    return reader(int64_t());
  if (element.isInteger(32))
    return reader(int32_t());
  if (element.isInteger(1) || element.isInteger(8))
    return reader(int8_t());
  return std::nullopt;
}
