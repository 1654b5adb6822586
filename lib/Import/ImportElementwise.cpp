//===- ImportElementwise.cpp - elementwise math, comparison and logic -----===//
//
// ONNX node handlers: elementwise math, comparison and logic. Activations
// that ONNX defines as functions of other ops (Elu, Selu, HardSwish, ...) are
// expanded here into ridge ops; window functions with a constant size become
// constants.
//
// Every op is built with createOrFold so that elementwise arithmetic on
// constants (shape computations) folds while importing.
//
//===----------------------------------------------------------------------===//

#include "ImporterInternal.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::onnx_import;

static Type getElementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// Rank-0 constant of `elementType` holding `value` (truncated toward zero
/// for integer types); it broadcasts against any operand.
static Value scalarConstant(NodeContext &n, Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute element;
  if (isa<FloatType>(elementType))
    element = n.builder.getFloatAttr(elementType, value);
  else
    element = IntegerAttr::get(
        elementType, APInt(elementType.getIntOrFloatBitWidth(),
                           static_cast<int64_t>(value), /*isSigned=*/true));
  return ConstantOp::create(n.builder, n.loc,
                            DenseElementsAttr::get(type, element));
}

/// `input` converted to `elementType` (no op when it already has it).
static Value castTo(NodeContext &n, Value input, Type elementType) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getElementType() == elementType)
    return input;
  return n.builder.createOrFold<CastOp>(n.loc, type.clone(elementType), input);
}

/// Builds (and folds, when its operands are constants) an op whose operands
/// are known to be compatible, e.g. an operand and a rank-0 constant of its
/// element type in the activation expansions.
template <typename OpTy, typename... Args>
static Value build(NodeContext &n, Args &&...args) {
  return n.builder.createOrFold<OpTy>(n.loc, std::forward<Args>(args)...);
}

/// Checks that `OpTy` accepts `operands` (element types, broadcasting),
/// reporting the problem at the node instead of building an invalid op.
template <typename OpTy>
static LogicalResult checkOperands(NodeContext &n, ValueRange operands) {
  SmallVector<Type> inferred;
  return OpTy::inferReturnTypes(n.builder.getContext(), n.loc,
                                typename OpTy::Adaptor(operands), inferred);
}

static LogicalResult requireFloat(NodeContext &n, Value input) {
  if (isa<FloatType>(getElementTypeOf(input)))
    return success();
  return n.emitError() << "expects a floating-point input, got "
                       << input.getType();
}

static LogicalResult requireBool(NodeContext &n, Value input) {
  if (getElementTypeOf(input).isInteger(1))
    return success();
  return n.emitError() << "expects a bool input, got " << input.getType();
}

//===----------------------------------------------------------------------===//
// Generic handlers
//===----------------------------------------------------------------------===//

/// Binary ops whose operands must share an element type; result types are
/// inferred (broadcasting).
template <typename OpTy> static NodeHandler binaryHandler() {
  return [](NodeContext &n) -> LogicalResult {
    FailureOr<Value> lhs = requireOperand(n, 0);
    FailureOr<Value> rhs = requireOperand(n, 1);
    if (failed(lhs) || failed(rhs))
      return failure();
    Type lhsElement = getElementTypeOf(*lhs),
         rhsElement = getElementTypeOf(*rhs);
    if (lhsElement != rhsElement)
      return n.emitError() << "input element types differ: " << lhsElement
                           << " vs " << rhsElement;
    FailureOr<Value> result = createInferred<OpTy>(n, *lhs, *rhs);
    if (failed(result))
      return failure();
    n.setResult(0, *result);
    return success();
  };
}

/// And/Or/Xor: bool operands.
template <typename OpTy> static NodeHandler logicalHandler() {
  return [](NodeContext &n) -> LogicalResult {
    FailureOr<Value> lhs = requireOperand(n, 0);
    FailureOr<Value> rhs = requireOperand(n, 1);
    if (failed(lhs) || failed(rhs) || failed(requireBool(n, *lhs)) ||
        failed(requireBool(n, *rhs)))
      return failure();
    FailureOr<Value> result = createInferred<OpTy>(n, *lhs, *rhs);
    if (failed(result))
      return failure();
    n.setResult(0, *result);
    return success();
  };
}

