//===- ImportElementwise.cpp - elementwise math, comparison and logic ---===//
//
// ONNX node handlers: elementwise math, comparison and logic.
//
//===----------------------------------------------------------------------===//

#include "ImporterInternal.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::onnx_import;

template <typename OpTy> static NodeHandler binaryHandler() {
  return [](NodeContext &n) -> LogicalResult {
    FailureOr<Value> lhs = requireOperand(n, 0);
    FailureOr<Value> rhs = requireOperand(n, 1);
    if (failed(lhs) || failed(rhs))
      return failure();
    auto lhsType = cast<RankedTensorType>(lhs->getType());
    auto rhsType = cast<RankedTensorType>(rhs->getType());
    if (lhsType.getElementType() != rhsType.getElementType()) {
      // Pow's exponent may have another type; every other op must agree.
      if (!std::is_same_v<OpTy, PowOp>)
        return n.emitError()
               << "input element types differ: " << lhsType.getElementType()
               << " vs " << rhsType.getElementType();
      *rhs = CastOp::create(
          n.builder, n.loc,
          RankedTensorType::get(rhsType.getShape(), lhsType.getElementType()),
          *rhs);
    }
    FailureOr<Value> result = createInferred<OpTy>(n, *lhs, *rhs);
    if (failed(result))
      return failure();
    n.setResult(0, *result);
    return success();
  };
}

/// Variadic Max/Min/Sum-style ops fold left over their inputs.
template <typename OpTy> static NodeHandler variadicHandler() {
  return [](NodeContext &n) -> LogicalResult {
    FailureOr<Value> acc = requireOperand(n, 0);
    if (failed(acc))
      return failure();
    for (unsigned i = 1; i < n.getNumOperands(); ++i) {
      FailureOr<Value> next = requireOperand(n, i);
      if (failed(next))
        return failure();
      acc = createInferred<OpTy>(n, *acc, *next);
      if (failed(acc))
        return failure();
    }
    n.setResult(0, *acc);
    return success();
  };
}

template <typename OpTy, bool floatOnly = false>
static NodeHandler unaryHandler() {
  return [](NodeContext &n) -> LogicalResult {
    FailureOr<Value> input = requireOperand(n, 0);
    if (failed(input))
      return failure();
    if (floatOnly &&
        !isa<FloatType>(
            cast<RankedTensorType>(input->getType()).getElementType()))
      return n.emitError() << "expects a floating-point input, got "
                           << input->getType();
    n.setResult(0, OpTy::create(n.builder, n.loc, *input));
    return success();
  };
}

void mlir::ridge::onnx_import::registerElementwiseHandlers(
    OnnxHandlerTable &table) {
  // Elementwise arithmetic: opset 7 introduced multidirectional broadcasting,
  // which is the only form Ridgeline supports.
  table.add("Add", 7, binaryHandler<AddOp>());
  table.add("Sub", 7, binaryHandler<SubOp>());
  table.add("Mul", 7, binaryHandler<MulOp>());
  table.add("Div", 7, binaryHandler<DivOp>());
  table.add("Pow", 7, binaryHandler<PowOp>());
  table.add("Max", 8, variadicHandler<MaxOp>());
  table.add("Min", 8, variadicHandler<MinOp>());
  table.add("Relu", 6, unaryHandler<ReluOp>());
  table.add("Neg", 6, unaryHandler<NegOp>());
  table.add("Abs", 6, unaryHandler<AbsOp>());
  table.add("Tanh", 6, unaryHandler<TanhOp, true>());
  table.add("Exp", 6, unaryHandler<ExpOp, true>());
  table.add("Log", 6, unaryHandler<LogOp, true>());
  table.add("Sqrt", 6, unaryHandler<SqrtOp, true>());
  table.add("Erf", 9, unaryHandler<ErfOp, true>());
  table.add("Sigmoid", 6, unaryHandler<SigmoidOp, true>());
  table.add("Reciprocal", 6, unaryHandler<ReciprocalOp, true>());
}
