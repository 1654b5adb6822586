//===- ImportRecurrent.cpp - recurrent networks (RNN, LSTM, GRU) ---===//
//
// ONNX node handlers: recurrent networks (RNN, LSTM, GRU). All three become
// one ridge.recurrent op in the time-major layout; batch-major (layout = 1)
// nodes get transposes around it. Activation names and their alpha/beta
// parameters are resolved here so that the op carries them explicitly.
//
//===----------------------------------------------------------------------===//

#include "ImporterInternal.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::onnx_import;

namespace {

struct CellInfo {
  StringRef cell;
  /// Default activations (f, g, h) of one direction.
  SmallVector<StringRef, 3> defaultActivations;
};

bool takesAlpha(StringRef name) {
  return llvm::is_contained({"affine", "leakyrelu", "thresholdedrelu",
                             "scaledtanh", "hardsigmoid", "elu"},
                            name);
}

bool takesBeta(StringRef name) {
  return llvm::is_contained({"affine", "scaledtanh", "hardsigmoid"}, name);
}

/// ONNX defaults of the activation parameters.
float defaultAlpha(StringRef name) {
  if (name == "leakyrelu")
    return 0.01f;
  if (name == "hardsigmoid")
    return 0.2f;
  return 1.0f;
}

float defaultBeta(StringRef name) {
  if (name == "hardsigmoid")
    return 0.5f;
  if (name == "scaledtanh")
    return 1.0f;
  return 0.0f;
}

Value transpose(NodeContext &n, Value v, ArrayRef<int64_t> perm) {
  if (!v)
    return v;
  return TransposeOp::create(n.builder, n.loc, v, perm);
}

LogicalResult importRecurrent(NodeContext &n, const CellInfo &info) {
  FailureOr<Value> x = requireOperand(n, 0), w = requireOperand(n, 1),
                   r = requireOperand(n, 2);
  if (failed(x) || failed(w) || failed(r))
    return failure();
  bool isLstm = info.cell == "lstm";
  Value b = n.operand(3), lens = n.operand(4), initH = n.operand(5);
  Value initC = isLstm ? n.operand(6) : Value();
  Value p = isLstm ? n.operand(7) : Value();

  std::string direction = n.attrString("direction", "forward");
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return n.emitError() << "unsupported direction '" << direction << "'";
  int64_t dirs = direction == "bidirectional" ? 2 : 1;

  int64_t layout = n.attrInt("layout", 0);
  if (layout != 0 && layout != 1)
    return n.emitError() << "unsupported layout " << layout;
  for (Value v : {*x, *w, *r})
    if (cast<RankedTensorType>(v.getType()).getRank() != 3)
      return n.emitError() << "X, W and R must have rank 3";
  // The layout transposes below need this before RecurrentOp's checks.
  for (Value v : {initH, initC})
    if (v && cast<RankedTensorType>(v.getType()).getRank() != 3)
      return n.emitError() << "initial_h and initial_c must have rank 3";

  auto rType = cast<RankedTensorType>((*r).getType());
  int64_t hidden = n.attrInt("hidden_size", rType.getDimSize(2));

  // Activations: names are case-insensitive in practice; a bidirectional
  // node listing one direction's worth uses it for both.
  int64_t perDir = info.defaultActivations.size();
  SmallVector<std::string> names;
  if (const onnx::AttributeProto *a = n.attr("activations")) {
    for (const std::string &s : a->strings())
      names.push_back(llvm::StringRef(s).lower());
  } else {
    for (int64_t d = 0; d < dirs; ++d)
      for (StringRef s : info.defaultActivations)
        names.push_back(s.lower());
  }
  if (static_cast<int64_t>(names.size()) == perDir && dirs == 2)
    names.append(SmallVector<std::string>(names));
  if (static_cast<int64_t>(names.size()) != perDir * dirs)
    return n.emitError() << "expects " << perDir * dirs << " activations, got "
                         << names.size();
  SmallVector<float> alphaList =
      n.attrFloats("activation_alpha").value_or(SmallVector<float>());
  SmallVector<float> betaList =
      n.attrFloats("activation_beta").value_or(SmallVector<float>());
  // The parameters are consumed in order by the activations that take them.
  size_t nextAlpha = 0, nextBeta = 0;
  SmallVector<float> alphas, betas;
  SmallVector<StringRef> nameRefs;
  for (const std::string &name : names) {
    float alpha = defaultAlpha(name), beta = defaultBeta(name);
    if (takesAlpha(name) && nextAlpha < alphaList.size())
      alpha = alphaList[nextAlpha++];
    if (takesBeta(name) && nextBeta < betaList.size())
      beta = betaList[nextBeta++];
    alphas.push_back(alpha);
    betas.push_back(beta);
    nameRefs.push_back(name);
  }

  if (layout == 1) {
    // Batch-major: X [B, S, I] and states [B, D, H].
    *x = transpose(n, *x, {1, 0, 2});
    initH = transpose(n, initH, {1, 0, 2});
    initC = transpose(n, initC, {1, 0, 2});
  }

  RecurrentOp::Properties props;
  props.cell = n.builder.getStringAttr(info.cell);
  props.direction = n.builder.getStringAttr(direction);
  props.hidden_size = n.builder.getI64IntegerAttr(hidden);
  props.activations = n.builder.getStrArrayAttr(nameRefs);
  props.activation_alpha = n.builder.getDenseF32ArrayAttr(alphas);
  props.activation_beta = n.builder.getDenseF32ArrayAttr(betas);
  if (const onnx::AttributeProto *clip = n.attr("clip"))
    props.clip = n.builder.getF32FloatAttr(clip->f());
  // The adaptor reads these without applying their defaults: always set.
  props.input_forget =
      n.builder.getBoolAttr(isLstm && n.attrInt("input_forget", 0));
  props.linear_before_reset = n.builder.getBoolAttr(
      info.cell == "gru" && n.attrInt("linear_before_reset", 0));
  SmallVector<Value> operands{*x, *w, *r};
  for (Value v : {b, lens, initH, initC, p})
    if (v)
      operands.push_back(v);
  props.operandSegmentSizes = {
      1,        1, 1, b ? 1 : 0, lens ? 1 : 0, initH ? 1 : 0, initC ? 1 : 0,
      p ? 1 : 0};
  SmallVector<Type> types;
  if (failed(RecurrentOp::inferReturnTypes(
          n.builder.getContext(), n.loc,
          RecurrentOp::Adaptor(operands, nullptr, props), types)))
    return failure();
  auto op = RecurrentOp::create(n.builder, n.loc, types, operands, props);

  Value y = op.getY(), yh = op.getYH(), yc = op.getYC();
  if (layout == 1) {
    y = transpose(n, y, {2, 0, 1, 3});
    yh = transpose(n, yh, {1, 0, 2});
    yc = transpose(n, yc, {1, 0, 2});
  }
  n.setResult(0, y);
  n.setResult(1, yh);
  if (isLstm)
    n.setResult(2, yc);
  return success();
}

} // namespace

void mlir::ridge::onnx_import::registerRecurrentHandlers(
    OnnxHandlerTable &table) {
  // One handler for every opset: 7 dropped the old output_sequence attribute
  // (which only said whether Y may be omitted), GRU-3 added
  // linear_before_reset, 14 added layout and 22 only widened the types.
  static const CellInfo rnn{"rnn", {"Tanh"}};
  static const CellInfo lstm{"lstm", {"Sigmoid", "Tanh", "Tanh"}};
  static const CellInfo gru{"gru", {"Sigmoid", "Tanh"}};
  table.add("RNN", 1, [](NodeContext &n) { return importRecurrent(n, rnn); });
  table.add("LSTM", 1, [](NodeContext &n) { return importRecurrent(n, lstm); });
  table.add("GRU", 1, [](NodeContext &n) { return importRecurrent(n, gru); });
}
