//===- ImportNN.cpp - convolution, pooling and resizing ---===//
//
// ONNX node handlers: convolution, pooling, resizing and quantization.
// Window attributes (auto_pad, kernel_shape, output_shape) are resolved here
// into explicit pads so that the ridge ops carry one canonical form.
//
//===----------------------------------------------------------------------===//

#include "ImporterInternal.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::onnx_import;

namespace {

/// Explicit window attributes of a conv or pool node.
struct Window {
  SmallVector<int64_t> strides, pads, dilations;
};

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/// Reads `name` as `count` integers, or `dflt` repeated when absent.
FailureOr<SmallVector<int64_t>> getIntsAttr(NodeContext &n, StringRef name,
                                            size_t count, int64_t dflt) {
  std::optional<SmallVector<int64_t>> values = n.attrInts(name);
  if (!values)
    return SmallVector<int64_t>(count, dflt);
  if (values->size() != count) {
    n.emitError() << "attribute '" << name << "' has " << values->size()
                  << " entries, expected " << count;
    return failure();
  }
  return *values;
}

/// Resolves strides, dilations, pads and auto_pad for a forward window
/// (Conv, pooling) over the spatial dims `spatial` with `kernel`.
FailureOr<Window> resolveWindow(NodeContext &n, ArrayRef<int64_t> spatial,
                                ArrayRef<int64_t> kernel) {
  size_t rank = spatial.size();
  Window w;
  FailureOr<SmallVector<int64_t>> strides = getIntsAttr(n, "strides", rank, 1);
  FailureOr<SmallVector<int64_t>> dilations =
      getIntsAttr(n, "dilations", rank, 1);
  FailureOr<SmallVector<int64_t>> pads = getIntsAttr(n, "pads", 2 * rank, 0);
  if (failed(strides) || failed(dilations) || failed(pads))
    return failure();
  w.strides = *strides;
  w.dilations = *dilations;
  w.pads = *pads;
  for (size_t i = 0; i < rank; ++i)
    if (w.strides[i] <= 0 || w.dilations[i] <= 0) {
      n.emitError() << "strides and dilations must be positive";
      return failure();
    }
  std::string autoPad = n.attrString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET")
    return w;
  if (autoPad == "VALID") {
    w.pads.assign(2 * rank, 0);
    return w;
  }
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER") {
    n.emitError() << "unsupported auto_pad '" << autoPad << "'";
    return failure();
  }
  // SAME: the output has ceil(in / stride) elements; the odd pad element
  // goes to the end (SAME_UPPER) or the beginning (SAME_LOWER).
  for (size_t i = 0; i < rank; ++i) {
    // (out - 1) * stride + (kernel - 1) * dilation + 1 - in, checked: the
    // attributes and dims may be hostile.
    int64_t out =
        spatial[i] / w.strides[i] + (spatial[i] % w.strides[i] != 0 ? 1 : 0);
    std::optional<int64_t> covered = llvm::checkedMul(out - 1, w.strides[i]);
    std::optional<int64_t> extent =
        llvm::checkedMul(kernel[i] - 1, w.dilations[i]);
    if (covered && extent)
      covered = llvm::checkedAdd(*covered, *extent);
    if (covered)
      covered = llvm::checkedAdd(*covered, int64_t(1));
    if (!covered || !extent) {
      n.emitError() << "auto_pad " << autoPad << ": the window of spatial dim "
                    << i << " overflows int64";
      return failure();
    }
    int64_t total = std::max<int64_t>(0, *covered - spatial[i]);
    int64_t small = total / 2, large = total - small;
    w.pads[i] = autoPad == "SAME_UPPER" ? small : large;
    w.pads[i + rank] = autoPad == "SAME_UPPER" ? large : small;
  }
  return w;
}

/// Infers the result types of `OpTy` for `operands` and `props`, reporting
/// malformed nodes instead of building an invalid op.
template <typename OpTy>
FailureOr<SmallVector<Type>>
inferTypes(NodeContext &n, ValueRange operands,
           const typename OpTy::Properties &props) {
  SmallVector<Type> types;
  if (failed(OpTy::inferReturnTypes(
          n.builder.getContext(), n.loc,
          typename OpTy::Adaptor(operands, nullptr, props), types)))
    return failure();
  return types;
}

/// `value` cast to `element` (keeping the shape).
Value castTo(NodeContext &n, Value value, Type element) {
  auto type = typeOf(value);
  if (type.getElementType() == element)
    return value;
  return CastOp::create(n.builder, n.loc, type.clone(element), value);
}

/// A rank-0 constant of `element` holding `value`.
Value scalarConstant(NodeContext &n, Type element, Attribute value) {
  auto type = RankedTensorType::get({}, element);
  return ConstantOp::create(n.builder, n.loc,
                            DenseElementsAttr::get(type, value));
}

