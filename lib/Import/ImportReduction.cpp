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

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Required operand `i` as a float tensor.
static FailureOr<Value> requireFloatOperand(NodeContext &n, unsigned i) {
  FailureOr<Value> v = requireOperand(n, i);
  if (failed(v))
    return failure();
  if (!isa<FloatType>(cast<RankedTensorType>(v->getType()).getElementType())) {
    n.emitError() << "expects a floating-point input " << i << ", got "
                  << v->getType();
    return failure();
  }
  return v;
}

/// `axis` made non-negative for rank `rank`; failure (reported) if out of
/// range. `what` names the attribute or input in the message.
static FailureOr<int64_t> normalizeAxis(NodeContext &n, int64_t axis,
                                        int64_t rank, StringRef what = "axis") {
  int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= rank) {
    n.emitError() << what << " " << axis << " out of range for rank " << rank;
    return failure();
  }
  return normalized;
}

/// A rank-0 constant of `elementType` holding `value`.
static Value scalarConstant(NodeContext &n, Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute element = isa<FloatType>(elementType)
                          ? Attribute(FloatAttr::get(elementType, value))
                          : Attribute(IntegerAttr::get(
                                elementType, static_cast<int64_t>(value)));
  return ConstantOp::create(n.builder, n.loc,
                            DenseElementsAttr::get(type, element));
}

/// `param` (shape [C]) reshaped so that it broadcasts along dimension 1 of a
/// rank-`rank` tensor: [C, 1, ..., 1].
static Value channelParam(NodeContext &n, Value param, int64_t rank) {
  auto type = cast<RankedTensorType>(param.getType());
  SmallVector<int64_t> shape{type.getNumElements()};
  shape.append(std::max<int64_t>(rank - 2, 0), 1);
  return reshapeTo(n, param, shape);
}

template <typename OpTy> static Value binary(NodeContext &n, Value a, Value b) {
  return OpTy::create(n.builder, n.loc, a, b);
}

//===----------------------------------------------------------------------===//
// Reduce*
//===----------------------------------------------------------------------===//

/// How a Reduce* node is expressed around ridge.reduce.
enum class ReduceVariant {
  Sum,
  Mean,
  Max,
  Min,
  Prod,
  L1,
  L2,
  LogSum,
  LogSumExp,
  SumSquare
};

static ReduceKind getCoreKind(ReduceVariant variant) {
  switch (variant) {
  case ReduceVariant::Mean:
    return ReduceKind::Mean;
  case ReduceVariant::Max:
    return ReduceKind::Max;
  case ReduceVariant::Min:
    return ReduceKind::Min;
  case ReduceVariant::Prod:
    return ReduceKind::Prod;
  default:
    return ReduceKind::Sum;
  }
}

/// Sorted, unique, non-negative reduction axes of a Reduce* node. ONNX's
/// default (absent or empty axes) reduces everything unless
/// `noop_with_empty_axes`, which leaves the input as is (no axes).
static FailureOr<SmallVector<int64_t>>
getReduceAxes(NodeContext &n, int64_t rank, bool axesFromInput) {
  std::optional<SmallVector<int64_t>> axes;
  if (axesFromInput) {
    if (n.operand(1)) {
      axes = n.constantInts(1);
      if (!axes) {
        n.emitError() << "axes (input 1) must be a constant integer tensor";
        return failure();
      }
    }
  } else {
    axes = n.attrInts("axes");
  }
  SmallVector<int64_t> result;
  if (!axes || axes->empty()) {
    if (axesFromInput && n.attrInt("noop_with_empty_axes", 0))
      return result;
    for (int64_t i = 0; i < rank; ++i)
      result.push_back(i);
    return result;
  }
  for (int64_t axis : *axes) {
    FailureOr<int64_t> normalized = normalizeAxis(n, axis, rank, "axes entry");
    if (failed(normalized))
      return failure();
    if (llvm::is_contained(result, *normalized)) {
      n.emitError() << "axes entry " << axis << " repeats an axis";
      return failure();
    }
    result.push_back(*normalized);
  }
  llvm::sort(result);
  return result;
}

