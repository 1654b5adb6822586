//===- ImportCore.cpp - constants, casts and contractions ---===//
//
// ONNX node handlers: constants, casts and contractions.
//
//===----------------------------------------------------------------------===//

#include "ImporterInternal.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::onnx_import;

static LogicalResult importCast(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  int64_t to = n.attrInt("to", 0);
  Type elementType = getElementType(n.builder.getContext(), to);
  if (!elementType)
    return n.emitError() << "unsupported target type "
                         << getOnnxDataTypeName(to) << " (ONNX data_type " << to
                         << ")";
  auto type = cast<RankedTensorType>(input->getType());
  // Cast-19's `saturate` (default 1) applies to float8 results only.
  bool saturate = n.attrInt("saturate", 1) != 0;
  n.setResult(0, n.builder.createOrFold<CastOp>(n.loc, type.clone(elementType),
                                                *input, saturate));
  return success();
}

static LogicalResult importMatMul(NodeContext &n) {
  FailureOr<Value> lhs = requireOperand(n, 0);
  FailureOr<Value> rhs = requireOperand(n, 1);
  if (failed(lhs) || failed(rhs))
    return failure();
  FailureOr<Value> result = createInferred<MatMulOp>(n, *lhs, *rhs);
  if (failed(result))
    return failure();
  n.setResult(0, *result);
  return success();
}

static LogicalResult importGemm(NodeContext &n) {
  FailureOr<Value> a = requireOperand(n, 0);
  FailureOr<Value> b = requireOperand(n, 1);
  if (failed(a) || failed(b))
    return failure();
  Value c = n.operand(2);
  auto aType = cast<RankedTensorType>(a->getType());
  auto bType = cast<RankedTensorType>(b->getType());
  if (aType.getRank() != 2 || bType.getRank() != 2)
    return n.emitError() << "A and B must be 2-D, got " << aType << " and "
                         << bType;
  bool transA = n.attrInt("transA", 0), transB = n.attrInt("transB", 0);
  // The op's verifier checks the contraction dims and the bias shape.
  auto gemm = GemmOp::create(
      n.builder, n.loc, *a, *b, c,
      n.builder.getF32FloatAttr(n.attrFloat("alpha", 1.0f)),
      n.builder.getF32FloatAttr(n.attrFloat("beta", 1.0f)),
      n.builder.getBoolAttr(transA), n.builder.getBoolAttr(transB));
  if (failed(mlir::verify(gemm, /*verifyRecursively=*/false)))
    return failure();
  n.setResult(0, gemm);
  return success();
}

static LogicalResult importConstant(NodeContext &n) {
  MLIRContext *ctx = n.builder.getContext();
  if (const auto *value = n.attr("value")) {
    TensorData data;
    std::string error;
    if (!n.decodeTensor(value->t(), data, error))
      return n.emitError() << error;
    if (!getElementType(ctx, data.dataType))
      return n.emitError() << "unsupported element type "
                           << getOnnxDataTypeName(data.dataType);
    // A Constant without outputs is legal protobuf; its name hint is empty.
    StringRef hint = n.node.output_size() ? n.node.output(0) : "";
    n.setResult(0, n.createConstant(data, hint));
    return success();
  }
  auto make = [&](Type elementType, ArrayRef<int64_t> shape, auto values) {
    auto type = RankedTensorType::get(shape, elementType);
    n.setResult(0, ConstantOp::create(n.builder, n.loc,
                                      DenseElementsAttr::get(type, values)));
    return success();
  };
  Builder b(ctx);
  if (const auto *a = n.attr("value_float"))
    return make(b.getF32Type(), {}, ArrayRef<float>(a->f()));
  if (const auto *a = n.attr("value_int"))
    return make(b.getI64Type(), {}, ArrayRef<int64_t>(a->i()));
  if (const auto *a = n.attr("value_floats")) {
    SmallVector<float> v(a->floats().begin(), a->floats().end());
    return make(b.getF32Type(), {static_cast<int64_t>(v.size())}, ArrayRef(v));
  }
  if (const auto *a = n.attr("value_ints")) {
    SmallVector<int64_t> v(a->ints().begin(), a->ints().end());
    return make(b.getI64Type(), {static_cast<int64_t>(v.size())}, ArrayRef(v));
  }
  return n.emitError() << "no supported value attribute (value, value_float, "
                          "value_int, value_floats, value_ints)";
}

static LogicalResult importIdentity(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  n.setResult(0, *input);
  return success();
}

/// Dropout in inference: the identity, and an all-true mask. Training-mode
/// Dropout (a training_mode input) is out of scope and never reaches here.
static LogicalResult importDropout(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  n.setResult(0, *input);
  if (n.getNumResults() > 1) {
    auto type = cast<RankedTensorType>(input->getType());
    auto maskType = type.clone(n.builder.getI1Type());
    n.setResult(1, ConstantOp::create(n.builder, n.loc,
                                      DenseElementsAttr::get(maskType, true)));
  }
  return success();
}

void mlir::ridge::onnx_import::registerCoreHandlers(OnnxHandlerTable &table) {
  table.add("Dropout", 1, importDropout);
  table.add("MatMul", 1, importMatMul);
  table.add("Gemm", 7, importGemm);
  table.add("Cast", 6, importCast);
  table.add("Constant", 1, importConstant);
  table.add("Identity", 1, importIdentity);
}