/// A per-axis parameter ([size] along `axis` of a rank-`rank` tensor)
/// reshaped so that it broadcasts; scalars stay as they are.
Value alignToAxis(NodeContext &n, Value param, int64_t axis, int64_t rank) {
  auto type = typeOf(param);
  if (type.getNumElements() == 1 || type.getRank() != 1)
    return param;
  SmallVector<int64_t> shape(rank - axis, 1);
  shape[0] = type.getDimSize(0);
  return reshapeTo(n, param, shape);
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

/// Builds a ridge.conv of `x` and `w` (with optional `bias`) using the node's
/// window attributes.
FailureOr<Value> buildConv(NodeContext &n, Value x, Value w, Value bias) {
  auto xType = typeOf(x), wType = typeOf(w);
  if (xType.getRank() < 3 || wType.getRank() != xType.getRank()) {
    n.emitError() << "expects input and weight of equal rank >= 3, got "
                  << xType << " and " << wType;
    return failure();
  }
  ArrayRef<int64_t> kernel = wType.getShape().drop_front(2);
  if (auto given = n.attrInts("kernel_shape"))
    if (ArrayRef<int64_t>(*given) != kernel) {
      n.emitError() << "kernel_shape does not match the weight shape " << wType;
      return failure();
    }
  FailureOr<Window> win =
      resolveWindow(n, xType.getShape().drop_front(2), kernel);
  if (failed(win))
    return failure();
  Builder &b = n.builder;
  ConvOp::Properties props;
  props.setStrides(b.getDenseI64ArrayAttr(win->strides));
  props.setPads(b.getDenseI64ArrayAttr(win->pads));
  props.setDilations(b.getDenseI64ArrayAttr(win->dilations));
  props.setGroup(b.getI64IntegerAttr(n.attrInt("group", 1)));
  SmallVector<Value> operands{x, w};
  if (bias)
    operands.push_back(bias);
  FailureOr<SmallVector<Type>> types = inferTypes<ConvOp>(n, operands, props);
  if (failed(types))
    return failure();
  if (bias) {
    auto biasType = typeOf(bias);
    if (biasType.getRank() != 1 ||
        biasType.getDimSize(0) != wType.getDimSize(0) ||
        biasType.getElementType() != xType.getElementType()) {
      n.emitError() << "bias " << biasType << " does not match "
                    << wType.getDimSize(0) << " output channels";
      return failure();
    }
  }
  return ConvOp::create(n.builder, n.loc, (*types)[0], x, w, bias,
                        props.getStrides(), props.getPads(),
                        props.getDilations(), props.getGroup())
      .getResult();
}

LogicalResult importConv(NodeContext &n) {
  FailureOr<Value> x = requireOperand(n, 0), w = requireOperand(n, 1);
  if (failed(x) || failed(w))
    return failure();
  FailureOr<Value> result = buildConv(n, *x, *w, n.operand(2));
  if (failed(result))
    return failure();
  n.setResult(0, *result);
  return success();
}

LogicalResult importConvTranspose(NodeContext &n) {
  FailureOr<Value> x = requireOperand(n, 0), w = requireOperand(n, 1);
  if (failed(x) || failed(w))
    return failure();
  auto xType = typeOf(*x), wType = typeOf(*w);
  if (xType.getRank() < 3 || wType.getRank() != xType.getRank())
    return n.emitError() << "expects input and weight of equal rank >= 3, got "
                         << xType << " and " << wType;
  size_t rank = xType.getRank() - 2;
  ArrayRef<int64_t> kernel = wType.getShape().drop_front(2);
  ArrayRef<int64_t> spatial = xType.getShape().drop_front(2);
  if (auto given = n.attrInts("kernel_shape"))
    if (ArrayRef<int64_t>(*given) != kernel)
      return n.emitError() << "kernel_shape does not match the weight shape "
                           << wType;
  FailureOr<SmallVector<int64_t>> strides = getIntsAttr(n, "strides", rank, 1);
  FailureOr<SmallVector<int64_t>> dilations =
      getIntsAttr(n, "dilations", rank, 1);
  FailureOr<SmallVector<int64_t>> pads = getIntsAttr(n, "pads", 2 * rank, 0);
  FailureOr<SmallVector<int64_t>> outputPadding =
      getIntsAttr(n, "output_padding", rank, 0);
  if (failed(strides) || failed(dilations) || failed(pads) ||
      failed(outputPadding))
    return failure();
  for (size_t i = 0; i < rank; ++i)
    if ((*strides)[i] <= 0 || (*dilations)[i] <= 0)
      return n.emitError() << "strides and dilations must be positive";
  std::string autoPad = n.attrString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return n.emitError() << "unsupported auto_pad '" << autoPad << "'";
  std::optional<SmallVector<int64_t>> outputShape = n.attrInts("output_shape");
  if (outputShape && outputShape->size() == rank + 2)
    outputShape->erase(outputShape->begin(), outputShape->begin() + 2);
  if (outputShape && outputShape->size() != rank)
    return n.emitError() << "output_shape has " << outputShape->size()
                         << " entries for " << rank << " spatial dims";
  if (autoPad == "VALID")
    pads->assign(2 * rank, 0);
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  if (outputShape || same) {
    // Pads that produce the requested (or input * stride) output size; an
    // odd total goes to the beginning unless SAME_UPPER. Floor division
    // keeps a negative total (a larger output) at the end.
    for (size_t i = 0; i < rank; ++i) {
      int64_t target =
          outputShape ? (*outputShape)[i] : spatial[i] * (*strides)[i];
      int64_t total = (*strides)[i] * (spatial[i] - 1) + (*outputPadding)[i] +
                      (kernel[i] - 1) * (*dilations)[i] + 1 - target;
      int64_t half = floorDiv(total, 2);
      if (autoPad == "SAME_UPPER") {
        (*pads)[i] = half;
        (*pads)[i + rank] = total - half;
      } else {
        (*pads)[i] = total - half;
        (*pads)[i + rank] = half;
      }
    }
  }
  Builder &b = n.builder;
  ConvTransposeOp::Properties props;
  props.setStrides(b.getDenseI64ArrayAttr(*strides));
  props.setPads(b.getDenseI64ArrayAttr(*pads));
  props.setDilations(b.getDenseI64ArrayAttr(*dilations));
  props.setOutputPadding(b.getDenseI64ArrayAttr(*outputPadding));
  props.setGroup(b.getI64IntegerAttr(n.attrInt("group", 1)));
  SmallVector<Value> operands{*x, *w};
  Value bias = n.operand(2);
  if (bias)
    operands.push_back(bias);
  FailureOr<SmallVector<Type>> types =
      inferTypes<ConvTransposeOp>(n, operands, props);
  if (failed(types))
    return failure();
  if (bias) {
    auto biasType = typeOf(bias);
    int64_t channels = cast<RankedTensorType>((*types)[0]).getDimSize(1);
    if (biasType.getRank() != 1 || biasType.getDimSize(0) != channels ||
        biasType.getElementType() != xType.getElementType())
      return n.emitError() << "bias " << biasType << " does not match "
                           << channels << " output channels";
  }
  n.setResult(0, ConvTransposeOp::create(
                     n.builder, n.loc, (*types)[0], *x, *w, bias,
                     props.getStrides(), props.getPads(), props.getDilations(),
                     props.getOutputPadding(), props.getGroup()));
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// Builds a ridge.pool; `kernel` empty means global pooling.
LogicalResult importPool(NodeContext &n, StringRef kind, bool global) {
  FailureOr<Value> x = requireOperand(n, 0);
  if (failed(x))
    return failure();
  auto xType = typeOf(*x);
  if (xType.getRank() < 3)
    return n.emitError() << "expects an input of rank >= 3, got " << xType;
  if (kind != "max" && !isa<FloatType>(xType.getElementType()))
    return n.emitError() << "expects a floating-point input, got " << xType;
  ArrayRef<int64_t> spatial = xType.getShape().drop_front(2);
  size_t rank = spatial.size();
  Window win;
  SmallVector<int64_t> kernel;
  if (global) {
    kernel.assign(spatial.begin(), spatial.end());
    win.strides.assign(rank, 1);
    win.dilations.assign(rank, 1);
    win.pads.assign(2 * rank, 0);
  } else {
    std::optional<SmallVector<int64_t>> given = n.attrInts("kernel_shape");
    if (!given)
      return n.emitError() << "missing attribute 'kernel_shape'";
    if (given->size() != rank)
      return n.emitError() << "kernel_shape has " << given->size()
                           << " entries for " << rank << " spatial dims";
    kernel = *given;
    FailureOr<Window> resolved = resolveWindow(n, spatial, kernel);
    if (failed(resolved))
      return failure();
    win = *resolved;
  }
  int64_t p = 2;
  if (kind == "lp")
    p = n.opset < 2 ? static_cast<int64_t>(n.attrFloat("p", 2.0f))
                    : n.attrInt("p", 2);
  bool withIndices =
      kind == "max" && n.getNumResults() > 1 && !n.node.output(1).empty();
  Builder &b = n.builder;
  PoolOp::Properties props;
  props.setKind(b.getStringAttr(kind));
  props.setKernelShape(b.getDenseI64ArrayAttr(kernel));
  props.setStrides(b.getDenseI64ArrayAttr(win.strides));
  props.setPads(b.getDenseI64ArrayAttr(win.pads));
  props.setDilations(b.getDenseI64ArrayAttr(win.dilations));
  props.setCeilMode(b.getBoolAttr(!global && n.attrInt("ceil_mode", 0) != 0));
  props.setCountIncludePad(
      b.getBoolAttr(!global && n.attrInt("count_include_pad", 0) != 0));
  props.setP(b.getI64IntegerAttr(p));
  props.setWithIndices(b.getBoolAttr(withIndices));
  int64_t storageOrder = n.attrInt("storage_order", 0);
  if (storageOrder != 0 && storageOrder != 1)
    return n.emitError() << "storage_order must be 0 or 1";
  props.setStorageOrder(b.getI64IntegerAttr(storageOrder));
  if (kind == "lp" && p < 1)
    return n.emitError() << "p must be >= 1, got " << p;
  FailureOr<SmallVector<Type>> types = inferTypes<PoolOp>(n, *x, props);
  if (failed(types))
    return failure();
  auto pool = PoolOp::create(
      n.builder, n.loc, (*types)[0], withIndices ? (*types)[1] : Type(), *x,
      props.getKind(), props.getKernelShape(), props.getStrides(),
      props.getPads(), props.getDilations(), props.getCeilMode(),
      props.getCountIncludePad(), props.getP(), props.getWithIndices(),
      props.getStorageOrder());
  n.setResult(0, pool.getResult());
  if (withIndices)
    n.setResult(1, pool.getIndices());
  return success();
}

LogicalResult importMaxUnpool(NodeContext &n) {
  FailureOr<Value> x = requireOperand(n, 0), indices = requireOperand(n, 1);
  if (failed(x) || failed(indices))
    return failure();
  auto xType = typeOf(*x);
  int64_t rank = xType.getRank();
  if (rank < 3)
    return n.emitError() << "expects an input of rank >= 3, got " << xType;
  if (typeOf(*indices).getShape() != xType.getShape())
    return n.emitError() << "indices " << indices->getType()
                         << " are not shaped like the input " << xType;
  size_t spatial = rank - 2;
  std::optional<SmallVector<int64_t>> kernel = n.attrInts("kernel_shape");
  if (!kernel || kernel->size() != spatial)
    return n.emitError() << "needs kernel_shape with " << spatial << " entries";
  FailureOr<SmallVector<int64_t>> strides =
      getIntsAttr(n, "strides", spatial, 1);
  FailureOr<SmallVector<int64_t>> pads = getIntsAttr(n, "pads", 2 * spatial, 0);
  if (failed(strides) || failed(pads))
    return failure();
  SmallVector<int64_t> shape(xType.getShape().take_front(2));
  if (Value outputShape = n.operand(2)) {
    std::optional<SmallVector<int64_t>> given = n.constantInts(2);
    if (!given)
      return n.emitError() << "the output_shape (input 2) must be a constant; "
                              "Ridgeline needs static shapes";
    if (given->size() != static_cast<size_t>(rank) || (*given)[0] != shape[0] ||
        (*given)[1] != shape[1])
      return n.emitError() << "output_shape must have " << rank
                           << " entries and keep batch and channels";
    shape = *given;
  } else {
    for (size_t i = 0; i < spatial; ++i)
      shape.push_back((xType.getDimSize(i + 2) - 1) * (*strides)[i] +
                      (*kernel)[i] - (*pads)[i] - (*pads)[i + spatial]);
  }
  if (llvm::any_of(shape, [](int64_t d) { return d <= 0; }))
    return n.emitError() << "invalid output shape";
  Builder &b = n.builder;
  n.setResult(0, MaxUnpoolOp::create(n.builder, n.loc, xType.clone(shape), *x,
                                     *indices, b.getDenseI64ArrayAttr(*kernel),
                                     b.getDenseI64ArrayAttr(*strides),
                                     b.getDenseI64ArrayAttr(*pads)));
  return success();
}

//===----------------------------------------------------------------------===//
// Resize
//===----------------------------------------------------------------------===//

/// Reads a constant float operand; empty when absent or of zero elements.
FailureOr<SmallVector<double>> constantFloats(NodeContext &n, unsigned i,
                                              StringRef what) {
  Value v = n.operand(i);
  if (!v || typeOf(v).getNumElements() == 0)
    return SmallVector<double>();
  DenseElementsAttr attr = n.shapeOperand(i);
  if (!attr || !isa<FloatType>(attr.getElementType())) {
    n.emitError() << "the " << what << " (input " << i
                  << ") must be a constant float tensor; Ridgeline needs "
                     "static shapes";
    return failure();
  }
  SmallVector<double> values;
  for (APFloat f : attr.getValues<APFloat>())
    values.push_back(f.convertToDouble());
  return values;
}

/// Builds ridge.resize from per-dim `scales` (the coordinate-mapping scales)
/// and the output `shape`, which defaults to floor(in * scale) when empty.
LogicalResult buildResize(NodeContext &n, Value x, ArrayRef<double> scales,
                          ArrayRef<int64_t> explicitShape, StringRef mode,
                          StringRef coordMode, StringRef nearestMode,
                          ArrayRef<double> roi, bool antialias = false) {
  auto xType = typeOf(x);
  int64_t rank = xType.getRank();
  if (static_cast<int64_t>(scales.size()) != rank)
    return n.emitError() << "scales has " << scales.size()
                         << " entries for an input of rank " << rank;
  SmallVector<double> effective(scales);
  SmallVector<int64_t> shape(explicitShape);
  for (int64_t i = 0; i < rank; ++i) {
    if (!(scales[i] > 0))
      return n.emitError() << "scales must be positive, got " << scales[i];
    if (explicitShape.empty()) {
      double size =
          std::floor(scales[i] * static_cast<double>(xType.getDimSize(i)));
      // Checked before the conversion, which is undefined out of range.
      if (!(size < 0x1p62))
        return n.emitError()
               << "the output dim " << i << " (scale "
               << llvm::formatv("{0:g}", scales[i]) << " times "
               << xType.getDimSize(i) << ") does not fit in 64 bits";
      shape.push_back(static_cast<int64_t>(size));
    }
    if (shape[i] <= 0)
      return n.emitError() << "the output dim " << i << " would be empty";
  }
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return n.emitError() << "unsupported mode '" << mode << "'";
  if (mode != "nearest" && !isa<FloatType>(xType.getElementType()))
    return n.emitError() << mode << " resize needs a float input, got "
                         << xType;
  if (!llvm::is_contained({"half_pixel", "half_pixel_symmetric",
                           "pytorch_half_pixel", "align_corners", "asymmetric",
                           "tf_half_pixel_for_nn", "tf_crop_and_resize"},
                          coordMode))
    return n.emitError() << "unsupported coordinate_transformation_mode '"
                         << coordMode << "'";
  if (!llvm::is_contained(
          {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
          nearestMode))
    return n.emitError() << "unsupported nearest_mode '" << nearestMode << "'";
  // The lowering unrolls the taps of one output element in the kernel body:
  // 4 per resized dim for cubic, and countless for antialiased downscaling
  // by a tiny scale.
  double taps = 1;
  for (int64_t i = 0; i < rank; ++i)
    if (shape[i] != xType.getDimSize(i) || scales[i] != 1.0)
      taps *= ResizeOp::getTapCount(mode, antialias, scales[i]);
  if (!(taps <= ResizeOp::kMaxTapsPerElement))
    return n.emitError() << "this resize reads "
                         << (taps < 0x1p62
                                 ? std::to_string(static_cast<int64_t>(taps))
                                 : std::string("more than 2^62"))
                         << " input elements per output element; at most "
                         << ResizeOp::kMaxTapsPerElement << " are supported";
  Builder &b = n.builder;
  DenseF64ArrayAttr roiAttr;
  if (coordMode == "tf_crop_and_resize") {
    if (static_cast<int64_t>(roi.size()) != 2 * rank)
      return n.emitError() << "tf_crop_and_resize needs a constant roi of "
                           << 2 * rank << " values";
    roiAttr = b.getDenseF64ArrayAttr(roi);
  }
  auto resize = ResizeOp::create(
      n.builder, n.loc, xType.clone(shape), x, b.getStringAttr(mode),
      b.getStringAttr(coordMode), b.getStringAttr(nearestMode),
      b.getF32FloatAttr(n.attrFloat("cubic_coeff_a", -0.75f)),
      b.getBoolAttr(n.attrInt("exclude_outside", 0) != 0),
      b.getF32FloatAttr(n.attrFloat("extrapolation_value", 0.0f)),
      b.getDenseF64ArrayAttr(effective), roiAttr,
      // Antialiasing only changes linear and cubic downscaling.
      b.getBoolAttr(antialias && mode != "nearest"));
  n.setResult(0, resize.getResult());
  return success();
}

/// Resize-11 and later: X, roi, scales, sizes; Resize-18 adds `axes` (the
/// dims roi, scales and sizes refer to) and `keep_aspect_ratio_policy`.
LogicalResult importResize(NodeContext &n) {
  FailureOr<Value> x = requireOperand(n, 0);
  if (failed(x))
    return failure();
  auto xType = typeOf(*x);
  int64_t rank = xType.getRank();
  SmallVector<int64_t> axes;
  if (std::optional<SmallVector<int64_t>> given = n.attrInts("axes")) {
    SmallVector<bool> seen(rank, false);
    for (int64_t axis : *given) {
      if (axis < 0)
        axis += rank;
      if (axis < 0 || axis >= rank || seen[axis])
        return n.emitError() << "invalid or repeated axis in 'axes'";
      seen[axis] = true;
      axes.push_back(axis);
    }
  } else {
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  size_t count = axes.size();
  // Values given for `axes` spread over all dims, `fill` elsewhere.
  auto spread = [&](ArrayRef<double> given, double fill) {
    SmallVector<double> full(rank, fill);
    for (size_t j = 0; j < count; ++j)
      full[axes[j]] = given[j];
    return full;
  };

  std::string coordMode =
      n.attrString("coordinate_transformation_mode", "half_pixel");
  SmallVector<double> roi;
  if (coordMode == "tf_crop_and_resize") {
    FailureOr<SmallVector<double>> given = constantFloats(n, 1, "roi");
    if (failed(given))
      return failure();
    if (given->size() != 2 * count)
      return n.emitError() << "roi has " << given->size() << " values, "
                           << "expected " << 2 * count;
    roi = spread(ArrayRef<double>(*given).take_front(count), 0.0);
    llvm::append_range(roi,
                       spread(ArrayRef<double>(*given).drop_front(count), 1.0));
  }
  SmallVector<double> scales;
  SmallVector<int64_t> shape;
  Value sizesValue = n.operand(3);
  if (sizesValue && typeOf(sizesValue).getNumElements() != 0) {
    std::optional<SmallVector<int64_t>> sizes = n.constantInts(3);
    if (!sizes)
      return n.emitError() << "the sizes (input 3) must be a constant; "
                              "Ridgeline needs static shapes";
    if (sizes->size() != count)
      return n.emitError() << "sizes has " << sizes->size()
                           << " entries, expected " << count;
    std::string policy = n.attrString("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch" && policy != "not_larger" &&
        policy != "not_smaller")
      return n.emitError() << "unsupported keep_aspect_ratio_policy '" << policy
                           << "'";
    shape.assign(xType.getShape().begin(), xType.getShape().end());
    scales.assign(rank, 1.0);
    SmallVector<double> ratios;
    for (size_t j = 0; j < count; ++j)
      ratios.push_back(static_cast<double>((*sizes)[j]) /
                       static_cast<double>(xType.getDimSize(axes[j])));
    for (size_t j = 0; j < count; ++j) {
      int64_t in = xType.getDimSize(axes[j]);
      if (policy == "stretch") {
        shape[axes[j]] = (*sizes)[j];
        scales[axes[j]] = ratios[j];
        continue;
      }
      // One scale for all axes, so that the aspect ratio is kept.
      double scale = policy == "not_larger" ? *llvm::min_element(ratios)
                                            : *llvm::max_element(ratios);
      shape[axes[j]] =
          static_cast<int64_t>(std::nearbyint(scale * static_cast<double>(in)));
      scales[axes[j]] = scale;
    }
  } else {
    FailureOr<SmallVector<double>> given = constantFloats(n, 2, "scales");
    if (failed(given))
      return failure();
    if (given->empty())
      return n.emitError() << "needs either scales or sizes";
    if (given->size() != count)
      return n.emitError() << "scales has " << given->size()
                           << " entries, expected " << count;
    scales = spread(*given, 1.0);
  }
  return buildResize(n, *x, scales, shape, n.attrString("mode", "nearest"),
                     coordMode,
                     n.attrString("nearest_mode", "round_prefer_floor"), roi,
                     n.attrInt("antialias", 0) != 0);
}

/// Resize-10 and Upsample: X and scales, asymmetric coordinates, nearest
/// rounds down. Upsample-7 has scales as an attribute.
LogicalResult importUpsample(NodeContext &n, bool scalesAttr) {
  FailureOr<Value> x = requireOperand(n, 0);
  if (failed(x))
    return failure();
  SmallVector<double> scales;
  if (scalesAttr) {
    std::optional<SmallVector<float>> given = n.attrFloats("scales");
    if (!given)
      return n.emitError() << "missing attribute 'scales'";
    scales.assign(given->begin(), given->end());
  } else {
    FailureOr<SmallVector<double>> given = constantFloats(n, 1, "scales");
    if (failed(given))
      return failure();
    scales = *given;
  }
  std::string mode = n.attrString("mode", "nearest");
  if (mode == "bilinear" || mode == "trilinear")
    mode = "linear";
  return buildResize(n, *x, scales, {}, mode, "asymmetric", "floor", {});
}

LogicalResult importGridSample(NodeContext &n) {
  FailureOr<Value> x = requireOperand(n, 0), grid = requireOperand(n, 1);
  if (failed(x) || failed(grid))
    return failure();
  std::string mode = n.attrString("mode", "bilinear");
  // Opset 20 renamed the modes for N-d grids; on 2-d grids they are the
  // same interpolations.
  if (mode == "linear")
    mode = "bilinear";
  else if (mode == "cubic")
    mode = "bicubic";
  std::string padding = n.attrString("padding_mode", "zeros");
  if (!llvm::is_contained({"bilinear", "nearest", "bicubic"}, mode))
    return n.emitError() << "unsupported mode '" << mode << "'";
  if (!llvm::is_contained({"zeros", "border", "reflection"}, padding))
    return n.emitError() << "unsupported padding_mode '" << padding << "'";
  if (!isa<FloatType>(typeOf(*x).getElementType()))
    return n.emitError() << "expects a floating-point input, got "
                         << x->getType();
  if (mode == "bicubic" && typeOf(*x).getRank() != 4)
    return n.emitError() << "cubic mode needs a 2-d (rank-4) input, got "
                         << x->getType();
  Builder &b = n.builder;
  GridSampleOp::Properties props;
  props.setMode(b.getStringAttr(mode));
  props.setPaddingMode(b.getStringAttr(padding));
  props.setAlignCorners(b.getBoolAttr(n.attrInt("align_corners", 0) != 0));
  FailureOr<SmallVector<Type>> types =
      inferTypes<GridSampleOp>(n, {*x, *grid}, props);
  if (failed(types))
    return failure();
  n.setResult(0, GridSampleOp::create(n.builder, n.loc, (*types)[0], *x, *grid,
                                      props.getMode(), props.getPaddingMode(),
                                      props.getAlignCorners()));
  return success();
}

/// AffineGrid-20: grid[n, (d,) h, w, :] = theta[n] @ (x_w, y_h, (z_d,) 1)
/// with x, y, z the normalized pixel centers (or corners with
/// align_corners) in [-1, 1]: a constant base grid [k+1, D*H*W] multiplied
/// by theta [N, k, k+1], then moved to channels-last.
LogicalResult importAffineGrid(NodeContext &n) {
  FailureOr<Value> theta = requireOperand(n, 0);
  if (failed(theta))
    return failure();
  auto thetaType = typeOf(*theta);
  Type element = thetaType.getElementType();
  if (!isa<FloatType>(element))
    return n.emitError() << "expects a floating-point theta, got " << thetaType;
  std::optional<SmallVector<int64_t>> size = n.constantInts(1);
  if (!size)
    return n.emitError() << "size (input 1) must be an integer constant: "
                            "it decides the output shape";
  if (size->size() != 4 && size->size() != 5)
    return n.emitError() << "size must have 4 (2-d) or 5 (3-d) entries, got "
                         << size->size();
  int64_t k = size->size() - 2;
  int64_t batch = (*size)[0];
  if (thetaType.getRank() != 3 || thetaType.getDimSize(0) != batch ||
      thetaType.getDimSize(1) != k || thetaType.getDimSize(2) != k + 1)
    return n.emitError() << "theta " << thetaType << " must have shape ["
                         << batch << ", " << k << ", " << k + 1 << "]";
  // Spatial sizes, slowest first: (D,) H, W.
  SmallVector<int64_t> spatial(size->begin() + 2, size->end());
  int64_t points = 1;
  for (int64_t d : spatial) {
    if (d <= 0)
      return n.emitError() << "size entries must be positive";
    points *= d;
  }
  bool alignCorners = n.attrInt("align_corners", 0) != 0;
  auto coordinate = [&](int64_t i, int64_t dim) -> double {
    if (alignCorners)
      return dim == 1 ? -1.0 : -1.0 + 2.0 * i / (dim - 1);
    return -1.0 + (2.0 * i + 1.0) / dim;
  };
  // Row r < k holds the coordinate along spatial dim k-1-r (x first), row k
  // is the homogeneous 1.
  SmallVector<Attribute> base;
  base.reserve((k + 1) * points);
  for (int64_t r = 0; r <= k; ++r) {
    for (int64_t p = 0; p < points; ++p) {
      double value = 1.0;
      if (r < k) {
        int64_t dim = k - 1 - r, stride = 1;
        for (int64_t d = k - 1; d > dim; --d)
          stride *= spatial[d];
        value = coordinate((p / stride) % spatial[dim], spatial[dim]);
      }
      base.push_back(n.builder.getFloatAttr(element, value));
    }
  }
  auto baseType = RankedTensorType::get({k + 1, points}, element);
  Value grid = ConstantOp::create(n.builder, n.loc,
                                  DenseElementsAttr::get(baseType, base));
  FailureOr<Value> product = createInferred<MatMulOp>(n, *theta, grid);
  if (failed(product))
    return failure();
  Value result = TransposeOp::create(n.builder, n.loc, *product,
                                     ArrayRef<int64_t>{0, 2, 1});
  SmallVector<int64_t> shape{batch};
  llvm::append_range(shape, spatial);
  shape.push_back(k);
  n.setResult(0, reshapeTo(n, result, shape));
  return success();
}

/// DeformConv-19 (2-d): a missing bias becomes zeros and a missing mask
/// ones (splat constants).
LogicalResult importDeformConv(NodeContext &n) {
  FailureOr<Value> x = requireOperand(n, 0), w = requireOperand(n, 1),
                   offset = requireOperand(n, 2);
  if (failed(x) || failed(w) || failed(offset))
    return failure();
  auto xType = typeOf(*x), wType = typeOf(*w);
  Type element = xType.getElementType();
  if (!isa<FloatType>(element))
    return n.emitError() << "expects a floating-point input, got " << xType;
  if (xType.getRank() != 4 || wType.getRank() != 4)
    return n.emitError() << "only 2-d deformable convolution is supported, "
                            "got input "
                         << xType;
  FailureOr<SmallVector<int64_t>> strides = getIntsAttr(n, "strides", 2, 1);
  FailureOr<SmallVector<int64_t>> dilations = getIntsAttr(n, "dilations", 2, 1);
  FailureOr<SmallVector<int64_t>> pads = getIntsAttr(n, "pads", 4, 0);
  if (failed(strides) || failed(dilations) || failed(pads))
    return failure();
  int64_t offsetGroup = n.attrInt("offset_group", 1);
  int64_t group = n.attrInt("group", 1);
  SmallVector<int64_t> shape{xType.getDimSize(0), wType.getDimSize(0)};
  for (int64_t d = 0; d < 2; ++d) {
    int64_t extent = (wType.getDimSize(2 + d) - 1) * (*dilations)[d] + 1;
    int64_t padded = xType.getDimSize(2 + d) + (*pads)[d] + (*pads)[2 + d];
    if (padded < extent || (*strides)[d] <= 0)
      return n.emitError() << "the kernel does not fit the padded input";
    shape.push_back((padded - extent) / (*strides)[d] + 1);
  }
  Builder &b = n.builder;
  auto splat = [&](ArrayRef<int64_t> dims, double value) -> Value {
    auto type = RankedTensorType::get(dims, element);
    return ConstantOp::create(
        n.builder, n.loc,
        DenseElementsAttr::get(type, b.getFloatAttr(element, value)));
  };
  Value bias = n.operand(3);
  if (!bias)
    bias = splat({wType.getDimSize(0)}, 0.0);
  Value mask = n.operand(4);
  if (!mask)
    mask = splat({shape[0],
                  offsetGroup * wType.getDimSize(2) * wType.getDimSize(3),
                  shape[2], shape[3]},
                 1.0);
  auto op = DeformConvOp::create(
      n.builder, n.loc, xType.clone(shape), *x, *w, *offset, bias, mask,
      b.getDenseI64ArrayAttr(*strides), b.getDenseI64ArrayAttr(*pads),
      b.getDenseI64ArrayAttr(*dilations), b.getI64IntegerAttr(group),
      b.getI64IntegerAttr(offsetGroup));
  if (failed(mlir::verify(op.getOperation()))) {
    op->erase();
    return failure();
  }
  n.setResult(0, op);
  return success();
}

/// Col2Im-18: image_shape and block_shape are inputs that decide shapes.
LogicalResult importCol2Im(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  auto type = typeOf(*input);
  if (!isa<FloatType>(type.getElementType()))
    return n.emitError() << "expects a floating-point input, got " << type;
  if (type.getRank() != 3)
    return n.emitError() << "expects an input of rank 3, got " << type;
  std::optional<SmallVector<int64_t>> image = n.constantInts(1);
  std::optional<SmallVector<int64_t>> block = n.constantInts(2);
  if (!image || !block)
    return n.emitError() << "image_shape (input 1) and block_shape (input 2) "
                            "must be integer constants: they decide shapes";
  size_t spatial = image->size();
  if (spatial == 0 || block->size() != spatial)
    return n.emitError() << "image_shape and block_shape must have the same "
                            "non-zero length";
  FailureOr<SmallVector<int64_t>> strides =
      getIntsAttr(n, "strides", spatial, 1);
  FailureOr<SmallVector<int64_t>> dilations =
      getIntsAttr(n, "dilations", spatial, 1);
  FailureOr<SmallVector<int64_t>> pads = getIntsAttr(n, "pads", 2 * spatial, 0);
  if (failed(strides) || failed(dilations) || failed(pads))
    return failure();
  int64_t blockSize = 1;
  for (int64_t b : *block) {
    if (b <= 0)
      return n.emitError() << "block_shape entries must be positive";
    blockSize *= b;
  }
  if (type.getDimSize(1) % blockSize != 0)
    return n.emitError() << "input dim 1 (" << type.getDimSize(1)
                         << ") is not a multiple of the block size "
                         << blockSize;
  SmallVector<int64_t> shape{type.getDimSize(0),
                             type.getDimSize(1) / blockSize};
  llvm::append_range(shape, *image);
  Builder &b = n.builder;
  auto op = Col2ImOp::create(
      n.builder, n.loc, type.clone(shape), *input,
      b.getDenseI64ArrayAttr(*block), b.getDenseI64ArrayAttr(*strides),
      b.getDenseI64ArrayAttr(*dilations), b.getDenseI64ArrayAttr(*pads));
  // The verifier reports a block count that does not match, at the node.
  if (failed(mlir::verify(op.getOperation()))) {
    op->erase();
    return failure();
  }
  n.setResult(0, op);
  return success();
}

/// RoiAlign-10 has no coordinate_transformation_mode (output_half_pixel);
/// RoiAlign-16 defaults to half_pixel.
LogicalResult importRoiAlign(NodeContext &n, StringRef defaultCoordMode) {
  FailureOr<Value> x = requireOperand(n, 0), rois = requireOperand(n, 1),
                   indices = requireOperand(n, 2);
  if (failed(x) || failed(rois) || failed(indices))
    return failure();
  std::string mode = n.attrString("mode", "avg");
  if (mode != "avg" && mode != "max")
    return n.emitError() << "unsupported mode '" << mode << "'";
  std::string coordMode =
      n.attrString("coordinate_transformation_mode", defaultCoordMode);
  if (coordMode != "half_pixel" && coordMode != "output_half_pixel")
    return n.emitError() << "unsupported coordinate_transformation_mode '"
                         << coordMode << "'";
  int64_t samplingRatio = n.attrInt("sampling_ratio", 0);
  if (samplingRatio < 1)
    return n.emitError() << "sampling_ratio " << samplingRatio
                         << " is not supported: the adaptive sampling grid "
                            "depends on the roi values; give a positive "
                            "sampling_ratio";
  if (!isa<FloatType>(typeOf(*x).getElementType()))
    return n.emitError() << "expects a floating-point input, got "
                         << x->getType();
  Builder &b = n.builder;
  RoiAlignOp::Properties props;
  props.setMode(b.getStringAttr(mode));
  props.setOutputHeight(b.getI64IntegerAttr(n.attrInt("output_height", 1)));
  props.setOutputWidth(b.getI64IntegerAttr(n.attrInt("output_width", 1)));
  props.setSamplingRatio(b.getI64IntegerAttr(samplingRatio));
  props.setSpatialScale(b.getF32FloatAttr(n.attrFloat("spatial_scale", 1.0f)));
  props.setHalfPixel(b.getBoolAttr(coordMode == "half_pixel"));
  FailureOr<SmallVector<Type>> types =
      inferTypes<RoiAlignOp>(n, {*x, *rois, *indices}, props);
  if (failed(types))
    return failure();
  if (typeOf(*rois).getElementType() != typeOf(*x).getElementType())
    return n.emitError() << "rois and input element types differ";
  n.setResult(
      0, RoiAlignOp::create(n.builder, n.loc, (*types)[0], *x, *rois, *indices,
                            props.getMode(), props.getOutputHeight(),
                            props.getOutputWidth(), props.getSamplingRatio(),
                            props.getSpatialScale(), props.getHalfPixel()));
  return success();
}

//===----------------------------------------------------------------------===//
// Quantization
//===----------------------------------------------------------------------===//

/// Normalized `axis` attribute for a tensor of `rank`.
FailureOr<int64_t> getAxis(NodeContext &n, int64_t rank) {
  int64_t axis = n.attrInt("axis", 1);
  if (axis < 0)
    axis += rank;
  // Only per-axis parameters use the axis; the op verifies it then.
  return axis;
}

FailureOr<Value> buildQuantize(NodeContext &n, Value x, Value scale,
                               Value zeroPoint, int64_t axis,
                               bool saturate = true) {
  Builder &b = n.builder;
  QuantizeLinearOp::Properties props;
  props.setAxis(b.getI64IntegerAttr(axis));
  props.setSaturate(b.getBoolAttr(saturate));
  FailureOr<SmallVector<Type>> types =
      inferTypes<QuantizeLinearOp>(n, {x, scale, zeroPoint}, props);
  if (failed(types))
    return failure();
  return QuantizeLinearOp::create(n.builder, n.loc, (*types)[0], x, scale,
                                  zeroPoint, props.getAxis(),
                                  props.getSaturate())
      .getResult();
}

/// Blocked quantization (opset 21): `param` has x's shape except
/// ceil(D / blockSize) along `axis`; gathering block i / blockSize for every
/// i < D gives it x's shape.
FailureOr<Value> expandBlocks(NodeContext &n, Value param,
                              RankedTensorType xType, int64_t axis,
                              int64_t blockSize) {
  auto type = typeOf(param);
  int64_t size = xType.getDimSize(axis);
  int64_t blocks = (size + blockSize - 1) / blockSize;
  SmallVector<int64_t> expected(xType.getShape());
  expected[axis] = blocks;
  if (type.getShape() != ArrayRef<int64_t>(expected)) {
    n.emitError() << "blocked scale and zero point must have shape "
                  << RankedTensorType::get(expected, type.getElementType())
                  << " for block_size " << blockSize << ", got " << type;
    return failure();
  }
  SmallVector<int64_t> indices;
  for (int64_t i = 0; i < size; ++i)
    indices.push_back(i / blockSize);
  auto indexType = RankedTensorType::get({size}, n.builder.getI64Type());
  Value indexValue = ConstantOp::create(
      n.builder, n.loc,
      DenseElementsAttr::get(indexType, ArrayRef<int64_t>(indices)));
  return n.builder.createOrFold<GatherOp>(n.loc, param, indexValue,
                                          n.builder.getI64IntegerAttr(axis));
}

/// Blocked QuantizeLinear/DequantizeLinear, expanded into elementwise ops
/// on full-shape parameters (the quantize ops take per-axis parameters).
LogicalResult importBlockedQuantize(NodeContext &n, bool quantize) {
  FailureOr<Value> x = requireOperand(n, 0), scale = requireOperand(n, 1);
  if (failed(x) || failed(scale))
    return failure();
  auto xType = typeOf(*x);
  FailureOr<int64_t> axis = getAxis(n, xType.getRank());
  if (failed(axis))
    return failure();
  int64_t blockSize = n.attrInt("block_size", 0);
  Type floatType = typeOf(*scale).getElementType();
  if (!isa<FloatType>(floatType))
    return n.emitError() << "expects a floating-point scale";
  Type intType = quantize ? IntegerType::get(n.builder.getContext(), 8,
                                             IntegerType::Unsigned)
                          : xType.getElementType();
  Value zeroPoint = n.operand(2);
  if (zeroPoint) {
    intType = typeOf(zeroPoint).getElementType();
  } else if (int64_t dtype = quantize ? n.attrInt("output_dtype", 0) : 0) {
    intType = getElementType(n.builder.getContext(), dtype);
    if (!intType)
      return n.emitError() << "unsupported output_dtype "
                           << getOnnxDataTypeName(dtype);
  }
  if (!isa<IntegerType>(intType) || intType.isInteger(1))
    return n.emitError() << "expects integer quantized values";
  FailureOr<Value> fullScale = expandBlocks(n, *scale, xType, *axis, blockSize);
  if (failed(fullScale))
    return failure();
  Value fullZero;
  if (zeroPoint) {
    FailureOr<Value> z = expandBlocks(n, zeroPoint, xType, *axis, blockSize);
    if (failed(z))
      return failure();
    fullZero = castTo(n, *z, floatType);
  }
  auto mul = [&](Value a, Value b) {
    return n.builder.createOrFold<MulOp>(n.loc, a, b);
  };
  if (!quantize) {
    Value real = castTo(n, *x, floatType);
    if (fullZero)
      real = n.builder.createOrFold<SubOp>(n.loc, real, fullZero);
    n.setResult(0, mul(real, *fullScale));
    return success();
  }
  Value real = castTo(n, *x, floatType);
  Value q = n.builder.createOrFold<RoundOp>(
      n.loc, n.builder.createOrFold<DivOp>(n.loc, real, *fullScale));
  if (fullZero)
    q = n.builder.createOrFold<AddOp>(n.loc, q, fullZero);
  // Saturate to the quantized type's range.
  unsigned width = intType.getIntOrFloatBitWidth();
  bool isUnsigned = intType.isUnsignedInteger();
  double lo =
      isUnsigned
          ? 0.0
          : static_cast<double>(APInt::getSignedMinValue(width).getSExtValue());
  double hi =
      isUnsigned
          ? static_cast<double>(APInt::getMaxValue(width).getZExtValue())
          : static_cast<double>(APInt::getSignedMaxValue(width).getSExtValue());
  q = n.builder.createOrFold<MaxOp>(
      n.loc, q,
      scalarConstant(n, floatType, n.builder.getFloatAttr(floatType, lo)));
  q = n.builder.createOrFold<MinOp>(
      n.loc, q,
      scalarConstant(n, floatType, n.builder.getFloatAttr(floatType, hi)));
  n.setResult(0, castTo(n, q, intType));
  return success();
}

LogicalResult importQuantizeLinear(NodeContext &n) {
  if (n.attrInt("block_size", 0) > 0)
    return importBlockedQuantize(n, /*quantize=*/true);
  FailureOr<Value> x = requireOperand(n, 0), scale = requireOperand(n, 1);
  if (failed(x) || failed(scale))
    return failure();
  auto xType = typeOf(*x);
  if (!isa<FloatType>(xType.getElementType()))
    *x = castTo(n, *x, typeOf(*scale).getElementType());
  Value zeroPoint = n.operand(2);
  if (!zeroPoint) {
    // The quantized type is output_dtype (opset 21+), else uint8.
    Type type =
        IntegerType::get(n.builder.getContext(), 8, IntegerType::Unsigned);
    if (int64_t dtype = n.attrInt("output_dtype", 0)) {
      type = getElementType(n.builder.getContext(), dtype);
      bool isFloat8 = isa_and_present<Float8E4M3FNType, Float8E4M3FNUZType,
                                      Float8E5M2Type, Float8E5M2FNUZType>(type);
      if (!type ||
          (!isFloat8 && (!isa<IntegerType>(type) || type.isInteger(1))))
        return n.emitError()
               << "unsupported output_dtype " << getOnnxDataTypeName(dtype);
    }
    zeroPoint = scalarConstant(n, type, n.builder.getZeroAttr(type));
  }
  FailureOr<int64_t> axis = getAxis(n, xType.getRank());
  if (failed(axis))
    return failure();
  // QuantizeLinear-19's `saturate` (default 1) applies to float8 results.
  FailureOr<Value> result = buildQuantize(n, *x, *scale, zeroPoint, *axis,
                                          n.attrInt("saturate", 1) != 0);
  if (failed(result))
    return failure();
  n.setResult(0, *result);
  return success();
}

LogicalResult importDequantizeLinear(NodeContext &n) {
  if (n.attrInt("block_size", 0) > 0)
    return importBlockedQuantize(n, /*quantize=*/false);
  FailureOr<Value> x = requireOperand(n, 0), scale = requireOperand(n, 1);
  if (failed(x) || failed(scale))
    return failure();
  auto xType = typeOf(*x);
  Type element = xType.getElementType();
  if (!isa<IntegerType, Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type,
           Float8E5M2FNUZType>(element))
    return n.emitError() << "expects an integer or float8 input, got " << xType;
  Value zeroPoint = n.operand(2);
  if (!zeroPoint)
    zeroPoint = scalarConstant(n, element, n.builder.getZeroAttr(element));
  FailureOr<int64_t> axis = getAxis(n, xType.getRank());
  if (failed(axis))
    return failure();
  Builder &b = n.builder;
  DequantizeLinearOp::Properties props;
  props.setAxis(b.getI64IntegerAttr(*axis));
  FailureOr<SmallVector<Type>> types =
      inferTypes<DequantizeLinearOp>(n, {*x, *scale, zeroPoint}, props);
  if (failed(types))
    return failure();
  n.setResult(0,
              DequantizeLinearOp::create(n.builder, n.loc, (*types)[0], *x,
                                         *scale, zeroPoint, props.getAxis()));
  return success();
}

LogicalResult importDynamicQuantizeLinear(NodeContext &n) {
  FailureOr<Value> x = requireOperand(n, 0);
  if (failed(x))
    return failure();
  if (!typeOf(*x).getElementType().isF32())
    return n.emitError() << "expects an f32 input, got " << x->getType();
  auto op = DynamicQuantizeLinearOp::create(n.builder, n.loc, *x);
  for (unsigned i = 0; i < 3; ++i)
    n.setResult(i, op->getResult(i));
  return success();
}

/// `value` widened to i32 minus its zero point (aligned to `axis`).
FailureOr<Value> subtractZeroPoint(NodeContext &n, Value value, Value zeroPoint,
                                   int64_t axis) {
  Type i32 = n.builder.getI32Type();
  Value wide = castTo(n, value, i32);
  if (!zeroPoint)
    return wide;
  int64_t rank = typeOf(value).getRank();
  Value zp = alignToAxis(n, castTo(n, zeroPoint, i32), axis, rank);
  return createInferred<SubOp>(n, wide, zp);
}

/// Integer matmul of (a - a_zero_point) and (b - b_zero_point) in i32;
/// a's zero point may be per row, b's per column.
FailureOr<Value> buildMatMulInteger(NodeContext &n, Value a, Value b,
                                    Value aZero, Value bZero) {
  int64_t aRank = typeOf(a).getRank();
  FailureOr<Value> lhs =
      subtractZeroPoint(n, a, aZero, std::max<int64_t>(0, aRank - 2));
  FailureOr<Value> rhs =
      subtractZeroPoint(n, b, bZero, typeOf(b).getRank() - 1);
  if (failed(lhs) || failed(rhs))
    return failure();
  return createInferred<MatMulOp>(n, *lhs, *rhs);
}

LogicalResult importMatMulInteger(NodeContext &n) {
  FailureOr<Value> a = requireOperand(n, 0), b = requireOperand(n, 1);
  if (failed(a) || failed(b))
    return failure();
  FailureOr<Value> result =
      buildMatMulInteger(n, *a, *b, n.operand(2), n.operand(3));
  if (failed(result))
    return failure();
  n.setResult(0, *result);
  return success();
}

LogicalResult importConvInteger(NodeContext &n) {
  FailureOr<Value> x = requireOperand(n, 0), w = requireOperand(n, 1);
  if (failed(x) || failed(w))
    return failure();
  FailureOr<Value> xs = subtractZeroPoint(n, *x, n.operand(2), 1);
  FailureOr<Value> ws = subtractZeroPoint(n, *w, n.operand(3), 0);
  if (failed(xs) || failed(ws))
    return failure();
  FailureOr<Value> result = buildConv(n, *xs, *ws, nullptr);
  if (failed(result))
    return failure();
  n.setResult(0, *result);
  return success();
}

/// Requantizes an i32 accumulator: acc * scale, quantized with the output
/// scale and zero point.
FailureOr<Value> requantize(NodeContext &n, Value acc, Value scale,
                            Value outScale, Value outZero) {
  Type f32 = n.builder.getF32Type();
  Value real = castTo(n, acc, f32);
  FailureOr<Value> scaled = createInferred<MulOp>(n, real, scale);
  if (failed(scaled))
    return failure();
  return buildQuantize(n, *scaled, outScale, outZero, 1);
}

LogicalResult importQLinearMatMul(NodeContext &n) {
  SmallVector<Value> in;
  for (unsigned i = 0; i < 8; ++i) {
    FailureOr<Value> v = requireOperand(n, i);
    if (failed(v))
      return failure();
    in.push_back(*v);
  }
  // Scales may be f16 (opset 21+); the requantization computes in f32.
  for (unsigned i : {1u, 4u, 6u})
    in[i] = castTo(n, in[i], n.builder.getF32Type());
  FailureOr<Value> acc = buildMatMulInteger(n, in[0], in[3], in[2], in[5]);
  if (failed(acc))
    return failure();
  int64_t aRank = typeOf(in[0]).getRank();
  Value aScale = alignToAxis(n, in[1], std::max<int64_t>(0, aRank - 2), aRank);
  FailureOr<Value> scale = createInferred<MulOp>(n, aScale, in[4]);
  if (failed(scale))
    return failure();
  FailureOr<Value> result = requantize(n, *acc, *scale, in[6], in[7]);
  if (failed(result))
    return failure();
  n.setResult(0, *result);
  return success();
}

LogicalResult importQLinearConv(NodeContext &n) {
  SmallVector<Value> in;
  for (unsigned i = 0; i < 8; ++i) {
    FailureOr<Value> v = requireOperand(n, i);
    if (failed(v))
      return failure();
    in.push_back(*v);
  }
  // Scales may be f16 (opset 21+); the requantization computes in f32.
  for (unsigned i : {1u, 4u, 6u})
    in[i] = castTo(n, in[i], n.builder.getF32Type());
  FailureOr<Value> xs = subtractZeroPoint(n, in[0], in[2], 1);
  FailureOr<Value> ws = subtractZeroPoint(n, in[3], in[5], 0);
  if (failed(xs) || failed(ws))
    return failure();
  Value bias = n.operand(8);
  if (bias)
    bias = castTo(n, bias, n.builder.getI32Type());
  FailureOr<Value> acc = buildConv(n, *xs, *ws, bias);
  if (failed(acc))
    return failure();
  int64_t rank = typeOf(in[0]).getRank();
  // The weight scale is scalar or per output channel (dim 1 of the result).
  Value wScale = alignToAxis(n, in[4], 1, rank);
  FailureOr<Value> scale = createInferred<MulOp>(n, in[1], wScale);
  if (failed(scale))
    return failure();
  FailureOr<Value> result = requantize(n, *acc, *scale, in[6], in[7]);
  if (failed(result))
    return failure();
  n.setResult(0, *result);
  return success();
}

} // namespace

void mlir::ridge::onnx_import::registerNNHandlers(OnnxHandlerTable &table) {
  table.add("Conv", 1, importConv);
  table.add("ConvTranspose", 1, importConvTranspose);
  table.add("MaxPool", 1,
            [](NodeContext &n) { return importPool(n, "max", false); });
  table.add("AveragePool", 1,
            [](NodeContext &n) { return importPool(n, "avg", false); });
  table.add("LpPool", 1,
            [](NodeContext &n) { return importPool(n, "lp", false); });
  table.add("GlobalMaxPool", 1,
            [](NodeContext &n) { return importPool(n, "max", true); });
  table.add("GlobalAveragePool", 1,
            [](NodeContext &n) { return importPool(n, "avg", true); });
  table.add("GlobalLpPool", 2,
            [](NodeContext &n) { return importPool(n, "lp", true); });
  // Upsample-7 takes scales as an attribute, Upsample-9 and Resize-10 as an
  // input; Resize-11 adds roi, sizes and the coordinate modes.
  table.add("Upsample", 7,
            [](NodeContext &n) { return importUpsample(n, true); });
  table.add("Upsample", 9,
            [](NodeContext &n) { return importUpsample(n, false); });
  table.add("Resize", 10,
            [](NodeContext &n) { return importUpsample(n, false); });
  table.add("Resize", 11, importResize);
  table.add("MaxUnpool", 9, importMaxUnpool);
  table.add("GridSample", 16, importGridSample);
  table.add("AffineGrid", 20, importAffineGrid);
  table.add("Col2Im", 18, importCol2Im);
  table.add("DeformConv", 19, importDeformConv);
  table.add("RoiAlign", 10, [](NodeContext &n) {
    return importRoiAlign(n, "output_half_pixel");
  });
  table.add("RoiAlign", 16,
            [](NodeContext &n) { return importRoiAlign(n, "half_pixel"); });
  table.add("QuantizeLinear", 10, importQuantizeLinear);
  table.add("DequantizeLinear", 10, importDequantizeLinear);
  table.add("DynamicQuantizeLinear", 11, importDynamicQuantizeLinear);
  table.add("MatMulInteger", 10, importMatMulInteger);
  table.add("ConvInteger", 10, importConvInteger);
  table.add("QLinearMatMul", 10, importQLinearMatMul);
  table.add("QLinearConv", 10, importQLinearConv);
}