static Value createReduce(NodeContext &n, Value input, ReduceKind kind,
                          ArrayRef<int64_t> axes, bool keepdims) {
  return ReduceOp::create(n.builder, n.loc, input, kind,
                          n.builder.getDenseI64ArrayAttr(axes), keepdims);
}

static NodeHandler reduceHandler(ReduceVariant variant, bool axesFromInput) {
  return [=](NodeContext &n) -> LogicalResult {
    FailureOr<Value> input = requireOperand(n, 0);
    if (failed(input))
      return failure();
    auto type = cast<RankedTensorType>(input->getType());
    bool isFloat = isa<FloatType>(type.getElementType());
    bool needsFloat = variant == ReduceVariant::L2 ||
                      variant == ReduceVariant::LogSum ||
                      variant == ReduceVariant::LogSumExp;
    if (needsFloat && !isFloat)
      return n.emitError() << "expects a floating-point input, got " << type;
    bool isBool = type.getElementType().isInteger(1);
    bool isMinMax =
        variant == ReduceVariant::Max || variant == ReduceVariant::Min;
    // Opset 20 allows bool for ReduceMax/ReduceMin (any/all).
    if (isBool && !isMinMax)
      return n.emitError() << "does not reduce bool tensors";
    FailureOr<SmallVector<int64_t>> axes =
        getReduceAxes(n, type.getRank(), axesFromInput);
    if (failed(axes))
      return failure();
    bool keepdims = n.attrInt("keepdims", 1) != 0;
    Value x = *input;
    ReduceKind kind = getCoreKind(variant);

    if (isBool) {
      // Reduced as ui8 0/1: max is "any", min is "all".
      Type byte = n.builder.getIntegerType(8, /*isSigned=*/false);
      Value bytes = CastOp::create(n.builder, n.loc, type.clone(byte), x);
      Value reduced = createReduce(n, bytes, kind, *axes, keepdims);
      auto reducedType = cast<RankedTensorType>(reduced.getType());
      n.setResult(0, CastOp::create(n.builder, n.loc,
                                    reducedType.clone(n.builder.getI1Type()),
                                    reduced));
      return success();
    }

    if (variant == ReduceVariant::LogSumExp) {
      // log(sum(exp(x - m))) + m with m = max(x): exp cannot overflow.
      Value max = createReduce(n, x, ReduceKind::Max, *axes, true);
      Value exps = ExpOp::create(n.builder, n.loc, binary<SubOp>(n, x, max));
      Value sum = createReduce(n, exps, ReduceKind::Sum, *axes, true);
      Value lse = binary<AddOp>(n, LogOp::create(n.builder, n.loc, sum), max);
      // The statistics kept their reduced dims; drop them if asked.
      SmallVector<int64_t> shape;
      for (int64_t i = 0; i < type.getRank(); ++i)
        if (!llvm::is_contained(*axes, i))
          shape.push_back(type.getDimSize(i));
        else if (keepdims)
          shape.push_back(1);
      n.setResult(0, reshapeTo(n, lse, shape));
      return success();
    }

    if (variant == ReduceVariant::L1)
      x = AbsOp::create(n.builder, n.loc, x);
    else if (variant == ReduceVariant::L2 ||
             variant == ReduceVariant::SumSquare)
      x = binary<MulOp>(n, x, x);
    Value result = createReduce(n, x, kind, *axes, keepdims);
    if (variant == ReduceVariant::L2)
      result = SqrtOp::create(n.builder, n.loc, result);
    else if (variant == ReduceVariant::LogSum)
      result = LogOp::create(n.builder, n.loc, result);
    n.setResult(0, result);
    return success();
  };
}