/// BitwiseAnd/Or/Xor: the logical ops on integer operands of one type.
template <typename OpTy> static NodeHandler bitwiseHandler() {
  return [](NodeContext &n) -> LogicalResult {
    FailureOr<Value> lhs = requireOperand(n, 0);
    FailureOr<Value> rhs = requireOperand(n, 1);
    if (failed(lhs) || failed(rhs))
      return failure();
    if (!getElementTypeOf(*lhs).isInteger() ||
        getElementTypeOf(*lhs) != getElementTypeOf(*rhs))
      return n.emitError() << "expects two integer inputs of one type, got "
                           << lhs->getType() << " and " << rhs->getType();
    FailureOr<Value> result = createInferred<OpTy>(n, *lhs, *rhs);
    if (failed(result))
      return failure();
    n.setResult(0, *result);
    return success();
  };
}

static LogicalResult importBitwiseNot(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  if (!getElementTypeOf(*input).isInteger())
    return n.emitError() << "expects an integer input, got "
                         << input->getType();
  n.setResult(0, build<NotOp>(n, *input));
  return success();
}

static LogicalResult importBitCast(NodeContext &n) {
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
  auto bits = [](Type t) {
    unsigned width = t.getIntOrFloatBitWidth();
    return width == 1 ? 8u : width;
  };
  if (bits(type.getElementType()) != bits(elementType))
    return n.emitError() << "cannot reinterpret " << type.getElementType()
                         << " as " << elementType
                         << ": the element sizes differ";
  n.setResult(0, build<BitCastOp>(n, type.clone(elementType), *input));
  return success();
}

/// Variadic Max/Min/Sum fold left over their inputs (broadcasting).
template <typename OpTy> static NodeHandler variadicHandler() {
  return [](NodeContext &n) -> LogicalResult {
    FailureOr<Value> acc = requireOperand(n, 0);
    if (failed(acc))
      return failure();
    for (unsigned i = 1; i < n.getNumOperands(); ++i) {
      FailureOr<Value> next = requireOperand(n, i);
      if (failed(next))
        return failure();
      if (getElementTypeOf(*acc) != getElementTypeOf(*next))
        return n.emitError()
               << "input element types differ: " << getElementTypeOf(*acc)
               << " vs " << getElementTypeOf(*next);
      acc = createInferred<OpTy>(n, *acc, *next);
      if (failed(acc))
        return failure();
    }
    n.setResult(0, *acc);
    return success();
  };
}

enum class InputKind { Any, Float, Bool };

template <typename OpTy, InputKind kind = InputKind::Any>
static NodeHandler unaryHandler() {
  return [](NodeContext &n) -> LogicalResult {
    FailureOr<Value> input = requireOperand(n, 0);
    if (failed(input))
      return failure();
    if (kind == InputKind::Float && failed(requireFloat(n, *input)))
      return failure();
    if (kind == InputKind::Bool && failed(requireBool(n, *input)))
      return failure();
    n.setResult(0, build<OpTy>(n, *input));
    return success();
  };
}

//===----------------------------------------------------------------------===//
// Ops with attributes or mixed types
//===----------------------------------------------------------------------===//

/// Pow: the exponent may have another element type than the base; the
/// result has the base's type. An integer base with a float exponent is
/// raised in the exponent's float type and truncated back, as ONNX's
/// reference (numpy) does.
static LogicalResult importPow(NodeContext &n) {
  FailureOr<Value> base = requireOperand(n, 0);
  FailureOr<Value> exponent = requireOperand(n, 1);
  if (failed(base) || failed(exponent))
    return failure();
  Type baseElement = getElementTypeOf(*base);
  Type expElement = getElementTypeOf(*exponent);
  Value lhs = *base, rhs = *exponent;
  if (!isa<FloatType>(baseElement) && isa<FloatType>(expElement))
    lhs = castTo(n, lhs, expElement);
  else
    rhs = castTo(n, rhs, baseElement);
  FailureOr<Value> result = createInferred<PowOp>(n, lhs, rhs);
  if (failed(result))
    return failure();
  n.setResult(0, castTo(n, *result, baseElement));
  return success();
}

