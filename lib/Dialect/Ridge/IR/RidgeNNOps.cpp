//===- RidgeNNOps.cpp - ridge NN ops ---------------------------===//
//
// Type inference, verifiers, folders and costs of the ops declared in
// RidgeNNOps.td.
//
//===----------------------------------------------------------------------===//

#include "RidgeOpsCommon.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::detail;

//===----------------------------------------------------------------------===//
// Window helpers
//===----------------------------------------------------------------------===//

static int64_t product(ArrayRef<int64_t> values) {
  int64_t result = 1;
  for (int64_t v : values)
    result *= v;
  return result;
}

/// Checks the window attributes of an op with `spatialRank` spatial dims:
/// per-dim strides and dilations (positive) and 2 * spatialRank pads
/// (non-negative unless `allowNegativePads`).
/// A window of `kernel` taps `dilation` apart over `size` elements padded by
/// `padBegin` and `padEnd`: its extent, and the padded size minus the extent
/// (the room the window slides in). Nothing when either overflows int64, as
/// hostile attributes or dims make it.
struct WindowSpan {
  int64_t extent, span;
};
static std::optional<WindowSpan> getWindowSpan(int64_t size, int64_t kernel,
                                               int64_t dilation,
                                               int64_t padBegin,
                                               int64_t padEnd) {
  std::optional<int64_t> extent = llvm::checkedMul(kernel - 1, dilation);
  if (extent)
    extent = llvm::checkedAdd(*extent, int64_t(1));
  std::optional<int64_t> padded = llvm::checkedAdd(size, padBegin);
  if (padded)
    padded = llvm::checkedAdd(*padded, padEnd);
  if (!extent || !padded)
    return std::nullopt;
  std::optional<int64_t> span = llvm::checkedSub(*padded, *extent);
  if (!span)
    return std::nullopt;
  return WindowSpan{*extent, *span};
}

static LogicalResult windowOverflow(std::optional<Location> loc, int64_t dim) {
  return inferenceError(loc, "window of spatial dim " + Twine(dim) +
                                 " overflows int64 (kernel, dilation, pads "
                                 "or input size out of range)");
}

