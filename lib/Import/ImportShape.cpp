//===- ImportShape.cpp - shape computation and data movement ---===//
//
// ONNX node handlers: shape computation and data movement.
//
//===----------------------------------------------------------------------===//

#include "ImporterInternal.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::onnx_import;

static LogicalResult importReshape(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  SmallVector<int64_t> requested;
  if (n.opset < 5) {
    std::optional<SmallVector<int64_t>> shape = n.attrInts("shape");
    if (!shape)
      return n.emitError() << "missing attribute 'shape'";
    requested = *shape;
  } else {
    DenseElementsAttr shape = n.constantOperand(1);
    if (!shape)
      return n.emitError() << "the target shape (input 1) is not a constant; "
                              "Ridgeline needs static shapes";
    for (APInt v : shape.getValues<APInt>())
      requested.push_back(v.getSExtValue());
  }
  bool allowZero = n.attrInt("allowzero", 0) != 0;
  auto type = cast<RankedTensorType>(input->getType());
  int64_t known = 1, inferIndex = -1;
  SmallVector<int64_t> shape;
  for (auto [i, d] : llvm::enumerate(requested)) {
    if (d == 0 && !allowZero) {
      if (i >= static_cast<size_t>(type.getRank()))
        return n.emitError()
               << "shape entry " << i << " copies a dimension the input lacks";
      d = type.getDimSize(i);
    }
    if (d == -1) {
      if (inferIndex >= 0)
        return n.emitError() << "more than one -1 in the target shape";
      inferIndex = i;
      shape.push_back(1);
      continue;
    }
    if (d < 0)
      return n.emitError() << "invalid target dimension " << d;
    known *= d;
    shape.push_back(d);
  }
  int64_t total = type.getNumElements();
  if (inferIndex >= 0) {
    if (known == 0 || total % known != 0)
      return n.emitError() << "cannot infer the -1 dimension: " << total
                           << " elements into " << known;
    shape[inferIndex] = total / known;
  } else if (known != total) {
    return n.emitError() << "cannot reshape " << type << " (" << total
                         << " elements) to " << known << " elements";
  }
  n.setResult(0, reshapeTo(n, *input, shape));
  return success();
}

static LogicalResult importFlatten(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  auto type = cast<RankedTensorType>(input->getType());
  int64_t rank = type.getRank();
  int64_t axis = n.attrInt("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return n.emitError() << "axis out of range";
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? outer : inner) *= type.getDimSize(i);
  n.setResult(0, reshapeTo(n, *input, {outer, inner}));
  return success();
}

static LogicalResult importTranspose(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  int64_t rank = cast<RankedTensorType>(input->getType()).getRank();
  SmallVector<int64_t> perm;
  if (auto given = n.attrInts("perm")) {
    perm = *given;
  } else {
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  }
  SmallVector<bool> seen(rank, false);
  if (static_cast<int64_t>(perm.size()) != rank)
    return n.emitError() << "perm has " << perm.size()
                         << " entries for an input of rank " << rank;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return n.emitError() << "perm is not a permutation of 0.." << rank - 1;
    seen[p] = true;
  }
  n.setResult(0, TransposeOp::create(n.builder, n.loc, *input, perm));
  return success();
}

void mlir::ridge::onnx_import::registerShapeHandlers(OnnxHandlerTable &table) {
  table.add("Reshape", 1, importReshape);
  table.add("Flatten", 1, importFlatten);
  table.add("Transpose", 1, importTranspose);
}