static LogicalResult importMod(NodeContext &n) {
  FailureOr<Value> lhs = requireOperand(n, 0);
  FailureOr<Value> rhs = requireOperand(n, 1);
  if (failed(lhs) || failed(rhs))
    return failure();
  if (getElementTypeOf(*lhs) != getElementTypeOf(*rhs))
    return n.emitError() << "input element types differ: "
                         << getElementTypeOf(*lhs) << " vs "
                         << getElementTypeOf(*rhs);
  // The spec asks for fmod = 1 with floats, but its reference (and newer
  // node tests) define fmod = 0 on floats as numpy's floor mod.
  bool fmod = n.attrInt("fmod", 0) != 0;
  if (failed(checkOperands<ModOp>(n, {*lhs, *rhs})))
    return failure();
  n.setResult(0, build<ModOp>(n, *lhs, *rhs, fmod));
  return success();
}

static LogicalResult importBitShift(NodeContext &n) {
  FailureOr<Value> lhs = requireOperand(n, 0);
  FailureOr<Value> rhs = requireOperand(n, 1);
  if (failed(lhs) || failed(rhs))
    return failure();
  Type element = getElementTypeOf(*lhs);
  // Opset 11 defines unsigned types only; signed ones shift arithmetically
  // (newer opsets), which the op handles for every opset.
  if (!element.isInteger() || element.isInteger(1) ||
      element != getElementTypeOf(*rhs))
    return n.emitError() << "expects two integer inputs of one type, "
                         << "got " << lhs->getType() << " and "
                         << rhs->getType();
  std::string direction = n.attrString("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    return n.emitError() << "direction must be LEFT or RIGHT, got '"
                         << direction << "'";
  if (failed(checkOperands<BitShiftOp>(n, {*lhs, *rhs})))
    return failure();
  n.setResult(0, build<BitShiftOp>(n, *lhs, *rhs,
                                   direction == "LEFT" ? "left" : "right"));
  return success();
}

static LogicalResult importWhere(NodeContext &n) {
  FailureOr<Value> cond = requireOperand(n, 0);
  FailureOr<Value> lhs = requireOperand(n, 1);
  FailureOr<Value> rhs = requireOperand(n, 2);
  if (failed(cond) || failed(lhs) || failed(rhs) ||
      failed(requireBool(n, *cond)))
    return failure();
  if (failed(checkOperands<SelectOp>(n, {*cond, *lhs, *rhs})))
    return failure();
  n.setResult(0, build<SelectOp>(n, *cond, *lhs, *rhs));
  return success();
}

static LogicalResult importIsInf(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input) || failed(requireFloat(n, *input)))
    return failure();
  n.setResult(0, build<IsInfOp>(n, *input, n.attrInt("detect_positive", 1) != 0,
                                n.attrInt("detect_negative", 1) != 0));
  return success();
}

static LogicalResult importCastLike(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  FailureOr<Value> like = requireOperand(n, 1);
  if (failed(input) || failed(like))
    return failure();
  // CastLike-19's `saturate` (default 1) applies to float8 results only.
  bool saturate = n.attrInt("saturate", 1) != 0;
  auto type = cast<RankedTensorType>(input->getType());
  Type elementType = getElementTypeOf(*like);
  n.setResult(0, type.getElementType() == elementType
                     ? *input
                     : n.builder.createOrFold<CastOp>(
                           n.loc, type.clone(elementType), *input, saturate));
  return success();
}

/// Clip-6: `min`/`max` attributes (floats). Bounds that are absent are not
/// applied (their defaults are the float type's limits).
static LogicalResult importClip6(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input) || failed(requireFloat(n, *input)))
    return failure();
  Type element = getElementTypeOf(*input);
  Value result = *input;
  if (n.attr("min"))
    result = build<MaxOp>(n, result,
                          scalarConstant(n, element, n.attrFloat("min", 0)));
  if (n.attr("max"))
    result = build<MinOp>(n, result,
                          scalarConstant(n, element, n.attrFloat("max", 0)));
  n.setResult(0, result);
  return success();
}