static LogicalResult checkWindow(std::optional<Location> loc,
                                 int64_t spatialRank, ArrayRef<int64_t> strides,
                                 ArrayRef<int64_t> pads,
                                 ArrayRef<int64_t> dilations,
                                 bool allowNegativePads = false) {
  if (static_cast<int64_t>(strides.size()) != spatialRank)
    return inferenceError(loc, "expects " + Twine(spatialRank) +
                                   " strides, got " + Twine(strides.size()));
  if (static_cast<int64_t>(dilations.size()) != spatialRank)
    return inferenceError(loc, "expects " + Twine(spatialRank) +
                                   " dilations, got " +
                                   Twine(dilations.size()));
  if (static_cast<int64_t>(pads.size()) != 2 * spatialRank)
    return inferenceError(loc, "expects " + Twine(2 * spatialRank) +
                                   " pads, got " + Twine(pads.size()));
  if (llvm::any_of(strides, [](int64_t s) { return s <= 0; }))
    return inferenceError(loc, "strides must be positive");
  if (llvm::any_of(dilations, [](int64_t d) { return d <= 0; }))
    return inferenceError(loc, "dilations must be positive");
  if (!allowNegativePads && llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return inferenceError(loc, "pads must be non-negative");
  return success();
}

static RankedTensorType getTensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

//===----------------------------------------------------------------------===//
// ConvOp
//===----------------------------------------------------------------------===//

/// `channelsLast`: channels innermost in the input, weight and result
/// (ConvOp's channels_last form), else second.
static LogicalResult
inferConv(std::optional<Location> loc, RankedTensorType input,
          RankedTensorType weight, ArrayRef<int64_t> strides,
          ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations, int64_t group,
          bool channelsLast, SmallVectorImpl<Type> &results) {
  int64_t rank = input.getRank();
  if (rank < 3)
    return inferenceError(loc,
                          "conv input must have rank >= 3, got " + Twine(rank));
  if (weight.getRank() != rank)
    return inferenceError(loc, "conv weight rank " + Twine(weight.getRank()) +
                                   " differs from the input rank " +
                                   Twine(rank));
  if (input.getElementType() != weight.getElementType())
    return inferenceError(loc, "conv input and weight element types differ");
  if (!input.hasStaticShape() || !weight.hasStaticShape())
    return inferenceError(loc, "conv needs static shapes");
  if (failed(checkWindow(loc, rank - 2, strides, pads, dilations)))
    return failure();
  if (group < 1)
    return inferenceError(loc, "group must be positive, got " + Twine(group));
  int64_t channelDim = channelsLast ? rank - 1 : 1;
  int64_t firstSpatial = channelsLast ? 1 : 2;
  int64_t channels = input.getDimSize(channelDim);
  int64_t weightChannels = weight.getDimSize(channelDim);
  int64_t outChannels = weight.getDimSize(0);
  // A depthwise channels_last weight is [1, K..., C]: one filter tap of
  // every channel is contiguous, as the channels the taps multiply are.
  if (channelsLast && group != 1) {
    if (group != channels || outChannels != 1 || weightChannels != channels)
      return inferenceError(
          loc, "a channels_last conv has group 1 or is depthwise (group = " +
                   Twine(channels) + " channels, weight [1, K..., " +
                   Twine(channels) + "]), got group " + Twine(group) +
                   " and weight " + Twine(outChannels) + "x...x" +
                   Twine(weightChannels));
    outChannels = channels;
    weightChannels = 1;
  }
  if (channels % group != 0 || weightChannels * group != channels)
    return inferenceError(loc, "input channels " + Twine(channels) +
                                   " do not match weight channels " +
                                   Twine(weightChannels) + " x group " +
                                   Twine(group));
  if (outChannels % group != 0)
    return inferenceError(loc, "output channels " + Twine(outChannels) +
                                   " are not divisible by group " +
                                   Twine(group));
  SmallVector<int64_t> shape{input.getDimSize(0)};
  if (!channelsLast)
    shape.push_back(outChannels);
  for (int64_t i = 0; i < rank - 2; ++i) {
    std::optional<WindowSpan> window = getWindowSpan(
        input.getDimSize(i + firstSpatial), weight.getDimSize(i + firstSpatial),
        dilations[i], pads[i], pads[i + rank - 2]);
    if (!window)
      return windowOverflow(loc, i);
    int64_t span = window->span;
    if (span < 0)
      return inferenceError(loc, "conv window of spatial dim " + Twine(i) +
                                     " is larger than the padded input");
    shape.push_back(span / strides[i] + 1);
  }
  if (channelsLast)
    shape.push_back(outChannels);
  results.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &results) {
  return inferConv(loc, getTensorType(adaptor.getInput()),
                   getTensorType(adaptor.getWeight()), adaptor.getStrides(),
                   adaptor.getPads(), adaptor.getDilations(),
                   adaptor.getGroup(), adaptor.getChannelsLast(), results);
}

/// A bias must be [channels] of the result element type, the channels
/// being `result`'s dimension `channelDim`.
static LogicalResult verifyBias(Operation *op, Value bias,
                                RankedTensorType result,
                                int64_t channelDim = 1) {
  if (!bias)
    return success();
  auto type = getTensorType(bias);
  if (type.getElementType() != result.getElementType())
    return op->emitOpError("bias element type differs from the result");
  if (type.getRank() != 1 ||
      type.getDimSize(0) != result.getDimSize(channelDim))
    return op->emitOpError("bias must have shape [")
           << result.getDimSize(channelDim) << "], got " << type;
  return success();
}

LogicalResult ConvOp::verify() {
  return verifyBias(getOperation(), getBias(), getType(), getChannelDim());
}

// FLOPs: 2 * |out| * (C / group) * prod(K), one multiply-add per output per
// weight tap of its group (depthwise: C / group = 1), plus |out| for a bias
// add. Bytes: default (input + weight + bias + out).
int64_t ConvOp::getFlops() {
  int64_t outputs = getNumElements(getType());
  auto weight = getTensorType(getWeight());
  if (outputs < 0 || !weight.hasStaticShape())
    return -1;
  // Every output sums C/group * prod(K) products: the weight's elements
  // over the output channels (whichever weight dimension holds them).
  int64_t outChannels = getType().getDimSize(getChannelDim());
  int64_t flops = 2 * outputs * (product(weight.getShape()) / outChannels);
  return getBias() ? flops + outputs : flops;
}

bool ConvOp::isContraction() { return true; }

//===----------------------------------------------------------------------===//
// ConvTransposeOp
//===----------------------------------------------------------------------===//

LogicalResult
ConvTransposeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                  Adaptor adaptor,
                                  SmallVectorImpl<Type> &results) {
  auto input = getTensorType(adaptor.getInput());
  auto weight = getTensorType(adaptor.getWeight());
  ArrayRef<int64_t> strides = adaptor.getStrides(), pads = adaptor.getPads(),
                    dilations = adaptor.getDilations(),
                    outputPadding = adaptor.getOutputPadding();
  int64_t group = adaptor.getGroup();
  int64_t rank = input.getRank();
  if (rank < 3)
    return inferenceError(
        loc, "conv_transpose input must have rank >= 3, got " + Twine(rank));
  if (weight.getRank() != rank)
    return inferenceError(
        loc, "conv_transpose weight rank " + Twine(weight.getRank()) +
                 " differs from the input rank " + Twine(rank));
  if (input.getElementType() != weight.getElementType())
    return inferenceError(
        loc, "conv_transpose input and weight element types differ");
  if (!input.hasStaticShape() || !weight.hasStaticShape())
    return inferenceError(loc, "conv_transpose needs static shapes");
  if (failed(checkWindow(loc, rank - 2, strides, pads, dilations,
                         /*allowNegativePads=*/true)))
    return failure();
  if (static_cast<int64_t>(outputPadding.size()) != rank - 2)
    return inferenceError(loc, "expects " + Twine(rank - 2) +
                                   " output_padding entries");
  if (group < 1)
    return inferenceError(loc, "group must be positive, got " + Twine(group));
  int64_t channels = input.getDimSize(1);
  if (weight.getDimSize(0) != channels || channels % group != 0)
    return inferenceError(loc, "input channels " + Twine(channels) +
                                   " do not match weight dim 0 (" +
                                   Twine(weight.getDimSize(0)) + ") or group " +
                                   Twine(group));
  SmallVector<int64_t> shape{input.getDimSize(0), weight.getDimSize(1) * group};
  for (int64_t i = 0; i < rank - 2; ++i) {
    // stride * (in - 1) + output_padding + extent - pads, checked.
    std::optional<WindowSpan> window =
        getWindowSpan(0, weight.getDimSize(i + 2), dilations[i], 0, 0);
    std::optional<int64_t> size =
        llvm::checkedMul(strides[i], input.getDimSize(i + 2) - 1);
    for (int64_t term :
         {outputPadding[i], window ? window->extent : int64_t(0)})
      if (size)
        size = llvm::checkedAdd(*size, term);
    for (int64_t pad : {pads[i], pads[i + rank - 2]})
      if (size)
        size = llvm::checkedSub(*size, pad);
    if (!window || !size)
      return windowOverflow(loc, i);
    if (*size < 1)
      return inferenceError(loc, "conv_transpose output spatial dim " +
                                     Twine(i) + " would be " + Twine(*size));
    shape.push_back(*size);
  }
  results.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult ConvTransposeOp::verify() {
  return verifyBias(getOperation(), getBias(), getType());
}

// FLOPs: 2 * |in| * (M / group) * prod(K), one multiply-add per input
// element per weight tap of its group, plus |out| for a bias add. Bytes:
// default (input + weight + bias + out).
int64_t ConvTransposeOp::getFlops() {
  int64_t inputs = getNumElements(getInput().getType());
  int64_t outputs = getNumElements(getType());
  auto weight = getTensorType(getWeight());
  if (inputs < 0 || outputs < 0 || !weight.hasStaticShape())
    return -1;
  // Every input element scatters into M/group * prod(K) outputs.
  int64_t flops = 2 * inputs * product(weight.getShape().drop_front());
  return getBias() ? flops + outputs : flops;
}

bool ConvTransposeOp::isContraction() { return true; }

//===----------------------------------------------------------------------===//
// PoolOp
//===----------------------------------------------------------------------===//

LogicalResult PoolOp::inferReturnTypes(MLIRContext *ctx,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &results) {
  auto input = getTensorType(adaptor.getInput());
  ArrayRef<int64_t> kernel = adaptor.getKernelShape(),
                    strides = adaptor.getStrides(), pads = adaptor.getPads(),
                    dilations = adaptor.getDilations();
  int64_t rank = input.getRank();
  if (rank < 3)
    return inferenceError(loc,
                          "pool input must have rank >= 3, got " + Twine(rank));
  if (!input.hasStaticShape())
    return inferenceError(loc, "pool needs static shapes");
  if (static_cast<int64_t>(kernel.size()) != rank - 2)
    return inferenceError(loc, "expects " + Twine(rank - 2) +
                                   " kernel_shape entries, got " +
                                   Twine(kernel.size()));
  if (llvm::any_of(kernel, [](int64_t k) { return k <= 0; }))
    return inferenceError(loc, "kernel_shape entries must be positive");
  if (failed(checkWindow(loc, rank - 2, strides, pads, dilations)))
    return failure();
  // [N, C, D...] or, channels-last, [N, D..., C].
  bool channelsLast = adaptor.getChannelsLast();
  int64_t firstSpatial = channelsLast ? 1 : 2;
  SmallVector<int64_t> shape(input.getShape().take_front(firstSpatial));
  for (int64_t i = 0; i < rank - 2; ++i) {
    int64_t size = input.getDimSize(i + firstSpatial);
    std::optional<WindowSpan> window = getWindowSpan(
        size, kernel[i], dilations[i], pads[i], pads[i + rank - 2]);
    if (!window)
      return windowOverflow(loc, i);
    int64_t span = window->span;
    if (span < 0)
      return inferenceError(loc, "pool window of spatial dim " + Twine(i) +
                                     " is larger than the padded input");
    int64_t out = span / strides[i] + 1;
    if (adaptor.getCeilMode() && span % strides[i] != 0)
      ++out;
    // The last window must start inside the input or its begin padding.
    if (adaptor.getCeilMode()) {
      std::optional<int64_t> start = llvm::checkedMul(out - 1, strides[i]);
      std::optional<int64_t> limit = llvm::checkedAdd(size, pads[i]);
      if (!start || !limit || *start >= *limit)
        --out;
    }
    shape.push_back(out);
  }
  if (channelsLast)
    shape.push_back(input.getDimSize(rank - 1));
  results.push_back(RankedTensorType::get(shape, input.getElementType()));
  if (adaptor.getWithIndices())
    results.push_back(RankedTensorType::get(shape, IntegerType::get(ctx, 64)));
  return success();
}

LogicalResult PoolOp::verify() {
  StringRef kind = getKind();
  if (kind != "max" && kind != "avg" && kind != "lp")
    return emitOpError("kind must be max, avg or lp, got '") << kind << "'";
  if (kind != "max" && !isa<FloatType>(getResult().getType().getElementType()))
    return emitOpError(kind) << " pooling needs a float input";
  if (getWithIndices() && kind != "max")
    return emitOpError("indices are only defined for max pooling");
  if (getWithIndices() && getChannelsLast())
    return emitOpError("indices are only defined channels-second");
  if (getStorageOrder() != 0 && getStorageOrder() != 1)
    return emitOpError("storage_order must be 0 or 1");
  if (kind == "lp" && static_cast<int64_t>(getP()) < 1)
    return emitOpError("p must be >= 1, got ") << getP();
  return success();
}

// FLOPs per output for a window of K = prod(kernel_shape) elements: max
// K - 1 compares; avg K - 1 adds and a divide (K); lp K powers, K - 1 adds
// and a root (2K). Padding is not subtracted. Bytes: default (input, the
// result and the indices when used).
int64_t PoolOp::getFlops() {
  int64_t outputs = getNumElements(getResult().getType());
  if (outputs < 0)
    return -1;
  int64_t window = product(getKernelShape());
  if (getKind() == "max")
    return outputs * (window - 1);
  if (getKind() == "lp")
    return outputs * 2 * window;
  return outputs * window;
}

//===----------------------------------------------------------------------===//
// MaxUnpoolOp
//===----------------------------------------------------------------------===//

LogicalResult MaxUnpoolOp::verify() {
  auto input = getTensorType(getInput());
  auto indices = getTensorType(getIndices());
  auto result = getType();
  int64_t rank = input.getRank();
  if (rank < 3)
    return emitOpError("input must have rank >= 3, got ") << rank;
  if (indices.getShape() != input.getShape() ||
      !isa<IntegerType>(indices.getElementType()))
    return emitOpError("indices must be integers shaped like the input");
  if (result.getRank() != rank || result.getDimSize(0) != input.getDimSize(0) ||
      result.getDimSize(1) != input.getDimSize(1) ||
      result.getElementType() != input.getElementType())
    return emitOpError("result must keep the input's batch, channels and "
                       "element type");
  if (static_cast<int64_t>(getKernelShape().size()) != rank - 2 ||
      llvm::any_of(getKernelShape(), [](int64_t k) { return k <= 0; }))
    return emitOpError("expects ")
           << rank - 2 << " positive kernel_shape entries";
  return checkWindow(getLoc(), rank - 2, getStrides(), getPads(),
                     SmallVector<int64_t>(rank - 2, 1));
}

// FLOPs: |out| * prod(ceil(K / stride)), one index compare per covering
// window per output element. Bytes: default (input + indices + out).
int64_t MaxUnpoolOp::getFlops() {
  int64_t outputs = getNumElements(getType());
  if (outputs < 0)
    return -1;
  int64_t windows = 1;
  for (auto [k, s] : llvm::zip(getKernelShape(), getStrides()))
    windows *= (k + s - 1) / s;
  return outputs * windows;
}

//===----------------------------------------------------------------------===//
// DeformConvOp
//===----------------------------------------------------------------------===//

LogicalResult DeformConvOp::verify() {
  auto input = getTensorType(getInput());
  auto weight = getTensorType(getWeight());
  auto result = getType();
  if (input.getRank() != 4 || weight.getRank() != 4 || result.getRank() != 4)
    return emitOpError("expects a 2-d convolution: rank-4 input, weight and "
                       "result");
  if (failed(checkWindow(getLoc(), 2, getStrides(), getPads(), getDilations())))
    return failure();
  int64_t group = getGroup(), offsetGroup = getOffsetGroup();
  int64_t c = input.getDimSize(1), m = weight.getDimSize(0);
  if (group < 1 || offsetGroup < 1 || c % group != 0 || m % group != 0 ||
      c % offsetGroup != 0 || weight.getDimSize(1) != c / group)
    return emitOpError("group ")
           << group << " and offset_group " << offsetGroup
           << " must divide the channels, and the weight must be [M, C / "
              "group, kH, kW]";
  SmallVector<int64_t> expected{input.getDimSize(0), m};
  for (int64_t d = 0; d < 2; ++d) {
    int64_t extent = (weight.getDimSize(2 + d) - 1) * getDilations()[d] + 1;
    expected.push_back(
        (input.getDimSize(2 + d) + getPads()[d] + getPads()[2 + d] - extent) /
            getStrides()[d] +
        1);
  }
  if (result.getShape() != ArrayRef<int64_t>(expected) ||
      result.getElementType() != input.getElementType())
    return emitOpError("result must be ")
           << RankedTensorType::get(expected, input.getElementType());
  int64_t taps = weight.getDimSize(2) * weight.getDimSize(3);
  auto spatialMatches = [&](RankedTensorType t, int64_t channels) {
    return t.getRank() == 4 && t.getDimSize(0) == expected[0] &&
           t.getDimSize(1) == channels && t.getDimSize(2) == expected[2] &&
           t.getDimSize(3) == expected[3];
  };
  if (!spatialMatches(getTensorType(getOffset()), offsetGroup * taps * 2))
    return emitOpError("offset must be [N, offset_group * kH * kW * 2, oH, "
                       "oW]");
  if (!spatialMatches(getTensorType(getMask()), offsetGroup * taps))
    return emitOpError("mask must be [N, offset_group * kH * kW, oH, oW]");
  auto bias = getTensorType(getBias());
  if (bias.getRank() != 1 || bias.getDimSize(0) != m)
    return emitOpError("bias must be [") << m << "]";
  return success();
}

// FLOPs: 12 * |out| * (C / group) * kH * kW, about 12 per tap: the bilinear
// sample's weights and blend, the mask scale and the multiply-add.
// Bytes: default (input, weight, offset, bias, mask, out).
int64_t DeformConvOp::getFlops() {
  int64_t outputs = getNumElements(getType());
  auto weight = getTensorType(getWeight());
  if (outputs < 0 || !weight.hasStaticShape())
    return -1;
  return 12 * outputs * weight.getDimSize(1) * weight.getDimSize(2) *
         weight.getDimSize(3);
}

bool DeformConvOp::isContraction() { return true; }

//===----------------------------------------------------------------------===//
// Col2ImOp
//===----------------------------------------------------------------------===//

LogicalResult Col2ImOp::verify() {
  auto input = getTensorType(getInput());
  auto result = getType();
  if (input.getRank() != 3)
    return emitOpError("input must have rank 3 [N, C * prod(block_shape), L]");
  int64_t spatial = result.getRank() - 2;
  if (spatial < 1)
    return emitOpError("result must have rank >= 3");
  if (result.getElementType() != input.getElementType())
    return emitOpError("result element type differs from the input");
  ArrayRef<int64_t> block = getBlockShape(), strides = getStrides(),
                    dilations = getDilations(), pads = getPads();
  if (static_cast<int64_t>(block.size()) != spatial ||
      static_cast<int64_t>(strides.size()) != spatial ||
      static_cast<int64_t>(dilations.size()) != spatial ||
      static_cast<int64_t>(pads.size()) != 2 * spatial)
    return emitOpError("expects ")
           << spatial << " block_shape, strides and dilations entries and "
           << 2 * spatial << " pads";
  if (llvm::any_of(llvm::concat<const int64_t>(block, strides, dilations),
                   [](int64_t v) { return v <= 0; }) ||
      llvm::any_of(pads, [](int64_t v) { return v < 0; }))
    return emitOpError("block_shape, strides and dilations must be positive "
                       "and pads non-negative");
  std::optional<int64_t> blockSize = 1, blocks = 1;
  for (int64_t d = 0; d < spatial; ++d) {
    if (blockSize)
      blockSize = llvm::checkedMul(*blockSize, block[d]);
    std::optional<WindowSpan> window =
        getWindowSpan(result.getDimSize(2 + d), block[d], dilations[d], pads[d],
                      pads[spatial + d]);
    if (!window)
      return emitOpError("block dim ")
             << d << " overflows int64 (block, dilation, pads or image size "
             << "out of range)";
    if (window->span < 0)
      return emitOpError("block dim ") << d << " does not fit the image";
    if (blocks)
      blocks = llvm::checkedMul(*blocks, window->span / strides[d] + 1);
  }
  std::optional<int64_t> channels =
      blockSize ? llvm::checkedMul(result.getDimSize(1), *blockSize)
                : std::nullopt;
  if (!channels || !blocks)
    return emitOpError("block count or size overflows int64");
  if (input.getDimSize(0) != result.getDimSize(0) ||
      input.getDimSize(1) != *channels || input.getDimSize(2) != *blocks)
    return emitOpError("input ")
           << input << " does not match the result " << result << " ("
           << *blockSize << " values per block, " << *blocks << " blocks)";
  return success();
}

// FLOPs: |in|, one add per block value. Bytes: default (|in| + |out|).
int64_t Col2ImOp::getFlops() { return getNumElements(getInput().getType()); }

//===----------------------------------------------------------------------===//
// ResizeOp
//===----------------------------------------------------------------------===//

LogicalResult ResizeOp::verify() {
  auto input = getTensorType(getInput());
  auto result = getType();
  if (input.getRank() != result.getRank())
    return emitOpError("result rank differs from the input rank");
  if (input.getElementType() != result.getElementType())
    return emitOpError("result element type differs from the input");
  if (static_cast<int64_t>(getScales().size()) != input.getRank())
    return emitOpError("expects ")
           << input.getRank() << " scales, got " << getScales().size();
  if (llvm::any_of(getScales(), [](double s) { return !(s > 0); }))
    return emitOpError("scales must be positive");
  StringRef mode = getMode();
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return emitOpError("mode must be nearest, linear or cubic, got '")
           << mode << "'";
  if (mode != "nearest" && !isa<FloatType>(input.getElementType()))
    return emitOpError(mode) << " resize needs a float input";
  StringRef coord = getCoordinateTransformationMode();
  if (!llvm::is_contained({"half_pixel", "half_pixel_symmetric",
                           "pytorch_half_pixel", "align_corners", "asymmetric",
                           "tf_half_pixel_for_nn", "tf_crop_and_resize"},
                          coord))
    return emitOpError("unsupported coordinate_transformation_mode '")
           << coord << "'";
  if (!llvm::is_contained(
          {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
          getNearestMode()))
    return emitOpError("unsupported nearest_mode '") << getNearestMode() << "'";
  if (coord == "tf_crop_and_resize") {
    if (!getRoi() ||
        static_cast<int64_t>(getRoi()->size()) != 2 * input.getRank())
      return emitOpError("tf_crop_and_resize needs ")
             << 2 * input.getRank() << " roi values";
  }
  if (!(getTapsPerElement() <= kMaxTapsPerElement))
    return emitOpError("reads ")
           << (getTapsPerElement() < 0x1p62
                   ? std::to_string(static_cast<int64_t>(getTapsPerElement()))
                   : std::string("more than 2^62"))
           << " input elements per output element; at most "
           << kMaxTapsPerElement << " are supported";
  return success();
}

double ResizeOp::getTapCount(StringRef mode, bool antialias, double scale) {
  if (mode == "nearest")
    return 1;
  bool linear = mode == "linear";
  if (!antialias || !(scale < 1))
    return linear ? 2 : 4;
  return 2 - 2 * (std::floor((linear ? -1.0 : -2.0) / scale) + 1);
}

int64_t ResizeOp::getFirstAntialiasTap(bool linear, double scale) {
  return static_cast<int64_t>(std::floor((linear ? -1.0 : -2.0) / scale)) + 1;
}

double ResizeOp::getTapsPerElement() {
  auto input = getTensorType(getInput());
  double taps = 1;
  for (int64_t i = 0; i < input.getRank(); ++i)
    if (input.getDimSize(i) != getType().getDimSize(i) || getScales()[i] != 1.0)
      taps *= getTapCount(getMode(), getAntialias(), getScales()[i]);
  return taps;
}

// FLOPs: 0 for nearest (a gather: the coordinate is index arithmetic), else
// 2 per neighbour per output element, with 2 (linear) or 4 (cubic)
// neighbours per resized dim; the antialias kernel's extra taps are not
// counted.
int64_t ResizeOp::getFlops() {
  int64_t outputs = getNumElements(getType());
  if (outputs < 0)
    return -1;
  if (getMode() == "nearest")
    return 0;
  int64_t taps = getMode() == "linear" ? 2 : 4;
  int64_t neighbours = 1;
  auto input = getTensorType(getInput());
  for (int64_t i = 0; i < input.getRank(); ++i)
    if (input.getDimSize(i) != getType().getDimSize(i) || getScales()[i] != 1.0)
      neighbours *= taps;
  return 2 * outputs * neighbours;
}

// Bytes: default (|in| + |out|), except nearest, which reads at most one
// input element per output: min(|in|, |out|) + |out|, so a downscale does
// not pay for the input elements it skips.
int64_t ResizeOp::getMinBytes() {
  if (getMode() != "nearest")
    return sumOperandAndResultBytes(getOperation());
  int64_t in = getTensorBytes(getInput().getType());
  int64_t out = getTensorBytes(getType());
  if (in < 0 || out < 0)
    return -1;
  return std::min(in, out) + out;
}

//===----------------------------------------------------------------------===//
// GridSampleOp
//===----------------------------------------------------------------------===//

LogicalResult GridSampleOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &results) {
  auto input = getTensorType(adaptor.getInput());
  auto grid = getTensorType(adaptor.getGrid());
  int64_t rank = input.getRank();
  if ((rank != 4 && rank != 5) || grid.getRank() != rank)
    return inferenceError(
        loc, "grid_sample expects a rank-4 or rank-5 input and grid of the "
             "same rank");
  if (grid.getDimSize(rank - 1) != rank - 2 ||
      grid.getDimSize(0) != input.getDimSize(0))
    return inferenceError(
        loc, "grid must have shape [" + Twine(input.getDimSize(0)) + ", ..., " +
                 Twine(rank - 2) + "], got " + typeToString(grid));
  if (grid.getElementType() != input.getElementType())
    return inferenceError(loc, "grid and input element types differ");
  SmallVector<int64_t> shape{input.getDimSize(0), input.getDimSize(1)};
  llvm::append_range(shape, grid.getShape().slice(1, rank - 2));
  results.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult GridSampleOp::verify() {
  if (!llvm::is_contained({"bilinear", "nearest", "bicubic"}, getMode()))
    return emitOpError("mode must be bilinear, nearest or bicubic, got '")
           << getMode() << "'";
  if (!llvm::is_contained({"zeros", "border", "reflection"}, getPaddingMode()))
    return emitOpError("padding_mode must be zeros, border or reflection, "
                       "got '")
           << getPaddingMode() << "'";
  if (getMode() == "bicubic" && getType().getRank() != 4)
    return emitOpError("bicubic sampling needs a 2-d (rank-4) input");
  return success();
}

// FLOPs: 10 * taps * |out|, taps = 1 (nearest), 2^d (n-linear over d
// spatial dims) or 16 (bicubic): coordinate unnormalization, weights and a
// multiply-add per tap, about 10. Bytes: default (input + grid + out).
int64_t GridSampleOp::getFlops() {
  int64_t outputs = getNumElements(getType());
  if (outputs < 0)
    return -1;
  int64_t spatial = getType().getRank() - 2;
  int64_t taps = getMode() == "nearest"
                     ? 1
                     : (getMode() == "bilinear" ? (int64_t(1) << spatial) : 16);
  return 10 * taps * outputs;
}

//===----------------------------------------------------------------------===//
// RoiAlignOp
//===----------------------------------------------------------------------===//

LogicalResult RoiAlignOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &results) {
  auto input = getTensorType(adaptor.getInput());
  auto rois = getTensorType(adaptor.getRois());
  auto indices = getTensorType(adaptor.getBatchIndices());
  if (input.getRank() != 4)
    return inferenceError(loc, "roi_align expects a rank-4 input");
  if (rois.getRank() != 2 || rois.getDimSize(1) != 4)
    return inferenceError(loc, "rois must have shape [R, 4], got " +
                                   typeToString(rois));
  if (indices.getRank() != 1 || indices.getDimSize(0) != rois.getDimSize(0) ||
      !isa<IntegerType>(indices.getElementType()))
    return inferenceError(loc, "batch_indices must be integers of shape [" +
                                   Twine(rois.getDimSize(0)) + "]");
  auto outHeight = static_cast<int64_t>(adaptor.getOutputHeight());
  auto outWidth = static_cast<int64_t>(adaptor.getOutputWidth());
  if (outHeight < 1 || outWidth < 1)
    return inferenceError(loc, "output_height and output_width must be "
                               "positive");
  results.push_back(RankedTensorType::get(
      {rois.getDimSize(0), input.getDimSize(1), outHeight, outWidth},
      input.getElementType()));
  return success();
}

LogicalResult RoiAlignOp::verify() {
  if (getMode() != "avg" && getMode() != "max")
    return emitOpError("mode must be avg or max, got '") << getMode() << "'";
  if (static_cast<int64_t>(getSamplingRatio()) < 1)
    return emitOpError("sampling_ratio must be positive, got ")
           << getSamplingRatio();
  if (getRois().getType().getElementType() !=
      getInput().getType().getElementType())
    return emitOpError("rois and input element types differ");
  return success();
}

// FLOPs: 12 * |out| * sampling_ratio^2, about 12 per bilinear sample (its
// weights, the blend and the bin average or max). Bytes: default.
int64_t RoiAlignOp::getFlops() {
  int64_t outputs = getNumElements(getType());
  if (outputs < 0)
    return -1;
  return 12 * outputs * getSamplingRatio() * getSamplingRatio();
}

//===----------------------------------------------------------------------===//
// Quantization
//===----------------------------------------------------------------------===//

/// The ONNX float8 types, which quantize and dequantize like 8-bit integers.
static bool isFloat8Type(Type type) {
  return isa<Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type,
             Float8E5M2FNUZType>(type);
}

/// `param` (scale or zero point) must be a scalar or 1-D along `axis`.
static LogicalResult checkQuantParam(std::optional<Location> loc,
                                     RankedTensorType input,
                                     RankedTensorType param, int64_t axis,
                                     StringRef name) {
  if (param.hasStaticShape() && param.getNumElements() == 1 &&
      param.getRank() <= 1)
    return success();
  if (axis < 0 || axis >= input.getRank())
    return inferenceError(loc, "axis " + Twine(axis) +
                                   " out of range for rank " +
                                   Twine(input.getRank()));
  if (param.getRank() != 1 || param.getDimSize(0) != input.getDimSize(axis))
    return inferenceError(loc, name + " must be a scalar or have shape [" +
                                   Twine(input.getDimSize(axis)) + "], got " +
                                   typeToString(param));
  return success();
}

LogicalResult
QuantizeLinearOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                   Adaptor adaptor,
                                   SmallVectorImpl<Type> &results) {
  auto input = getTensorType(adaptor.getInput());
  auto scale = getTensorType(adaptor.getScale());
  auto zeroPoint = getTensorType(adaptor.getZeroPoint());
  Type zeroElement = zeroPoint.getElementType();
  if (!isFloat8Type(zeroElement) && (!isa<IntegerType>(zeroElement) ||
                                     zeroElement.getIntOrFloatBitWidth() > 32))
    return inferenceError(loc, "zero point must have an integer type of at "
                               "most 32 bits or a float8 type, got " +
                                   typeToString(zeroPoint));
  if (failed(checkQuantParam(loc, input, scale, adaptor.getAxis(), "scale")) ||
      failed(checkQuantParam(loc, input, zeroPoint, adaptor.getAxis(),
                             "zero point")))
    return failure();
  results.push_back(input.clone(zeroPoint.getElementType()));
  return success();
}