//===----------------------------------------------------------------------===//
// ArgMax, ArgMin
//===----------------------------------------------------------------------===//

static NodeHandler argReduceHandler(ArgReduceKind kind) {
  return [=](NodeContext &n) -> LogicalResult {
    FailureOr<Value> input = requireOperand(n, 0);
    if (failed(input))
      return failure();
    auto type = cast<RankedTensorType>(input->getType());
    if (type.getElementType().isInteger(1))
      return n.emitError() << "does not reduce bool tensors";
    if (type.getRank() == 0)
      return n.emitError() << "expects an input of rank >= 1";
    FailureOr<int64_t> axis =
        normalizeAxis(n, n.attrInt("axis", 0), type.getRank());
    if (failed(axis))
      return failure();
    n.setResult(0, ArgReduceOp::create(n.builder, n.loc, *input, kind, *axis,
                                       n.attrInt("keepdims", 1) != 0,
                                       n.attrInt("select_last_index", 0) != 0));
    return success();
  };
}

//===----------------------------------------------------------------------===//
// Softmax, LogSoftmax, Hardmax
//===----------------------------------------------------------------------===//

/// Softmax-like ops: opset 13 works along one axis; before that the input is
/// coerced to 2-D at `axis` and the op works along the flattened rows.
template <typename OpTy>
static LogicalResult importSoftmaxLike(NodeContext &n) {
  FailureOr<Value> input = requireFloatOperand(n, 0);
  if (failed(input))
    return failure();
  auto type = cast<RankedTensorType>(input->getType());
  int64_t rank = type.getRank();
  if (rank == 0)
    return n.emitError() << "expects an input of rank >= 1";
  FailureOr<int64_t> axis =
      normalizeAxis(n, n.attrInt("axis", n.opset >= 13 ? -1 : 1), rank);
  if (failed(axis))
    return failure();
  if (n.opset >= 13) {
    n.setResult(0, OpTy::create(n.builder, n.loc, *input, *axis));
    return success();
  }
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < *axis ? outer : inner) *= type.getDimSize(i);
  Value flat = reshapeTo(n, *input, {outer, inner});
  Value result = OpTy::create(n.builder, n.loc, flat, 1);
  n.setResult(0, reshapeTo(n, result, type.getShape()));
  return success();
}

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

static LogicalResult importLayerNormalization(NodeContext &n) {
  FailureOr<Value> input = requireFloatOperand(n, 0);
  FailureOr<Value> scale = requireFloatOperand(n, 1);
  if (failed(input) || failed(scale))
    return failure();
  Value bias = n.operand(2);
  auto type = cast<RankedTensorType>(input->getType());
  if (type.getRank() == 0)
    return n.emitError() << "expects an input of rank >= 1";
  FailureOr<int64_t> axis =
      normalizeAxis(n, n.attrInt("axis", -1), type.getRank());
  if (failed(axis))
    return failure();
  int64_t stash = n.attrInt("stash_type", 1);
  ArrayRef<int64_t> normalized = type.getShape().drop_front(*axis);
  for (Value param : {*scale, bias}) {
    if (!param)
      continue;
    auto paramType = cast<RankedTensorType>(param.getType());
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes(normalized, paramType.getShape());
    if (paramType.getElementType() != type.getElementType())
      return n.emitError() << "scale/bias element type "
                           << paramType.getElementType()
                           << " differs from the input's";
    if (failed(shape) || ArrayRef<int64_t>(*shape) != normalized)
      return n.emitError() << "scale/bias " << paramType
                           << " does not broadcast to the normalized shape";
  }
  auto op = LayerNormOp::create(n.builder, n.loc, *input, *scale, bias, *axis,
                                APFloat(n.attrFloat("epsilon", 1e-5f)), stash);
  n.setResult(0, op.getResult());
  n.setResult(1, op.getMean());
  n.setResult(2, op.getInvStdDev());
  return success();
}

