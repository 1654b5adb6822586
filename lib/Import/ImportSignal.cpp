//===- ImportSignal.cpp - signal processing and linear algebra ------------===//
//
// ONNX node handlers: DFT, STFT, MelWeightMatrix and Det. STFT becomes the
// frames (a gather with constant strided indices) times the window, fed to
// ridge.dft; MelWeightMatrix is a pure function of scalars that decide its
// shape and is computed here into a constant.
//
//===----------------------------------------------------------------------===//

#include "ImporterInternal.h"

#include "llvm/ADT/APFloat.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::onnx_import;

/// Operand `i` as one integer (a constant or a specialized graph input);
/// `what` names it in the error.
static FailureOr<int64_t> requireScalarInt(NodeContext &n, unsigned i,
                                           StringRef what) {
  std::optional<SmallVector<int64_t>> values = n.constantInts(i);
  if (!values || values->size() != 1) {
    n.emitError() << what << " (input " << i
                  << ") must be a constant integer with one element: it "
                     "decides a shape";
    return failure();
  }
  return values->front();
}

/// Operand `i` as one number of any numeric type, converted to double.
static FailureOr<double> requireScalarNumber(NodeContext &n, unsigned i,
                                             StringRef what) {
  DenseElementsAttr attr = n.shapeOperand(i);
  if (!attr || attr.getNumElements() != 1) {
    n.emitError() << what << " (input " << i
                  << ") must be a constant with one element";
    return failure();
  }
  Type element = attr.getElementType();
  if (isa<FloatType>(element))
    return (*attr.getValues<APFloat>().begin()).convertToDouble();
  if (auto intType = dyn_cast<IntegerType>(element)) {
    APInt v = *attr.getValues<APInt>().begin();
    return intType.isUnsigned() ? static_cast<double>(v.getZExtValue())
                                : static_cast<double>(v.getSExtValue());
  }
  n.emitError() << what << " (input " << i << ") has an unsupported type";
  return failure();
}

/// The float input signal of DFT/STFT: [..., 1] (real) or [..., 2] (complex).
static FailureOr<Value> requireSignal(NodeContext &n, int64_t minRank) {
  FailureOr<Value> x = requireOperand(n, 0);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  if (!isa<FloatType>(type.getElementType())) {
    n.emitError() << "expects a float input, got " << type;
    return failure();
  }
  if (type.getRank() < minRank) {
    n.emitError() << "expects an input of rank >= " << minRank << ", got "
                  << type;
    return failure();
  }
  int64_t parts = type.getShape().back();
  if (parts != 1 && parts != 2) {
    n.emitError() << "the last input dimension must be 1 (real) or 2 "
                     "(complex), got "
                  << parts;
    return failure();
  }
  return x;
}

//===----------------------------------------------------------------------===//
// DFT
//===----------------------------------------------------------------------===//

/// DFT-17 takes the axis as an attribute (default 1), DFT-20 as optional
/// input 2 (default -2). Both count negative axes from the back and take
/// the optional DFT length as input 1.
static LogicalResult importDFT(NodeContext &n) {
  FailureOr<Value> x = requireSignal(n, 2);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  int64_t rank = type.getRank();
  int64_t axis = n.attrInt("axis", 1);
  if (n.opset >= 20) {
    axis = -2;
    if (n.operand(2)) {
      FailureOr<int64_t> value = requireScalarInt(n, 2, "axis");
      if (failed(value))
        return failure();
      axis = *value;
    }
  }
  if (axis < -rank || axis > rank - 2)
    return n.emitError() << "axis " << axis << " out of range for rank " << rank
                         << " (the last dimension holds the parts)";
  if (axis < 0)
    axis += rank;
  if (axis == rank - 1)
    return n.emitError() << "axis " << axis
                         << " is the real/imaginary dimension";
  bool inverse = n.attrInt("inverse", 0) != 0;
  bool onesided = n.attrInt("onesided", 0) != 0;
  int64_t dim = type.getDimSize(axis);
  // The inverse real transform reads a onesided spectrum of an even-length
  // signal by default (as numpy's irfft).
  int64_t length = (inverse && onesided) ? 2 * (dim - 1) : dim;
  if (n.operand(1)) {
    FailureOr<int64_t> value = requireScalarInt(n, 1, "dft_length");
    if (failed(value))
      return failure();
    length = *value;
  }
  if (length < 1)
    return n.emitError() << "dft_length " << length << " must be positive";
  n.setResult(
      0, DFTOp::create(n.builder, n.loc, *x, axis, length, inverse, onesided));
  return success();
}