// FLOPs: 4 * |x| (divide, round, add the zero point, clamp). Bytes: default
// (x, scale, zero_point, the 8-bit result).
int64_t QuantizeLinearOp::getFlops() {
  int64_t n = getNumElements(getType());
  return n < 0 ? -1 : 4 * n;
}

LogicalResult
DequantizeLinearOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                     Adaptor adaptor,
                                     SmallVectorImpl<Type> &results) {
  auto input = getTensorType(adaptor.getInput());
  auto scale = getTensorType(adaptor.getScale());
  auto zeroPoint = getTensorType(adaptor.getZeroPoint());
  if (!isa<IntegerType>(input.getElementType()) &&
      !isFloat8Type(input.getElementType()))
    return inferenceError(loc, "dequantize_linear input must be an integer "
                               "or float8 tensor, got " +
                                   typeToString(input));
  if (zeroPoint.getElementType() != input.getElementType())
    return inferenceError(loc,
                          "zero point element type differs from the input");
  if (failed(checkQuantParam(loc, input, scale, adaptor.getAxis(), "scale")) ||
      failed(checkQuantParam(loc, input, zeroPoint, adaptor.getAxis(),
                             "zero point")))
    return failure();
  results.push_back(input.clone(scale.getElementType()));
  return success();
}

// FLOPs: 2 * |x| (subtract the zero point, scale). Bytes: default.
int64_t DequantizeLinearOp::getFlops() {
  int64_t n = getNumElements(getType());
  return n < 0 ? -1 : 2 * n;
}

LogicalResult DynamicQuantizeLinearOp::inferReturnTypes(
    MLIRContext *ctx, std::optional<Location>, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  auto input = getTensorType(adaptor.getInput());
  Type u8 = IntegerType::get(ctx, 8, IntegerType::Unsigned);
  results.push_back(input.clone(u8));
  results.push_back(RankedTensorType::get({}, input.getElementType()));
  results.push_back(RankedTensorType::get({}, u8));
  return success();
}

// FLOPs: 6 * |x|: a min and a max reduction (2 per element) then quantize
// (4 per element). Bytes: default (x once, the ui8 result, two scalars).
int64_t DynamicQuantizeLinearOp::getFlops() {
  int64_t n = getNumElements(getInput().getType());
  return n < 0 ? -1 : 6 * n;
}