/// Clip-11+: optional scalar inputs `min` and `max` of the input's type;
/// min(max(x, lo), hi), so that lo > hi gives hi as ONNX specifies.
static LogicalResult importClip11(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  Value result = *input;
  for (unsigned i : {1u, 2u}) {
    Value bound = n.operand(i);
    if (!bound)
      continue;
    auto boundType = cast<RankedTensorType>(bound.getType());
    if (boundType.getElementType() != getElementTypeOf(*input) ||
        boundType.getNumElements() != 1)
      return n.emitError() << (i == 1 ? "min" : "max")
                           << " must be a scalar of the input's element type, "
                           << "got " << boundType;
    bound = reshapeTo(n, bound, {});
    result = i == 1 ? build<MaxOp>(n, result, bound)
                    : build<MinOp>(n, result, bound);
  }
  n.setResult(0, result);
  return success();
}

/// Mean: the sum of the inputs (broadcasting) divided by their count.
static LogicalResult importMean(NodeContext &n) {
  FailureOr<Value> acc = requireOperand(n, 0);
  if (failed(acc) || failed(requireFloat(n, *acc)))
    return failure();
  Type element = getElementTypeOf(*acc);
  for (unsigned i = 1; i < n.getNumOperands(); ++i) {
    FailureOr<Value> next = requireOperand(n, i);
    if (failed(next))
      return failure();
    if (getElementTypeOf(*next) != element)
      return n.emitError() << "input element types differ: " << element
                           << " vs " << getElementTypeOf(*next);
    acc = createInferred<AddOp>(n, *acc, *next);
    if (failed(acc))
      return failure();
  }
  Value count = scalarConstant(n, element, n.getNumOperands());
  n.setResult(0, build<DivOp>(n, *acc, count));
  return success();
}

//===----------------------------------------------------------------------===//
// Activations defined as functions
//===----------------------------------------------------------------------===//

/// Handlers receive the float input and its element type, and return the
/// expanded result.
using ActivationBody = function_ref<Value(NodeContext &, Value, Type)>;

static LogicalResult importActivation(NodeContext &n, ActivationBody body) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input) || failed(requireFloat(n, *input)))
    return failure();
  n.setResult(0, body(n, *input, getElementTypeOf(*input)));
  return success();
}

/// alpha * (exp(x) - 1), the negative branch of Elu and Selu.
static Value expMinusOne(NodeContext &n, Value x, Type t, double alpha) {
  Value em1 = build<SubOp>(n, build<ExpOp>(n, x), scalarConstant(n, t, 1.0));
  return build<MulOp>(n, scalarConstant(n, t, alpha), em1);
}

/// x < 0 (or x <= 0 when `orEqual`).
static Value isNegative(NodeContext &n, Value x, Type t, bool orEqual = false) {
  Value zero = scalarConstant(n, t, 0.0);
  if (orEqual)
    return build<LessEqualOp>(n, x, zero);
  return build<LessOp>(n, x, zero);
}

static LogicalResult importElu(NodeContext &n) {
  double alpha = n.attrFloat("alpha", 1.0f);
  return importActivation(n, [&](NodeContext &n, Value x, Type t) {
    return build<SelectOp>(n, isNegative(n, x, t), expMinusOne(n, x, t, alpha),
                           x);
  });
}

static LogicalResult importSelu(NodeContext &n) {
  double alpha = n.attrFloat("alpha", 1.67326319217681884765625f);
  double gamma = n.attrFloat("gamma", 1.05070102214813232421875f);
  return importActivation(n, [&](NodeContext &n, Value x, Type t) {
    Value inner = build<SelectOp>(n, isNegative(n, x, t, /*orEqual=*/true),
                                  expMinusOne(n, x, t, alpha), x);
    return build<MulOp>(n, scalarConstant(n, t, gamma), inner);
  });
}

/// Celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
static LogicalResult importCelu(NodeContext &n) {
  double alpha = n.attrFloat("alpha", 1.0f);
  return importActivation(n, [&](NodeContext &n, Value x, Type t) {
    Value zero = scalarConstant(n, t, 0.0);
    Value scaled = build<DivOp>(n, x, scalarConstant(n, t, alpha));
    Value negative = build<MinOp>(n, zero, expMinusOne(n, scaled, t, alpha));
    return build<AddOp>(n, build<MaxOp>(n, zero, x), negative);
  });
}