static LogicalResult importBatchNormalization(NodeContext &n) {
  if (n.attrInt("training_mode", 0) != 0)
    return n.emitError() << "training_mode = 1 is not supported (inference "
                            "only)";
  if (n.opset < 14 && n.getNumResults() > 1) {
    for (unsigned i = 1; i < n.getNumResults(); ++i)
      if (!n.node.output(i).empty())
        return n.emitError() << "the training outputs (mean, var, saved "
                                "mean/var) are not supported";
  }
  if (n.opset < 9 && n.attrInt("spatial", 1) != 1)
    return n.emitError() << "spatial = 0 is not supported";
  FailureOr<Value> x = requireFloatOperand(n, 0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  if (type.getRank() < 2)
    return n.emitError() << "expects an input of rank >= 2, got " << type;
  int64_t channels = type.getDimSize(1);
  SmallVector<Value> params;
  for (unsigned i = 1; i <= 4; ++i) {
    FailureOr<Value> p = requireOperand(n, i);
    if (failed(p))
      return failure();
    auto pType = cast<RankedTensorType>(p->getType());
    if (!isa<FloatType>(pType.getElementType()))
      return n.emitError() << "input " << i << " must be a float tensor, got "
                           << pType;
    // Opset 15 lets the parameters have another float type than X.
    if (pType.getElementType() != type.getElementType()) {
      pType = RankedTensorType::get(pType.getShape(), type.getElementType());
      *p = CastOp::create(n.builder, n.loc, pType, *p);
    }
    if (pType.getNumElements() != channels)
      return n.emitError() << "input " << i << " " << pType << " must hold "
                           << channels << " channel values";
    params.push_back(channelParam(n, *p, type.getRank()));
  }
  // y = (x - mean) * (scale / sqrt(var + epsilon)) + bias.
  Value eps =
      scalarConstant(n, type.getElementType(), n.attrFloat("epsilon", 1e-5f));
  Value invStd = ReciprocalOp::create(
      n.builder, n.loc,
      SqrtOp::create(n.builder, n.loc, binary<AddOp>(n, params[3], eps)));
  Value factor = binary<MulOp>(n, params[0], invStd);
  Value centered = binary<SubOp>(n, *x, params[2]);
  n.setResult(0,
              binary<AddOp>(n, binary<MulOp>(n, centered, factor), params[1]));
  return success();
}

/// (x - mean) / sqrt(var + eps) over `axes` (kept as size-1 dims).
static Value normalizeOver(NodeContext &n, Value x, ArrayRef<int64_t> axes,
                           double epsilon, bool epsOnStd) {
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  Value mean = createReduce(n, x, ReduceKind::Mean, axes, true);
  Value centered = binary<SubOp>(n, x, mean);
  Value var = createReduce(n, binary<MulOp>(n, centered, centered),
                           ReduceKind::Mean, axes, true);
  Value eps = scalarConstant(n, element, epsilon);
  Value std = epsOnStd
                  ? binary<AddOp>(n, SqrtOp::create(n.builder, n.loc, var), eps)
                  : SqrtOp::create(n.builder, n.loc, binary<AddOp>(n, var, eps))
                        .getResult();
  return binary<DivOp>(n, centered, std);
}

static LogicalResult importInstanceNormalization(NodeContext &n) {
  FailureOr<Value> x = requireFloatOperand(n, 0);
  FailureOr<Value> scale = requireOperand(n, 1);
  FailureOr<Value> bias = requireOperand(n, 2);
  if (failed(x) || failed(scale) || failed(bias))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  if (type.getRank() < 3)
    return n.emitError() << "expects an input of rank >= 3, got " << type;
  for (Value p : {*scale, *bias}) {
    auto pType = cast<RankedTensorType>(p.getType());
    if (pType.getElementType() != type.getElementType() ||
        pType.getNumElements() != type.getDimSize(1))
      return n.emitError() << "scale/bias " << pType << " must hold "
                           << type.getDimSize(1) << " values of "
                           << type.getElementType();
  }
  SmallVector<int64_t> axes;
  for (int64_t i = 2; i < type.getRank(); ++i)
    axes.push_back(i);
  Value y = normalizeOver(n, *x, axes, n.attrFloat("epsilon", 1e-5f),
                          /*epsOnStd=*/false);
  y = binary<MulOp>(n, y, channelParam(n, *scale, type.getRank()));
  n.setResult(0, binary<AddOp>(n, y, channelParam(n, *bias, type.getRank())));
  return success();
}

static LogicalResult importMeanVarianceNormalization(NodeContext &n) {
  FailureOr<Value> x = requireFloatOperand(n, 0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  SmallVector<int64_t> axes;
  for (int64_t axis :
       n.attrInts("axes").value_or(SmallVector<int64_t>{0, 2, 3})) {
    FailureOr<int64_t> normalized =
        normalizeAxis(n, axis, type.getRank(), "axes entry");
    if (failed(normalized))
      return failure();
    if (!llvm::is_contained(axes, *normalized))
      axes.push_back(*normalized);
  }
  llvm::sort(axes);
  // ONNX's function body adds 1e-9 to the standard deviation.
  n.setResult(0, normalizeOver(n, *x, axes, 1e-9, /*epsOnStd=*/true));
  return success();
}

static LogicalResult importLRN(NodeContext &n) {
  FailureOr<Value> x = requireFloatOperand(n, 0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  if (type.getRank() < 3)
    return n.emitError() << "expects an input of rank >= 3, got " << type;
  int64_t size = n.attrInt("size", 0);
  if (size < 1)
    return n.emitError() << "size must be a positive integer, got " << size;
  n.setResult(0, LRNOp::create(n.builder, n.loc, *x, size,
                               APFloat(n.attrFloat("alpha", 1e-4f)),
                               APFloat(n.attrFloat("beta", 0.75f)),
                               APFloat(n.attrFloat("bias", 1.0f))));
  return success();
}

//===----------------------------------------------------------------------===//
// CumSum, TopK, Einsum
//===----------------------------------------------------------------------===//

/// CumSum and CumProd share their signature.
template <typename OpTy> static LogicalResult importCumulative(NodeContext &n) {
  FailureOr<Value> x = requireOperand(n, 0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  if (type.getElementType().isInteger(1))
    return n.emitError() << "does not accumulate bool tensors";
  std::optional<SmallVector<int64_t>> axisValues = n.constantInts(1);
  if (!axisValues || axisValues->size() != 1)
    return n.emitError() << "axis (input 1) must be a constant integer scalar";
  if (type.getRank() == 0)
    return n.emitError() << "expects an input of rank >= 1";
  FailureOr<int64_t> axis =
      normalizeAxis(n, axisValues->front(), type.getRank());
  if (failed(axis))
    return failure();
  n.setResult(0, OpTy::create(n.builder, n.loc, *x, *axis,
                              n.attrInt("exclusive", 0) != 0,
                              n.attrInt("reverse", 0) != 0));
  return success();
}

static LogicalResult importTopK(NodeContext &n) {
  FailureOr<Value> x = requireOperand(n, 0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  if (type.getElementType().isInteger(1))
    return n.emitError() << "does not sort bool tensors";
  if (type.getRank() == 0)
    return n.emitError() << "expects an input of rank >= 1";
  int64_t k;
  if (n.opset >= 10) {
    std::optional<SmallVector<int64_t>> kValues = n.constantInts(1);
    if (!kValues || kValues->size() != 1)
      return n.emitError() << "k (input 1) must be a constant integer with "
                              "one element";
    k = kValues->front();
  } else {
    k = n.attrInt("k", -1);
  }
  FailureOr<int64_t> axis =
      normalizeAxis(n, n.attrInt("axis", -1), type.getRank());
  if (failed(axis))
    return failure();
  int64_t dim = type.getDimSize(*axis);
  if (k < 0 || k > dim)
    return n.emitError() << "k = " << k << " out of range for axis " << *axis
                         << " of size " << dim;
  auto op = TopKOp::create(n.builder, n.loc, *x, *axis, k,
                           n.attrInt("largest", 1) != 0);
  n.setResult(0, op.getValues());
  n.setResult(1, op.getIndices());
  return success();
}

static LogicalResult importEinsum(NodeContext &n) {
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < n.getNumOperands(); ++i) {
    FailureOr<Value> v = requireOperand(n, i);
    if (failed(v))
      return failure();
    inputs.push_back(*v);
  }
  if (inputs.empty())
    return n.emitError() << "expects at least one input";
  Type element = cast<RankedTensorType>(inputs[0].getType()).getElementType();
  for (Value v : inputs)
    if (cast<RankedTensorType>(v.getType()).getElementType() != element)
      return n.emitError() << "input element types differ";
  if (!n.attr("equation"))
    return n.emitError() << "missing the equation attribute";
  StringAttr equation = n.builder.getStringAttr(n.attrString("equation", ""));
  SmallVector<Type> inferred;
  // Report a malformed equation at the node rather than building a bad op.
  EinsumOp::Properties properties;
  properties.equation = equation;
  if (failed(EinsumOp::inferReturnTypes(
          n.builder.getContext(), n.loc,
          EinsumOp::Adaptor(inputs, nullptr, properties), inferred)))
    return failure();
  n.setResult(0, EinsumOp::create(n.builder, n.loc, inputs, equation));
  return success();
}

void mlir::ridge::onnx_import::registerReductionHandlers(
    OnnxHandlerTable &table) {
  table.add("Softmax", 1, importSoftmaxLike<SoftmaxOp>);
  table.add("LogSoftmax", 1, importSoftmaxLike<LogSoftmaxOp>);
  table.add("Hardmax", 1, importSoftmaxLike<HardmaxOp>);

  // ReduceSum takes its axes as an input from opset 13, the others from 18.
  table.add("ReduceSum", 1, reduceHandler(ReduceVariant::Sum, false));
  table.add("ReduceSum", 13, reduceHandler(ReduceVariant::Sum, true));
  const std::pair<StringRef, ReduceVariant> others[] = {
      {"ReduceMean", ReduceVariant::Mean},
      {"ReduceMax", ReduceVariant::Max},
      {"ReduceMin", ReduceVariant::Min},
      {"ReduceProd", ReduceVariant::Prod},
      {"ReduceL1", ReduceVariant::L1},
      {"ReduceL2", ReduceVariant::L2},
      {"ReduceLogSum", ReduceVariant::LogSum},
      {"ReduceLogSumExp", ReduceVariant::LogSumExp},
      {"ReduceSumSquare", ReduceVariant::SumSquare}};
  for (auto [name, variant] : others) {
    table.add(name, 1, reduceHandler(variant, false));
    table.add(name, 18, reduceHandler(variant, true));
  }

  table.add("ArgMax", 1, argReduceHandler(ArgReduceKind::ArgMax));
  table.add("ArgMin", 1, argReduceHandler(ArgReduceKind::ArgMin));

  table.add("LayerNormalization", 17, importLayerNormalization);
  table.add("BatchNormalization", 1, importBatchNormalization);
  table.add("InstanceNormalization", 1, importInstanceNormalization);
  table.add("MeanVarianceNormalization", 1, importMeanVarianceNormalization);
  table.add("LRN", 1, importLRN);

  table.add("CumSum", 11, importCumulative<CumSumOp>);
  table.add("CumProd", 26, importCumulative<CumProdOp>);
  table.add("TopK", 1, importTopK);
  table.add("Einsum", 12, importEinsum);
}
