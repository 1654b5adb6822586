//===- RidgeRecurrentOps.cpp - ridge Recurrent ops ------------------------===//
//
// Type inference, verifiers, folders and costs of the ops declared in
// RidgeRecurrentOps.td.
//
//===----------------------------------------------------------------------===//

#include "RidgeOpsCommon.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringSwitch.h"

#include <limits>

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::detail;

/// Gates per direction of `cell`, or 0 for an unknown cell.
static int64_t getGateCount(StringRef cell) {
  return llvm::StringSwitch<int64_t>(cell)
      .Case("rnn", 1)
      .Case("lstm", 4)
      .Case("gru", 3)
      .Default(0);
}

/// Activations per direction of `cell` (f, g, h).
static int64_t getActivationCount(StringRef cell) {
  return llvm::StringSwitch<int64_t>(cell)
      .Case("rnn", 1)
      .Case("lstm", 3)
      .Case("gru", 2)
      .Default(0);
}

static bool isKnownActivation(StringRef name) {
  return llvm::is_contained({"sigmoid", "tanh", "relu", "hardsigmoid", "affine",
                             "leakyrelu", "thresholdedrelu", "scaledtanh",
                             "elu", "softsign", "softplus"},
                            name);
}

int64_t RecurrentOp::getNumGates() { return getGateCount(getCell()); }

/// Checks that optional operand `v` (named `name`) has `shape` and the
/// element type `element`.
static LogicalResult checkOperand(std::optional<Location> loc, Value v,
                                  StringRef name, ArrayRef<int64_t> shape,
                                  Type element) {
  if (!v)
    return success();
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getShape() != shape || (element && type.getElementType() != element))
    return inferenceError(
        loc, "recurrent " + name + " must be " +
                 typeToString(RankedTensorType::get(
                     shape, element ? element : type.getElementType())) +
                 ", got " + typeToString(type));
  return success();
}

LogicalResult RecurrentOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  StringRef cell = adaptor.getCell();
  int64_t gates = getGateCount(cell);
  if (gates == 0)
    return inferenceError(loc, "unknown recurrent cell '" + cell +
                                   "' (expected rnn, lstm or gru)");
  StringRef direction = adaptor.getDirection();
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return inferenceError(loc, "unknown direction '" + direction + "'");
  int64_t dirs = direction == "bidirectional" ? 2 : 1;
  int64_t hidden = adaptor.getHiddenSize();
  if (hidden <= 0)
    return inferenceError(loc,
                          "hidden_size must be positive, got " + Twine(hidden));
  // The operand shapes below scale it by up to 2 * 4 gates.
  if (hidden > std::numeric_limits<int64_t>::max() / 8)
    return inferenceError(loc,
                          "hidden_size " + Twine(hidden) + " is too large");

  ArrayAttr activations = adaptor.getActivations();
  int64_t numActs = getActivationCount(cell) * dirs;
  if (static_cast<int64_t>(activations.size()) != numActs)
    return inferenceError(loc, "expects " + Twine(numActs) +
                                   " activations, got " +
                                   Twine(activations.size()));
  for (Attribute a : activations)
    if (!isKnownActivation(cast<StringAttr>(a).getValue()))
      return inferenceError(loc, "unsupported activation '" +
                                     cast<StringAttr>(a).getValue() + "'");
  if (static_cast<int64_t>(adaptor.getActivationAlpha().size()) != numActs ||
      static_cast<int64_t>(adaptor.getActivationBeta().size()) != numActs)
    return inferenceError(loc, "expects one activation_alpha and "
                               "activation_beta entry per activation");
  if (FloatAttr clip = adaptor.getClipAttr();
      clip && clip.getValueAsDouble() <= 0)
    return inferenceError(loc, "clip must be positive");
  if (adaptor.getInputForget() && cell != "lstm")
    return inferenceError(loc, "input_forget is an lstm attribute");
  if (adaptor.getLinearBeforeReset() && cell != "gru")
    return inferenceError(loc, "linear_before_reset is a gru attribute");

  auto x = cast<RankedTensorType>(adaptor.getX().getType());
  if (x.getRank() != 3 || !x.hasStaticShape())
    return inferenceError(loc, "recurrent input must be a static [seq, batch, "
                               "input] tensor, got " +
                                   typeToString(x));
  Type element = x.getElementType();
  int64_t seq = x.getDimSize(0), batch = x.getDimSize(1),
          inputSize = x.getDimSize(2);
  if (failed(checkOperand(loc, adaptor.getW(), "weight",
                          {dirs, gates * hidden, inputSize}, element)) ||
      failed(checkOperand(loc, adaptor.getR(), "recurrence weight",
                          {dirs, gates * hidden, hidden}, element)) ||
      failed(checkOperand(loc, adaptor.getB(), "bias",
                          {dirs, 2 * gates * hidden}, element)) ||
      failed(checkOperand(loc, adaptor.getSequenceLens(), "sequence_lens",
                          {batch}, nullptr)) ||
      failed(checkOperand(loc, adaptor.getInitialH(), "initial_h",
                          {dirs, batch, hidden}, element)) ||
      failed(checkOperand(loc, adaptor.getInitialC(), "initial_c",
                          {dirs, batch, hidden}, element)) ||
      failed(checkOperand(loc, adaptor.getP(), "peepholes", {dirs, 3 * hidden},
                          element)))
    return failure();
  if (Value lens = adaptor.getSequenceLens();
      lens && !isa<IntegerType>(
                  cast<RankedTensorType>(lens.getType()).getElementType()))
    return inferenceError(loc, "sequence_lens must be integers");
  if (cell != "lstm" && (adaptor.getInitialC() || adaptor.getP()))
    return inferenceError(loc, "initial_c and peepholes are lstm operands");

  results.push_back(RankedTensorType::get({seq, dirs, batch, hidden}, element));
  auto state = RankedTensorType::get({dirs, batch, hidden}, element);
  results.push_back(state);
  if (cell == "lstm")
    results.push_back(state);
  return success();
}

// FLOPs: S * D * (2 * B * G * H * (I + H) + 4 * B * G * H): per step and
// direction the input and recurrence matmuls plus about 4 elementwise
// operations per gate element. Bytes: default (every operand once, the used
// results once).
int64_t RecurrentOp::getFlops() {
  auto x = cast<RankedTensorType>(getX().getType());
  if (!x.hasStaticShape())
    return -1;
  int64_t seq = x.getDimSize(0), batch = x.getDimSize(1),
          inputSize = x.getDimSize(2);
  int64_t gateWidth = getNumGates() * getHiddenSize();
  // Input and recurrence matmuls, then bias adds, activations and the state
  // update: about four elementwise operations per gate element.
  int64_t perStep = 2 * batch * gateWidth * (inputSize + getHiddenSize()) +
                    4 * batch * gateWidth;
  return seq * getNumDirections() * perStep;
}

// The gate matmuls dominate and run on tensor cores.
bool RecurrentOp::isContraction() { return true; }