//===----------------------------------------------------------------------===//
// STFT
//===----------------------------------------------------------------------===//

static LogicalResult importSTFT(NodeContext &n) {
  FailureOr<Value> signal = requireSignal(n, 3);
  if (failed(signal))
    return failure();
  RankedTensorType type = typeOf(*signal);
  if (type.getRank() != 3)
    return n.emitError() << "expects a [batch, length, 1 or 2] signal, got "
                         << type;
  FailureOr<int64_t> step = requireScalarInt(n, 1, "frame_step");
  if (failed(step))
    return failure();
  Value window = n.operand(2);
  int64_t signalLength = type.getDimSize(1);
  int64_t frameLength = signalLength;
  if (window) {
    RankedTensorType windowType = typeOf(window);
    if (windowType.getRank() != 1 ||
        windowType.getElementType() != type.getElementType())
      return n.emitError() << "window must be a 1-D tensor of the signal's "
                              "element type, got "
                           << windowType;
    frameLength = windowType.getDimSize(0);
  }
  if (n.operand(3)) {
    FailureOr<int64_t> value = requireScalarInt(n, 3, "frame_length");
    if (failed(value))
      return failure();
    if (window && *value != frameLength)
      return n.emitError() << "frame_length " << *value
                           << " differs from the window size " << frameLength;
    frameLength = *value;
  }
  if (*step < 1)
    return n.emitError() << "frame_step " << *step << " must be positive";
  if (frameLength < 1 || frameLength > signalLength)
    return n.emitError() << "frame_length " << frameLength
                         << " out of range for a signal of length "
                         << signalLength;
  int64_t frames = 1 + (signalLength - frameLength) / *step;

  // Frames: signal[:, f * step + t, :] for frame f and offset t.
  SmallVector<int64_t> indices;
  indices.reserve(frames * frameLength);
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t t = 0; t < frameLength; ++t)
      indices.push_back(f * *step + t);
  auto indicesType =
      RankedTensorType::get({frames, frameLength}, n.builder.getI64Type());
  Value indicesValue = ConstantOp::create(
      n.builder, n.loc,
      DenseElementsAttr::get(indicesType, ArrayRef<int64_t>(indices)));
  Value framed = GatherOp::create(n.builder, n.loc, *signal, indicesValue,
                                  n.builder.getI64IntegerAttr(1));
  if (window) {
    FailureOr<Value> weighted = createInferred<MulOp>(
        n, framed, reshapeTo(n, window, {frameLength, 1}));
    if (failed(weighted))
      return failure();
    framed = *weighted;
  }
  n.setResult(0,
              DFTOp::create(n.builder, n.loc, framed, /*axis=*/2, frameLength,
                            /*inverse=*/false, n.attrInt("onesided", 1) != 0));
  return success();
}

//===----------------------------------------------------------------------===//
// MelWeightMatrix
//===----------------------------------------------------------------------===//