static LogicalResult importLeakyRelu(NodeContext &n) {
  double alpha = n.attrFloat("alpha", 0.01f);
  return importActivation(n, [&](NodeContext &n, Value x, Type t) {
    Value scaled = build<MulOp>(n, scalarConstant(n, t, alpha), x);
    return build<SelectOp>(n, isNegative(n, x, t), scaled, x);
  });
}

/// PRelu-7+: the slope broadcasts unidirectionally to the input.
static LogicalResult importPRelu(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  FailureOr<Value> slope = requireOperand(n, 1);
  if (failed(input) || failed(slope))
    return failure();
  auto inputType = cast<RankedTensorType>(input->getType());
  auto slopeType = cast<RankedTensorType>(slope->getType());
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(inputType.getShape(), slopeType.getShape());
  if (slopeType.getElementType() != inputType.getElementType() ||
      failed(shape) || ArrayRef<int64_t>(*shape) != inputType.getShape())
    return n.emitError() << "slope " << slopeType
                         << " does not broadcast to the input " << inputType;
  Type t = inputType.getElementType();
  Value zero = scalarConstant(n, t, 0.0);
  Value scaled = build<MulOp>(n, *slope, *input);
  n.setResult(
      0, build<SelectOp>(n, build<LessOp>(n, *input, zero), scaled, *input));
  return success();
}

/// max(0, min(1, alpha * x + beta)).
static Value hardSigmoid(NodeContext &n, Value x, Type t, double alpha,
                         double beta) {
  Value linear =
      build<AddOp>(n, build<MulOp>(n, scalarConstant(n, t, alpha), x),
                   scalarConstant(n, t, beta));
  Value upper = build<MinOp>(n, scalarConstant(n, t, 1.0), linear);
  return build<MaxOp>(n, scalarConstant(n, t, 0.0), upper);
}

static LogicalResult importHardSigmoid(NodeContext &n) {
  double alpha = n.attrFloat("alpha", 0.2f);
  double beta = n.attrFloat("beta", 0.5f);
  return importActivation(n, [&](NodeContext &n, Value x, Type t) {
    return hardSigmoid(n, x, t, alpha, beta);
  });
}

static LogicalResult importHardSwish(NodeContext &n) {
  return importActivation(n, [](NodeContext &n, Value x, Type t) {
    return build<MulOp>(n, x, hardSigmoid(n, x, t, 1.0 / 6.0, 0.5));
  });
}

static LogicalResult importSoftplus(NodeContext &n) {
  return importActivation(n, [](NodeContext &n, Value x, Type t) {
    return build<LogOp>(
        n, build<AddOp>(n, build<ExpOp>(n, x), scalarConstant(n, t, 1.0)));
  });
}

/// Mish-18: x * tanh(softplus(x)).
static LogicalResult importMish(NodeContext &n) {
  return importActivation(n, [](NodeContext &n, Value x, Type t) {
    Value softplus = build<LogOp>(
        n, build<AddOp>(n, build<ExpOp>(n, x), scalarConstant(n, t, 1.0)));
    return build<MulOp>(n, x, build<TanhOp>(n, softplus));
  });
}

static LogicalResult importSoftsign(NodeContext &n) {
  return importActivation(n, [](NodeContext &n, Value x, Type t) {
    Value denom =
        build<AddOp>(n, build<AbsOp>(n, x), scalarConstant(n, t, 1.0));
    return build<DivOp>(n, x, denom);
  });
}

static LogicalResult importThresholdedRelu(NodeContext &n) {
  double alpha = n.attrFloat("alpha", 1.0f);
  return importActivation(n, [&](NodeContext &n, Value x, Type t) {
    Value above = build<GreaterOp>(n, x, scalarConstant(n, t, alpha));
    return build<SelectOp>(n, above, x, scalarConstant(n, t, 0.0));
  });
}

