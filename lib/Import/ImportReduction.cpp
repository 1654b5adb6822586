//===- ImportReduction.cpp - reductions and normalizations ---===//
//
// ONNX node handlers: reductions and normalizations.
//
//===----------------------------------------------------------------------===//

#include "ImporterInternal.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::onnx_import;

static LogicalResult importSoftmax(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  auto type = cast<RankedTensorType>(input->getType());
  if (!isa<FloatType>(type.getElementType()))
    return n.emitError() << "expects a floating-point input";
  int64_t rank = type.getRank();
  int64_t axis = n.attrInt("axis", n.opset >= 13 ? -1 : 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= std::max<int64_t>(rank, 1))
    return n.emitError() << "axis out of range for rank " << rank;
  if (n.opset >= 13) {
    n.setResult(0, SoftmaxOp::create(n.builder, n.loc, *input, axis));
    return success();
  }
  // Before opset 13 the input is coerced to 2-D at `axis`.
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? outer : inner) *= type.getDimSize(i);
  Value flat = reshapeTo(n, *input, {outer, inner});
  Value softmax = SoftmaxOp::create(n.builder, n.loc, flat, 1);
  n.setResult(0, reshapeTo(n, softmax, type.getShape()));
  return success();
}

void mlir::ridge::onnx_import::registerReductionHandlers(
    OnnxHandlerTable &table) {
  table.add("Softmax", 1, importSoftmax);
}