/// Follows the ONNX reference implementation: triangular filters between
/// mel-spaced points, snapped down to spectrogram bins.
static LogicalResult importMelWeightMatrix(NodeContext &n) {
  FailureOr<int64_t> numMelBins = requireScalarInt(n, 0, "num_mel_bins");
  FailureOr<int64_t> dftLength = requireScalarInt(n, 1, "dft_length");
  if (failed(numMelBins) || failed(dftLength))
    return failure();
  FailureOr<double> sampleRate = requireScalarNumber(n, 2, "sample_rate");
  FailureOr<double> lower = requireScalarNumber(n, 3, "lower_edge_hertz");
  FailureOr<double> upper = requireScalarNumber(n, 4, "upper_edge_hertz");
  if (failed(sampleRate) || failed(lower) || failed(upper))
    return failure();
  if (*numMelBins < 1 || *dftLength < 1 || *sampleRate <= 0)
    return n.emitError() << "num_mel_bins (" << *numMelBins << "), dft_length ("
                         << *dftLength << ") and sample_rate (" << *sampleRate
                         << ") must be positive";
  int64_t dataType = n.attrInt("output_datatype", onnx::TensorProto::FLOAT);
  Type element = getElementType(n.builder.getContext(), dataType);
  if (!element || element.isInteger(1))
    return n.emitError() << "unsupported output_datatype " << dataType;

  int64_t numBins = *dftLength / 2 + 1, mels = *numMelBins;
  auto toMel = [](double hz) {
    return 2595.0 * std::log1p(hz / 700.0) / std::log(10.0);
  };
  double lowMel = toMel(*lower), highMel = toMel(*upper);
  double melStep = (highMel - lowMel) / static_cast<double>(mels + 2);
  SmallVector<int64_t> points;
  for (int64_t i = 0; i < mels + 2; ++i) {
    double mel = static_cast<double>(i) * melStep + lowMel;
    double hz = 700.0 * std::expm1(mel / 2595.0 * std::log(10.0));
    points.push_back(static_cast<int64_t>(
        std::floor(static_cast<double>(*dftLength + 1) * hz / *sampleRate)));
  }
  SmallVector<double> weights(numBins * mels, 0.0);
  auto set = [&](int64_t bin, int64_t mel, double value) -> bool {
    if (bin < 0 || bin >= numBins)
      return false;
    weights[bin * mels + mel] = value;
    return true;
  };
  for (int64_t i = 0; i < mels; ++i) {
    int64_t left = points[i], center = points[i + 1], right = points[i + 2];
    bool ok = true;
    if (center == left) {
      ok &= set(center, i, 1.0);
    } else {
      for (int64_t j = left; j <= center; ++j)
        ok &= set(j, i,
                  static_cast<double>(j - left) /
                      static_cast<double>(center - left));
    }
    if (right > center)
      for (int64_t j = center; j < right; ++j)
        ok &= set(j, i,
                  static_cast<double>(right - j) /
                      static_cast<double>(right - center));
    if (!ok)
      return n.emitError() << "mel filter " << i << " spans bins [" << left
                           << ", " << right << "] outside the " << numBins
                           << " spectrogram bins (edge frequencies above "
                              "the Nyquist frequency?)";
  }

  auto resultType = RankedTensorType::get({numBins, mels}, element);
  DenseElementsAttr attr;
  if (auto floatType = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> values;
    for (double w : weights) {
      APFloat v(w);
      bool lost;
      v.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &lost);
      values.push_back(v);
    }
    attr = DenseElementsAttr::get(resultType, values);
  } else {
    unsigned width = element.getIntOrFloatBitWidth();
    SmallVector<APInt> values;
    for (double w : weights)
      values.push_back(APInt(width, static_cast<int64_t>(w), true));
    attr = DenseElementsAttr::get(resultType, values);
  }
  n.setResult(0, ConstantOp::create(n.builder, n.loc, attr));
  return success();
}

//===----------------------------------------------------------------------===//
// Det
//===----------------------------------------------------------------------===//

static LogicalResult importDet(NodeContext &n) {
  FailureOr<Value> x = requireOperand(n, 0);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  if (!isa<FloatType>(type.getElementType()))
    return n.emitError() << "expects a float input, got " << type;
  int64_t rank = type.getRank();
  if (rank < 2 || type.getDimSize(rank - 1) != type.getDimSize(rank - 2))
    return n.emitError() << "expects [*, n, n] square matrices, got " << type;
  n.setResult(0, DetOp::create(n.builder, n.loc, *x));
  return success();
}

void mlir::ridge::onnx_import::registerSignalHandlers(OnnxHandlerTable &table) {
  table.add("DFT", 17, importDFT);
  table.add("DFT", 20, importDFT);
  table.add("STFT", 17, importSTFT);
  table.add("MelWeightMatrix", 17, importMelWeightMatrix);
  table.add("Det", 11, importDet);
}