/// Shrink: x + bias below -lambd, x - bias above lambd, 0 in between.
static LogicalResult importShrink(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  double bias = n.attrFloat("bias", 0.0f);
  double lambd = n.attrFloat("lambd", 0.5f);
  Value x = *input;
  Type t = getElementTypeOf(x);
  Value below = build<LessOp>(n, x, scalarConstant(n, t, -lambd));
  Value above = build<GreaterOp>(n, x, scalarConstant(n, t, lambd));
  Value zero = scalarConstant(n, t, 0.0);
  Value high = build<SelectOp>(
      n, above, build<SubOp>(n, x, scalarConstant(n, t, bias)), zero);
  n.setResult(0, build<SelectOp>(n, below,
                                 build<AddOp>(n, x, scalarConstant(n, t, bias)),
                                 high));
  return success();
}

//===----------------------------------------------------------------------===//
// Window functions
//===----------------------------------------------------------------------===//

/// Hann/Hamming/Blackman windows (opset 17): a generalized cosine window
/// sum_k (-1)^k a_k cos(2 pi k n / N), where N is the size when `periodic`
/// and size - 1 otherwise. The output shape depends on the size's value, so
/// it must be a constant; the window is then computed here in double.
static NodeHandler windowHandler(SmallVector<double, 3> coefficients) {
  return [coefficients](NodeContext &n) -> LogicalResult {
    std::optional<SmallVector<int64_t>> size = n.constantInts(0);
    if (!size || size->size() != 1)
      return n.emitError() << "the window size (input 0) must be a constant "
                              "scalar: the output shape depends on its value";
    int64_t count = (*size)[0];
    if (count < 0)
      return n.emitError() << "window size " << count << " is negative";
    // Computed here, one element at a time: bounded before any is.
    if (count > kMaxFoldedElements)
      return n.emitError() << "window size " << count
                           << " is too large (at most " << kMaxFoldedElements
                           << " elements are computed at import)";
    int64_t dataType = n.attrInt("output_datatype", 1);
    Type element = getElementType(n.builder.getContext(), dataType);
    if (!element)
      return n.emitError() << "unsupported output_datatype " << dataType;
    bool periodic = n.attrInt("periodic", 1) != 0;
    double period = static_cast<double>(periodic ? count : count - 1);
    SmallVector<double> window;
    for (int64_t i = 0; i < count; ++i) {
      double value = 0;
      for (auto [k, a] : llvm::enumerate(coefficients)) {
        double angle = period > 0 ? 2.0 * M_PI * k * i / period : 0.0;
        value += (k % 2 ? -a : a) * std::cos(angle);
      }
      window.push_back(value);
    }
    auto type = RankedTensorType::get({count}, element);
    Attribute attr;
    if (element.isF64()) {
      attr = DenseElementsAttr::get(type, ArrayRef<double>(window));
    } else if (element.isF32()) {
      SmallVector<float> narrow(window.begin(), window.end());
      attr = DenseElementsAttr::get(type, ArrayRef<float>(narrow));
    } else if (auto floatType = dyn_cast<FloatType>(element)) {
      SmallVector<APFloat> values;
      for (double v : window) {
        APFloat f(v);
        bool losesInfo;
        f.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
        values.push_back(f);
      }
      attr = DenseElementsAttr::get(type, values);
    } else {
      SmallVector<APInt> values;
      for (double v : window)
        values.push_back(APInt(element.getIntOrFloatBitWidth(),
                               static_cast<int64_t>(v), /*isSigned=*/true));
      attr = DenseElementsAttr::get(type, values);
    }
    n.setResult(
        0, ConstantOp::create(n.builder, n.loc, cast<DenseElementsAttr>(attr)));
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
  table.add("Pow", 7, importPow);
  table.add("Mod", 10, importMod);
  table.add("BitShift", 11, importBitShift);
  // Variadic ops: opset 6/7 require equal shapes, which broadcasting (opset
  // 8+) accepts as well; opset 12/13 added integer types.
  table.add("Max", 6, variadicHandler<MaxOp>());
  table.add("Min", 6, variadicHandler<MinOp>());
  table.add("Sum", 6, variadicHandler<AddOp>());
  table.add("Mean", 6, importMean);
  table.add("Clip", 6, importClip6);
  table.add("Clip", 11, importClip11);

  table.add("Relu", 6, unaryHandler<ReluOp>());
  table.add("Neg", 6, unaryHandler<NegOp>());
  table.add("Abs", 6, unaryHandler<AbsOp>());
  table.add("Sign", 9, unaryHandler<SignOp>());
  table.add("Tanh", 6, unaryHandler<TanhOp, InputKind::Float>());
  table.add("Exp", 6, unaryHandler<ExpOp, InputKind::Float>());
  table.add("Log", 6, unaryHandler<LogOp, InputKind::Float>());
  table.add("Sqrt", 6, unaryHandler<SqrtOp, InputKind::Float>());
  table.add("Erf", 9, unaryHandler<ErfOp, InputKind::Float>());
  table.add("Sigmoid", 6, unaryHandler<SigmoidOp, InputKind::Float>());
  table.add("Reciprocal", 6, unaryHandler<ReciprocalOp, InputKind::Float>());
  table.add("Sin", 7, unaryHandler<SinOp, InputKind::Float>());
  table.add("Cos", 7, unaryHandler<CosOp, InputKind::Float>());
  table.add("Tan", 7, unaryHandler<TanOp, InputKind::Float>());
  table.add("Asin", 7, unaryHandler<AsinOp, InputKind::Float>());
  table.add("Acos", 7, unaryHandler<AcosOp, InputKind::Float>());
  table.add("Atan", 7, unaryHandler<AtanOp, InputKind::Float>());
  table.add("Sinh", 9, unaryHandler<SinhOp, InputKind::Float>());
  table.add("Cosh", 9, unaryHandler<CoshOp, InputKind::Float>());
  table.add("Asinh", 9, unaryHandler<AsinhOp, InputKind::Float>());
  table.add("Acosh", 9, unaryHandler<AcoshOp, InputKind::Float>());
  table.add("Atanh", 9, unaryHandler<AtanhOp, InputKind::Float>());
  table.add("Floor", 6, unaryHandler<FloorOp, InputKind::Float>());
  table.add("Ceil", 6, unaryHandler<CeilOp, InputKind::Float>());
  table.add("Round", 11, unaryHandler<RoundOp, InputKind::Float>());
  table.add("IsNaN", 9, unaryHandler<IsNaNOp, InputKind::Float>());
  table.add("IsInf", 10, importIsInf);
  table.add("CastLike", 15, importCastLike);

  table.add("Not", 1, unaryHandler<NotOp, InputKind::Bool>());
  table.add("And", 7, logicalHandler<AndOp>());
  table.add("Or", 7, logicalHandler<OrOp>());
  table.add("Xor", 7, logicalHandler<XorOp>());
  table.add("BitwiseAnd", 18, bitwiseHandler<AndOp>());
  table.add("BitwiseOr", 18, bitwiseHandler<OrOp>());
  table.add("BitwiseXor", 18, bitwiseHandler<XorOp>());
  table.add("BitwiseNot", 18, importBitwiseNot);
  table.add("BitCast", 26, importBitCast);
  table.add("Equal", 7, binaryHandler<EqualOp>());
  table.add("Less", 7, binaryHandler<LessOp>());
  table.add("Greater", 7, binaryHandler<GreaterOp>());
  table.add("LessOrEqual", 12, binaryHandler<LessEqualOp>());
  table.add("GreaterOrEqual", 12, binaryHandler<GreaterEqualOp>());
  table.add("Where", 9, importWhere);

  table.add("Elu", 6, importElu);
  table.add("Selu", 6, importSelu);
  table.add("Celu", 12, importCelu);
  table.add("LeakyRelu", 6, importLeakyRelu);
  table.add("PRelu", 7, importPRelu);
  table.add("HardSigmoid", 6, importHardSigmoid);
  table.add("HardSwish", 14, importHardSwish);
  table.add("Softplus", 1, importSoftplus);
  table.add("Softsign", 1, importSoftsign);
  table.add("Mish", 18, importMish);
  table.add("ThresholdedRelu", 10, importThresholdedRelu);
  table.add("Shrink", 9, importShrink);

  // Generalized cosine windows: a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N).
  table.add("HannWindow", 17, windowHandler({0.5, 0.5}));
  table.add("HammingWindow", 17, windowHandler({25.0 / 46.0, 21.0 / 46.0}));
  table.add("BlackmanWindow", 17, windowHandler({0.42, 0.5, 0.08}));
}
