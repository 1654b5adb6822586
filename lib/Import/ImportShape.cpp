//===- ImportShape.cpp - shape computation and data movement ---===//
//
// ONNX node handlers: shape computation and data movement.
//
// Operands that decide shapes (target shapes, axes, slice bounds, pads,
// repeats, split sizes, k, depth) must be constants; they become attributes
// in normalized form (non-negative axes, clamped bounds). Ops are built with
// folding, so that the shape arithmetic of exported models (Shape -> Gather
// -> Unsqueeze -> Concat -> Reshape) collapses to constants while importing.
// Since every shape is static, Shape, Size, ConstantOfShape, Range and
// EyeLike produce constants.
//
//===----------------------------------------------------------------------===//

#include "ImporterInternal.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::onnx_import;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// `axis` in [-rank, rank) as a non-negative axis, or an error naming `what`.
static FailureOr<int64_t> normalizeAxis(NodeContext &n, int64_t axis,
                                        int64_t rank, StringRef what = "axis") {
  if (axis < -rank || axis >= rank) {
    n.emitError() << what << " " << axis << " is out of range for rank "
                  << rank;
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}

/// Creates `OpTy`, verifies it (reporting at the node instead of leaving an
/// invalid op behind) and folds it when its operands are constants. Handlers
/// check what type inference needs before calling this.
template <typename OpTy, typename... Args>
static FailureOr<Value> buildOp(NodeContext &n, Args &&...args) {
  OpTy op = OpTy::create(n.builder, n.loc, std::forward<Args>(args)...);
  if (failed(mlir::verify(op, /*verifyRecursively=*/false))) {
    op->erase();
    return failure();
  }
  SmallVector<Value, 1> folded;
  if (succeeded(n.builder.tryFold(op, folded)) && !folded.empty() &&
      folded.front() != op->getResult(0)) {
    op->erase();
    return folded.front();
  }
  return op->getResult(0);
}

/// A ridge.constant holding `values` (`shape`, element type `element`).
static Value createConstant(NodeContext &n, Type element,
                            ArrayRef<int64_t> shape,
                            ArrayRef<Attribute> values) {
  auto type = RankedTensorType::get(shape, element);
  return ConstantOp::create(n.builder, n.loc,
                            DenseElementsAttr::get(type, values));
}

/// A 1-D (or, with `scalar`, 0-D) i64 constant.
static Value createI64Constant(NodeContext &n, ArrayRef<int64_t> values,
                               bool scalar = false) {
  auto type = RankedTensorType::get(
      scalar ? ArrayRef<int64_t>{} : ArrayRef<int64_t>{(int64_t)values.size()},
      n.builder.getI64Type());
  return ConstantOp::create(n.builder, n.loc,
                            DenseElementsAttr::get(type, values));
}

/// Requires operand `i` to be an integer constant (or a specialized graph
/// input) and names it as `what` otherwise.
static FailureOr<SmallVector<int64_t>> requireInts(NodeContext &n, unsigned i,
                                                   StringRef what) {
  std::optional<SmallVector<int64_t>> values = n.constantInts(i);
  if (!values) {
    n.emitError() << what << " (input " << i
                  << ") must be an integer constant: Ridgeline compiles for "
                     "static shapes";
    return failure();
  }
  return *values;
}

/// The single value of a one-element constant operand as a double.
static FailureOr<double> requireScalar(NodeContext &n, unsigned i,
                                       StringRef what) {
  DenseElementsAttr attr = n.shapeOperand(i);
  if (!attr || attr.getNumElements() != 1) {
    n.emitError() << what << " (input " << i
                  << ") must be a one-element constant: it decides a shape";
    return failure();
  }
  Attribute value = *attr.value_begin<Attribute>();
  if (auto f = dyn_cast<FloatAttr>(value))
    return f.getValueAsDouble();
  auto i64 = cast<IntegerAttr>(value);
  if (i64.getType().isUnsignedInteger() || i64.getType().isInteger(1))
    return static_cast<double>(i64.getValue().getZExtValue());
  return static_cast<double>(i64.getValue().getSExtValue());
}

/// Normalizes a list of axes for `rank`, rejecting duplicates.
static FailureOr<SmallVector<int64_t>>
normalizeAxes(NodeContext &n, ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> result;
  SmallVector<bool> seen(rank, false);
  for (int64_t axis : axes) {
    FailureOr<int64_t> a = normalizeAxis(n, axis, rank);
    if (failed(a))
      return failure();
    if (seen[*a]) {
      n.emitError() << "axis " << axis << " is repeated";
      return failure();
    }
    seen[*a] = true;
    result.push_back(*a);
  }
  return result;
}

static FailureOr<Value> sliceOf(NodeContext &n, Value input,
                                ArrayRef<int64_t> starts,
                                ArrayRef<int64_t> sizes,
                                ArrayRef<int64_t> steps) {
  return buildOp<SliceOp>(n, input, n.builder.getDenseI64ArrayAttr(starts),
                          n.builder.getDenseI64ArrayAttr(sizes),
                          n.builder.getDenseI64ArrayAttr(steps));
}

/// Sets result 0 from `value` unless building it failed.
static LogicalResult setResult(NodeContext &n, FailureOr<Value> value) {
  if (failed(value))
    return failure();
  n.setResult(0, *value);
  return success();
}

static bool isIndexType(Type element) {
  return element.isSignlessInteger(32) || element.isSignlessInteger(64);
}

static LogicalResult requireIndices(NodeContext &n, Value indices) {
  Type element = typeOf(indices).getElementType();
  if (isIndexType(element))
    return success();
  return n.emitError() << "indices must be int32 or int64, got " << element;
}

//===----------------------------------------------------------------------===//
// Reshape, Flatten, Squeeze, Unsqueeze, Transpose
//===----------------------------------------------------------------------===//

static LogicalResult importReshape(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  SmallVector<int64_t> requested;
  if (n.opset < 5) {
    std::optional<SmallVector<int64_t>> shape = n.attrInts("shape");
    if (!shape)
      return n.emitError() << "missing attribute 'shape'";
    requested = *shape;
  } else {
    FailureOr<SmallVector<int64_t>> shape =
        requireInts(n, 1, "the target shape");
    if (failed(shape))
      return failure();
    requested = *shape;
  }
  bool allowZero = n.attrInt("allowzero", 0) != 0;
  auto type = typeOf(*input);
  int64_t known = 1, inferIndex = -1;
  SmallVector<int64_t> shape;
  for (auto [i, d] : llvm::enumerate(requested)) {
    if (d == 0 && !allowZero) {
      if (i >= static_cast<size_t>(type.getRank()))
        return n.emitError()
               << "shape entry " << i << " copies a dimension the input lacks";
      d = type.getDimSize(i);
    }
    if (d == -1) {
      if (inferIndex >= 0)
        return n.emitError() << "more than one -1 in the target shape";
      inferIndex = i;
      shape.push_back(1);
      continue;
    }
    if (d < 0)
      return n.emitError() << "invalid target dimension " << d;
    if (llvm::MulOverflow(known, d, known))
      return n.emitError() << "the target shape's element count overflows "
                              "64 bits";
    shape.push_back(d);
  }
  int64_t total = type.getNumElements();
  if (inferIndex >= 0) {
    if (known == 0 || total % known != 0)
      return n.emitError() << "cannot infer the -1 dimension: " << total
                           << " elements into " << known;
    shape[inferIndex] = total / known;
  } else if (known != total) {
    return n.emitError() << "cannot reshape " << type << " (" << total
                         << " elements) to " << known << " elements";
  }
  n.setResult(0, reshapeTo(n, *input, shape));
  return success();
}

static LogicalResult importFlatten(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  auto type = typeOf(*input);
  int64_t rank = type.getRank();
  int64_t axis = n.attrInt("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return n.emitError() << "axis " << n.attrInt("axis", 1)
                         << " is out of range for rank " << rank;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? outer : inner) *= type.getDimSize(i);
  n.setResult(0, reshapeTo(n, *input, {outer, inner}));
  return success();
}

/// Squeeze-1/11 take `axes` as an attribute, Squeeze-13 as optional input 1.
static LogicalResult importSqueeze(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  auto type = typeOf(*input);
  std::optional<SmallVector<int64_t>> axes;
  if (n.opset < 13) {
    axes = n.attrInts("axes");
  } else if (n.operand(1)) {
    FailureOr<SmallVector<int64_t>> given = requireInts(n, 1, "axes");
    if (failed(given))
      return failure();
    axes = *given;
  }
  SmallVector<bool> drop(type.getRank(), false);
  if (axes) {
    FailureOr<SmallVector<int64_t>> normalized =
        normalizeAxes(n, *axes, type.getRank());
    if (failed(normalized))
      return failure();
    for (int64_t axis : *normalized) {
      if (type.getDimSize(axis) != 1)
        return n.emitError() << "cannot squeeze dimension " << axis
                             << " of size " << type.getDimSize(axis);
      drop[axis] = true;
    }
  } else {
    for (int64_t d = 0; d < type.getRank(); ++d)
      drop[d] = type.getDimSize(d) == 1;
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (!drop[d])
      shape.push_back(type.getDimSize(d));
  n.setResult(0, reshapeTo(n, *input, shape));
  return success();
}

/// Unsqueeze-1/11 take `axes` as an attribute, Unsqueeze-13 as input 1.
static LogicalResult importUnsqueeze(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  auto type = typeOf(*input);
  SmallVector<int64_t> axes;
  if (n.opset < 13) {
    std::optional<SmallVector<int64_t>> given = n.attrInts("axes");
    if (!given)
      return n.emitError() << "missing attribute 'axes'";
    axes = *given;
  } else {
    FailureOr<SmallVector<int64_t>> given = requireInts(n, 1, "axes");
    if (failed(given))
      return failure();
    axes = *given;
  }
  // Axes index the result, whose rank includes the new dimensions.
  int64_t rank = type.getRank() + axes.size();
  FailureOr<SmallVector<int64_t>> normalized = normalizeAxes(n, axes, rank);
  if (failed(normalized))
    return failure();
  SmallVector<bool> inserted(rank, false);
  for (int64_t axis : *normalized)
    inserted[axis] = true;
  SmallVector<int64_t> shape;
  int64_t next = 0;
  for (int64_t d = 0; d < rank; ++d)
    shape.push_back(inserted[d] ? 1 : type.getDimSize(next++));
  n.setResult(0, reshapeTo(n, *input, shape));
  return success();
}

static LogicalResult importTranspose(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  int64_t rank = typeOf(*input).getRank();
  SmallVector<int64_t> perm;
  if (auto given = n.attrInts("perm")) {
    perm = *given;
  } else {
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  }
  SmallVector<bool> seen(rank, false);
  if (static_cast<int64_t>(perm.size()) != rank)
    return n.emitError() << "perm has " << perm.size()
                         << " entries for an input of rank " << rank;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return n.emitError() << "perm is not a permutation of 0.." << rank - 1;
    seen[p] = true;
  }
  if (llvm::equal(perm, llvm::seq<int64_t>(0, rank))) {
    n.setResult(0, *input);
    return success();
  }
  n.setResult(0, TransposeOp::create(n.builder, n.loc, *input, perm));
  return success();
}

/// The operands of DepthToSpace and SpaceToDepth: a 4-D NCHW input, a
/// positive block size and the channel order (DCR or CRD).
struct BlockRearrangement {
  Value input;
  int64_t block;
  bool dcr;
  int64_t batch, channels, height, width;
};

static FailureOr<BlockRearrangement> getBlockRearrangement(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  auto type = typeOf(*input);
  if (type.getRank() != 4)
    return n.emitError() << "expects a 4-D NCHW input, got " << type;
  int64_t b = n.attrInt("blocksize", 0);
  // SpaceToDepth gained DepthToSpace's modes in newer opsets; DCR is the old
  // behaviour of both.
  std::string mode = n.attrString("mode", "DCR");
  if (b <= 0)
    return n.emitError() << "blocksize " << b << " must be positive";
  if (mode != "DCR" && mode != "CRD")
    return n.emitError() << "unknown mode '" << mode << "' (DCR or CRD)";
  return BlockRearrangement{*input,
                            b,
                            mode == "DCR",
                            type.getDimSize(0),
                            type.getDimSize(1),
                            type.getDimSize(2),
                            type.getDimSize(3)};
}

/// DepthToSpace and SpaceToDepth are a reshape, a transpose and a reshape.
static LogicalResult importDepthToSpace(NodeContext &n) {
  FailureOr<BlockRearrangement> r = getBlockRearrangement(n);
  if (failed(r))
    return failure();
  int64_t b = r->block, c = r->channels;
  if (c % (b * b) != 0)
    return n.emitError() << "channels " << c
                         << " are not divisible by blocksize^2 " << b * b;
  int64_t oc = c / (b * b);
  SmallVector<int64_t> split, perm;
  if (r->dcr) {
    split = {r->batch, b, b, oc, r->height, r->width};
    perm = {0, 3, 4, 1, 5, 2};
  } else {
    split = {r->batch, oc, b, b, r->height, r->width};
    perm = {0, 1, 4, 2, 5, 3};
  }
  Value x = reshapeTo(n, r->input, split);
  x = TransposeOp::create(n.builder, n.loc, x, perm);
  n.setResult(0, reshapeTo(n, x, {r->batch, oc, r->height * b, r->width * b}));
  return success();
}

static LogicalResult importSpaceToDepth(NodeContext &n) {
  FailureOr<BlockRearrangement> r = getBlockRearrangement(n);
  if (failed(r))
    return failure();
  int64_t b = r->block, c = r->channels, h = r->height, w = r->width;
  if (h % b != 0 || w % b != 0)
    return n.emitError() << "spatial dims " << h << "x" << w
                         << " are not divisible by blocksize " << b;
  Value x = reshapeTo(n, r->input, {r->batch, c, h / b, b, w / b, b});
  // DCR orders output channels (block row, block column, channel); CRD
  // (channel, block row, block column).
  SmallVector<int64_t> perm = r->dcr ? SmallVector<int64_t>{0, 3, 5, 1, 2, 4}
                                     : SmallVector<int64_t>{0, 1, 3, 5, 2, 4};
  x = TransposeOp::create(n.builder, n.loc, x, perm);
  n.setResult(0, reshapeTo(n, x, {r->batch, c * b * b, h / b, w / b}));
  return success();
}

//===----------------------------------------------------------------------===//
// Concat, Split, Slice
//===----------------------------------------------------------------------===//

static LogicalResult importConcat(NodeContext &n) {
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < n.getNumOperands(); ++i) {
    FailureOr<Value> input = requireOperand(n, i);
    if (failed(input))
      return failure();
    inputs.push_back(*input);
  }
  if (inputs.empty())
    return n.emitError() << "needs at least one input";
  auto first = typeOf(inputs.front());
  if (!n.attr("axis"))
    return n.emitError() << "missing attribute 'axis'";
  FailureOr<int64_t> axis =
      normalizeAxis(n, n.attrInt("axis", 0), first.getRank());
  if (failed(axis))
    return failure();
  for (Value input : inputs) {
    auto type = typeOf(input);
    if (type.getElementType() != first.getElementType() ||
        type.getRank() != first.getRank())
      return n.emitError() << "inputs " << first << " and " << type
                           << " differ in element type or rank";
    for (int64_t d = 0; d < first.getRank(); ++d)
      if (d != *axis && type.getDimSize(d) != first.getDimSize(d))
        return n.emitError() << "inputs " << first << " and " << type
                             << " differ in dimension " << d;
  }
  return setResult(
      n, buildOp<ConcatOp>(n, inputs, n.builder.getI64IntegerAttr(*axis)));
}

/// Split-2/11 take the sizes as the `split` attribute, Split-13 as optional
/// input 1; Split-18 may instead give `num_outputs`.
static LogicalResult importSplit(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  auto type = typeOf(*input);
  FailureOr<int64_t> axis =
      normalizeAxis(n, n.attrInt("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  int64_t dim = type.getDimSize(*axis);
  SmallVector<int64_t> sizes;
  if (n.opset < 13 && n.attr("split")) {
    sizes = *n.attrInts("split");
  } else if (n.operand(1)) {
    FailureOr<SmallVector<int64_t>> given = requireInts(n, 1, "split");
    if (failed(given))
      return failure();
    sizes = *given;
  } else {
    int64_t parts = n.opset >= 18 && n.attr("num_outputs")
                        ? n.attrInt("num_outputs", 0)
                        : n.getNumResults();
    if (parts <= 0)
      return n.emitError() << "cannot split into " << parts << " parts";
    // Equal parts; from opset 18 the last one may be smaller.
    int64_t chunk = (dim + parts - 1) / parts;
    if (n.opset < 18 && dim % parts != 0)
      return n.emitError() << "dimension " << *axis << " of size " << dim
                           << " does not split into " << parts
                           << " equal parts";
    for (int64_t p = 0; p < parts; ++p)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - p * chunk)));
  }
  if (sizes.size() != n.getNumResults())
    return n.emitError() << sizes.size() << " split sizes for "
                         << n.getNumResults() << " outputs";
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      return n.emitError() << "negative split size " << s;
    total += s;
  }
  if (total != dim)
    return n.emitError() << "split sizes sum to " << total
                         << ", the dimension has " << dim;
  int64_t rank = type.getRank();
  SmallVector<int64_t> starts(rank, 0), steps(rank, 1);
  SmallVector<int64_t> shape(type.getShape());
  int64_t offset = 0;
  for (auto [i, size] : llvm::enumerate(sizes)) {
    starts[*axis] = size == 0 ? 0 : offset;
    shape[*axis] = size;
    FailureOr<Value> part = sliceOf(n, *input, starts, shape, steps);
    if (failed(part))
      return failure();
    n.setResult(i, *part);
    offset += size;
  }
  return success();
}

/// ONNX Slice bounds for one axis of size `dim` as (start, size).
static std::pair<int64_t, int64_t>
normalizeSliceBounds(int64_t start, int64_t end, int64_t step, int64_t dim) {
  // Negative bounds count from the end; INT64_MIN/INT64_MAX sentinels only
  // ever get `dim` added (no overflow) and are then clamped.
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  // The element count is ceil(distance / |step|), as (distance - 1) / |step|
  // + 1 in unsigned arithmetic: |step| may be 2^63 and distance + |step|
  // would overflow.
  int64_t size;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    size = end > start
               ? static_cast<int64_t>(static_cast<uint64_t>(end - start - 1) /
                                          static_cast<uint64_t>(step) +
                                      1)
               : 0;
  } else {
    start = std::clamp<int64_t>(start, -1, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    uint64_t stride = uint64_t(0) - static_cast<uint64_t>(step);
    size = start > end
               ? static_cast<int64_t>(
                     static_cast<uint64_t>(start - end - 1) / stride + 1)
               : 0;
  }
  return {size == 0 ? 0 : start, size};
}

/// Slice-1 takes starts/ends/axes as attributes; Slice-10 as inputs, with
/// optional axes and steps.
static LogicalResult importSlice(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  auto type = typeOf(*input);
  int64_t rank = type.getRank();
  SmallVector<int64_t> starts, ends, axes, steps;
  if (n.opset < 10) {
    std::optional<SmallVector<int64_t>> s = n.attrInts("starts"),
                                        e = n.attrInts("ends");
    if (!s || !e)
      return n.emitError() << "missing attribute 'starts' or 'ends'";
    starts = *s;
    ends = *e;
    if (auto a = n.attrInts("axes"))
      axes = *a;
  } else {
    FailureOr<SmallVector<int64_t>> s = requireInts(n, 1, "starts");
    if (failed(s))
      return failure();
    FailureOr<SmallVector<int64_t>> e = requireInts(n, 2, "ends");
    if (failed(e))
      return failure();
    starts = *s;
    ends = *e;
    if (n.operand(3)) {
      FailureOr<SmallVector<int64_t>> a = requireInts(n, 3, "axes");
      if (failed(a))
        return failure();
      axes = *a;
    }
    if (n.operand(4)) {
      FailureOr<SmallVector<int64_t>> st = requireInts(n, 4, "steps");
      if (failed(st))
        return failure();
      steps = *st;
    }
  }
  if (axes.empty())
    for (int64_t i = 0, e = starts.size(); i < e; ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return n.emitError() << "starts, ends, axes and steps differ in length ("
                         << starts.size() << ", " << ends.size() << ", "
                         << axes.size() << ", " << steps.size() << ")";
  FailureOr<SmallVector<int64_t>> normalized = normalizeAxes(n, axes, rank);
  if (failed(normalized))
    return failure();
  SmallVector<int64_t> outStarts(rank, 0), outSizes(type.getShape()),
      outSteps(rank, 1);
  for (auto [i, axis] : llvm::enumerate(*normalized)) {
    if (steps[i] == 0)
      return n.emitError() << "step for axis " << axes[i] << " is zero";
    auto [start, size] = normalizeSliceBounds(starts[i], ends[i], steps[i],
                                              type.getDimSize(axis));
    outStarts[axis] = start;
    outSizes[axis] = size;
    outSteps[axis] = steps[i];
  }
  return setResult(n, sliceOf(n, *input, outStarts, outSizes, outSteps));
}

//===----------------------------------------------------------------------===//
// Gathers and scatters
//===----------------------------------------------------------------------===//

static LogicalResult importGather(NodeContext &n) {
  FailureOr<Value> data = requireOperand(n, 0);
  FailureOr<Value> indices = requireOperand(n, 1);
  if (failed(data) || failed(indices) || failed(requireIndices(n, *indices)))
    return failure();
  FailureOr<int64_t> axis =
      normalizeAxis(n, n.attrInt("axis", 0), typeOf(*data).getRank());
  if (failed(axis))
    return failure();
  RankedTensorType indexType = typeOf(*indices);
  if (typeOf(*data).getDimSize(*axis) == 0 && indexType.hasStaticShape() &&
      indexType.getNumElements() != 0) {
    n.emitError() << "gather axis " << *axis
                  << " has size 0: no index is in range";
    return failure();
  }
  return setResult(n, buildOp<GatherOp>(n, *data, *indices,
                                        n.builder.getI64IntegerAttr(*axis)));
}

static LogicalResult importGatherElements(NodeContext &n) {
  FailureOr<Value> data = requireOperand(n, 0);
  FailureOr<Value> indices = requireOperand(n, 1);
  if (failed(data) || failed(indices) || failed(requireIndices(n, *indices)))
    return failure();
  auto dataType = typeOf(*data), indicesType = typeOf(*indices);
  if (dataType.getRank() != indicesType.getRank())
    return n.emitError() << "data " << dataType << " and indices "
                         << indicesType << " differ in rank";
  FailureOr<int64_t> axis =
      normalizeAxis(n, n.attrInt("axis", 0), dataType.getRank());
  if (failed(axis))
    return failure();
  return setResult(
      n, buildOp<GatherElementsOp>(n, *data, *indices,
                                   n.builder.getI64IntegerAttr(*axis)));
}

static LogicalResult importGatherND(NodeContext &n) {
  FailureOr<Value> data = requireOperand(n, 0);
  FailureOr<Value> indices = requireOperand(n, 1);
  if (failed(data) || failed(indices) || failed(requireIndices(n, *indices)))
    return failure();
  auto dataType = typeOf(*data), indicesType = typeOf(*indices);
  int64_t batch = n.attrInt("batch_dims", 0);
  int64_t r = dataType.getRank(), q = indicesType.getRank();
  if (r < 1 || q < 1)
    return n.emitError() << "data and indices need rank >= 1";
  int64_t k = indicesType.getShape().back();
  if (batch < 0 || batch >= std::min(r, q))
    return n.emitError() << "batch_dims " << batch << " out of range";
  if (batch + k > r)
    return n.emitError() << "index tuples of length " << k
                         << " exceed the data rank " << r;
  for (int64_t d = 0; d < batch; ++d)
    if (dataType.getDimSize(d) != indicesType.getDimSize(d))
      return n.emitError() << "batch dimension " << d
                           << " differs between data and indices";
  return setResult(n, buildOp<GatherNDOp>(n, *data, *indices,
                                          n.builder.getI64IntegerAttr(batch)));
}

static FailureOr<std::string> getReduction(NodeContext &n) {
  std::string reduction = n.attrString("reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul" &&
      reduction != "max" && reduction != "min") {
    n.emitError() << "unknown reduction '" << reduction << "'";
    return failure();
  }
  return reduction;
}

/// ScatterElements, and the deprecated Scatter (ScatterElements without a
/// reduction).
static LogicalResult importScatterElements(NodeContext &n) {
  FailureOr<Value> data = requireOperand(n, 0);
  FailureOr<Value> indices = requireOperand(n, 1);
  FailureOr<Value> updates = requireOperand(n, 2);
  if (failed(data) || failed(indices) || failed(updates) ||
      failed(requireIndices(n, *indices)))
    return failure();
  FailureOr<int64_t> axis =
      normalizeAxis(n, n.attrInt("axis", 0), typeOf(*data).getRank());
  FailureOr<std::string> reduction = getReduction(n);
  if (failed(axis) || failed(reduction))
    return failure();
  return setResult(
      n, buildOp<ScatterElementsOp>(n, typeOf(*data), *data, *indices, *updates,
                                    n.builder.getI64IntegerAttr(*axis),
                                    n.builder.getStringAttr(*reduction)));
}

static LogicalResult importScatterND(NodeContext &n) {
  FailureOr<Value> data = requireOperand(n, 0);
  FailureOr<Value> indices = requireOperand(n, 1);
  FailureOr<Value> updates = requireOperand(n, 2);
  if (failed(data) || failed(indices) || failed(updates) ||
      failed(requireIndices(n, *indices)))
    return failure();
  FailureOr<std::string> reduction = getReduction(n);
  if (failed(reduction))
    return failure();
  return setResult(
      n, buildOp<ScatterNDOp>(n, typeOf(*data), *data, *indices, *updates,
                              n.builder.getStringAttr(*reduction)));
}

//===----------------------------------------------------------------------===//
// Expand, Tile, Pad
//===----------------------------------------------------------------------===//

static LogicalResult importExpand(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  FailureOr<SmallVector<int64_t>> shape = requireInts(n, 1, "the shape");
  if (failed(shape))
    return failure();
  auto type = typeOf(*input);
  // ONNX Expand broadcasts both ways: a 1 in `shape` keeps the input dim.
  FailureOr<SmallVector<int64_t>> result =
      broadcastShapes(type.getShape(), *shape);
  if (failed(result) || llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
    return n.emitError() << type << " cannot be expanded to the shape ["
                         << llvm::make_range(shape->begin(), shape->end())
                         << "]";
  auto resultType = RankedTensorType::get(*result, type.getElementType());
  return setResult(n, buildOp<ExpandOp>(n, resultType, *input));
}

static LogicalResult importTile(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  FailureOr<SmallVector<int64_t>> repeats = requireInts(n, 1, "repeats");
  if (failed(repeats))
    return failure();
  int64_t rank = typeOf(*input).getRank();
  if (static_cast<int64_t>(repeats->size()) != rank)
    return n.emitError() << repeats->size() << " repeats for an input of rank "
                         << rank;
  if (llvm::any_of(*repeats, [](int64_t r) { return r < 0; }))
    return n.emitError() << "repeats must be non-negative";
  // Checked before the op is built: its type inference would fail (and the
  // builder abort) on a size that wraps around.
  for (auto [dim, repeat] : llvm::zip(typeOf(*input).getShape(), *repeats))
    if (!ShapedType::isDynamic(dim) && !llvm::checkedMul(dim, repeat))
      return n.emitError() << "tile of a dim of " << dim << " by " << repeat
                           << " overflows 64 bits";
  return setResult(
      n, buildOp<TileOp>(n, *input, n.builder.getDenseI64ArrayAttr(*repeats)));
}

/// Pad-2 takes pads and the fill value as attributes; Pad-11 as inputs (the
/// fill value a runtime scalar); Pad-18 adds optional axes.
static LogicalResult importPad(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  auto type = typeOf(*input);
  int64_t rank = type.getRank();
  std::string mode = n.attrString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" &&
      mode != "wrap")
    return n.emitError() << "unknown mode '" << mode << "'";
  SmallVector<int64_t> given;
  Value value;
  if (n.opset < 11) {
    std::optional<SmallVector<int64_t>> pads = n.attrInts("pads");
    if (!pads)
      return n.emitError() << "missing attribute 'pads'";
    given = *pads;
    float fill = n.attrFloat("value", 0.0f);
    Type element = type.getElementType();
    if (mode == "constant" && fill != 0.0f) {
      Attribute attr = isa<FloatType>(element)
                           ? Attribute(n.builder.getFloatAttr(element, fill))
                           : Attribute(n.builder.getIntegerAttr(
                                 element, static_cast<int64_t>(fill)));
      value = createConstant(n, element, {}, attr);
    }
  } else {
    FailureOr<SmallVector<int64_t>> pads = requireInts(n, 1, "pads");
    if (failed(pads))
      return failure();
    given = *pads;
    if (mode == "constant")
      value = n.operand(2);
  }
  // Pad-18 axes: `given` covers only the listed axes.
  SmallVector<int64_t> axes;
  if (n.opset >= 18 && n.operand(3)) {
    FailureOr<SmallVector<int64_t>> a = requireInts(n, 3, "axes");
    if (failed(a))
      return failure();
    FailureOr<SmallVector<int64_t>> normalized = normalizeAxes(n, *a, rank);
    if (failed(normalized))
      return failure();
    axes = *normalized;
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  int64_t count = axes.size();
  if (static_cast<int64_t>(given.size()) != 2 * count)
    return n.emitError() << given.size() << " pads for " << count
                         << " axes (needs " << 2 * count << ")";
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  for (auto [i, axis] : llvm::enumerate(axes)) {
    low[axis] = given[i];
    high[axis] = given[i + count];
  }
  if (value) {
    auto valueType = typeOf(value);
    if (valueType.getElementType() != type.getElementType() ||
        valueType.getNumElements() != 1)
      return n.emitError() << "constant_value " << valueType
                           << " must be one element of the input's type";
  }
  // Negative pads remove elements: slice them off first.
  Value x = *input;
  if (llvm::any_of(llvm::concat<int64_t>(low, high),
                   [](int64_t p) { return p < 0; })) {
    SmallVector<int64_t> starts(rank, 0), sizes(type.getShape()),
        steps(rank, 1);
    for (int64_t d = 0; d < rank; ++d) {
      int64_t cropLow = std::max<int64_t>(0, -low[d]);
      int64_t cropHigh = std::max<int64_t>(0, -high[d]);
      int64_t size = type.getDimSize(d) - cropLow - cropHigh;
      if (size < 0)
        return n.emitError()
               << "negative pads remove more than dimension " << d << " holds";
      starts[d] = size == 0 ? 0 : cropLow;
      sizes[d] = size;
      low[d] = std::max<int64_t>(0, low[d]);
      high[d] = std::max<int64_t>(0, high[d]);
    }
    FailureOr<Value> cropped = sliceOf(n, x, starts, sizes, steps);
    if (failed(cropped))
      return failure();
    x = *cropped;
  }
  if (llvm::all_of(llvm::concat<int64_t>(low, high),
                   [](int64_t p) { return p == 0; })) {
    n.setResult(0, x);
    return success();
  }
  SmallVector<int64_t> pads(low);
  llvm::append_range(pads, high);
  auto xType = typeOf(x);
  if (mode != "constant")
    for (int64_t d = 0; d < rank; ++d)
      if (xType.getDimSize(d) == 0 && (low[d] || high[d]))
        return n.emitError()
               << "mode '" << mode << "' cannot pad the empty dimension " << d;
  return setResult(n, buildOp<PadOp>(n, x, value,
                                     n.builder.getDenseI64ArrayAttr(pads),
                                     n.builder.getStringAttr(mode)));
}

/// TensorScatter-24 (KV-cache update); write_indices stay runtime values.
static LogicalResult importTensorScatter(NodeContext &n) {
  FailureOr<Value> past = requireOperand(n, 0);
  FailureOr<Value> update = requireOperand(n, 1);
  if (failed(past) || failed(update))
    return failure();
  Value indices = n.getNumOperands() > 2 ? n.operand(2) : Value();
  auto type = typeOf(*past);
  FailureOr<int64_t> axis =
      normalizeAxis(n, n.attrInt("axis", -2), type.getRank());
  if (failed(axis))
    return failure();
  std::string mode = n.attrString("mode", "linear");
  if (mode != "linear" && mode != "circular")
    return n.emitError() << "unknown mode '" << mode
                         << "' (linear or circular)";
  return setResult(
      n, buildOp<TensorScatterOp>(n, type, *past, *update, indices,
                                  n.builder.getI64IntegerAttr(*axis),
                                  n.builder.getBoolAttr(mode == "circular")));
}

/// CenterCropPad-18: crops (centered, the extra element at the end) the axes
/// longer than the requested shape and zero-pads (likewise) the shorter
/// ones: a slice, then a pad.
static LogicalResult importCenterCropPad(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  auto type = typeOf(*input);
  int64_t rank = type.getRank();
  std::optional<SmallVector<int64_t>> shape = n.constantInts(1);
  if (!shape)
    return n.emitError() << "shape (input 1) must be an integer constant: "
                            "Ridgeline compiles for static shapes";
  SmallVector<int64_t> axisList;
  if (auto attrAxes = n.attrInts("axes"))
    axisList = *attrAxes;
  else
    for (int64_t d = 0; d < rank; ++d)
      axisList.push_back(d);
  if (axisList.size() != shape->size())
    return n.emitError() << "shape has " << shape->size() << " entries for "
                         << axisList.size() << " axes";
  FailureOr<SmallVector<int64_t>> axes = normalizeAxes(n, axisList, rank);
  if (failed(axes))
    return failure();
  SmallVector<int64_t> starts(rank, 0), sizes(type.getShape()), steps(rank, 1);
  SmallVector<int64_t> pads(2 * rank, 0);
  bool crops = false, padsAny = false;
  for (auto [axis, target] : llvm::zip(*axes, *shape)) {
    int64_t dim = type.getDimSize(axis);
    if (target < 0)
      return n.emitError() << "shape entry " << target << " is negative";
    if (target < dim) {
      starts[axis] = (dim - target) / 2;
      sizes[axis] = target;
      crops = true;
    } else if (target > dim) {
      pads[axis] = (target - dim) / 2;
      pads[rank + axis] = target - dim - pads[axis];
      padsAny = true;
    }
  }
  Value x = *input;
  if (crops) {
    FailureOr<Value> cropped = sliceOf(n, x, starts, sizes, steps);
    if (failed(cropped))
      return failure();
    x = *cropped;
  }
  if (!padsAny) {
    n.setResult(0, x);
    return success();
  }
  return setResult(n, buildOp<PadOp>(n, x, Value(),
                                     n.builder.getDenseI64ArrayAttr(pads),
                                     n.builder.getStringAttr("constant")));
}

//===----------------------------------------------------------------------===//
// Ops whose results are constants: shapes are static
//===----------------------------------------------------------------------===//

/// Shape-1, and Shape-15 with start/end (clamped like Slice bounds).
static LogicalResult importShape(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  ArrayRef<int64_t> shape = typeOf(*input).getShape();
  int64_t rank = shape.size();
  int64_t start = n.attrInt("start", 0), end = n.attrInt("end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  ArrayRef<int64_t> dims =
      end > start ? shape.slice(start, end - start) : ArrayRef<int64_t>{};
  n.setResult(0, createI64Constant(n, dims));
  return success();
}

static LogicalResult importSize(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  n.setResult(0, createI64Constant(n, {typeOf(*input).getNumElements()},
                                   /*scalar=*/true));
  return success();
}

static LogicalResult importConstantOfShape(NodeContext &n) {
  FailureOr<SmallVector<int64_t>> shape = requireInts(n, 0, "the shape");
  if (failed(shape))
    return failure();
  if (llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
    return n.emitError() << "negative dimension in the shape";
  Attribute fill = n.builder.getF32FloatAttr(0.0f);
  if (const auto *value = n.attr("value")) {
    TensorData data;
    std::string error;
    if (!n.decodeTensor(value->t(), data, error))
      return n.emitError() << error;
    Type element = getElementType(n.builder.getContext(), data.dataType);
    if (!element)
      return n.emitError() << "unsupported value type "
                           << getOnnxDataTypeName(data.dataType);
    if (data.getNumElements() != 1)
      return n.emitError() << "'value' must hold one element";
    auto one = RankedTensorType::get({1}, element);
    DenseElementsAttr attr;
    if (element.isInteger(1)) {
      attr = DenseElementsAttr::get(one, data.bytes[0] != 0);
    } else {
      ArrayRef<char> raw(data.bytes.data(), data.bytes.size());
      bool splat = false;
      if (!DenseElementsAttr::isValidRawBuffer(one, raw, splat))
        return n.emitError() << "malformed 'value' tensor";
      attr = DenseElementsAttr::getFromRawBuffer(one, raw);
    }
    fill = attr.getSplatValue<Attribute>();
  }
  auto type = RankedTensorType::get(*shape, cast<TypedAttr>(fill).getType());
  n.setResult(0, ConstantOp::create(n.builder, n.loc,
                                    DenseElementsAttr::get(type, fill)));
  return success();
}

/// Range's output length depends on its input values, so they must be
/// constants; the result is then a constant too.
static LogicalResult importRange(NodeContext &n) {
  FailureOr<Value> startValue = requireOperand(n, 0);
  if (failed(startValue))
    return failure();
  Type element = typeOf(*startValue).getElementType();
  FailureOr<double> start = requireScalar(n, 0, "start");
  FailureOr<double> limit = requireScalar(n, 1, "limit");
  FailureOr<double> delta = requireScalar(n, 2, "delta");
  if (failed(start) || failed(limit) || failed(delta))
    return failure();
  if (*delta == 0)
    return n.emitError() << "delta is zero";
  double count = std::ceil((*limit - *start) / *delta);
  if (count > kMaxFoldedElements)
    return n.emitError() << "range of " << count << " elements is too large";
  int64_t length = std::max<int64_t>(0, static_cast<int64_t>(count));
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < length; ++i) {
    if (auto floatType = dyn_cast<FloatType>(element)) {
      // Accumulate in the element type, as ONNX's reference does.
      APFloat v(*start + i * *delta);
      bool lost;
      v.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &lost);
      values.push_back(FloatAttr::get(element, v));
    } else {
      values.push_back(
          IntegerAttr::get(element, static_cast<int64_t>(*start) +
                                        i * static_cast<int64_t>(*delta)));
    }
  }
  n.setResult(0, createConstant(n, element, {length}, values));
  return success();
}

static LogicalResult importEyeLike(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  auto type = typeOf(*input);
  if (type.getRank() != 2)
    return n.emitError() << "expects a 2-D input, got " << type;
  Type element = type.getElementType();
  if (n.attr("dtype")) {
    int64_t dtype = n.attrInt("dtype", 0);
    element = getElementType(n.builder.getContext(), dtype);
    if (!element)
      return n.emitError() << "unsupported dtype "
                           << getOnnxDataTypeName(dtype);
  }
  return setResult(
      n, buildOp<EyeOp>(n, type.clone(element),
                        n.builder.getI64IntegerAttr(n.attrInt("k", 0))));
}

//===----------------------------------------------------------------------===//
// Trilu, OneHot, ReverseSequence
//===----------------------------------------------------------------------===//

static LogicalResult importTrilu(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  if (typeOf(*input).getRank() < 2)
    return n.emitError() << "expects rank >= 2, got " << input->getType();
  int64_t k = 0;
  if (n.operand(1)) {
    FailureOr<SmallVector<int64_t>> given = requireInts(n, 1, "k");
    if (failed(given))
      return failure();
    if (given->size() != 1)
      return n.emitError() << "k must hold one value";
    k = given->front();
  }
  return setResult(
      n, buildOp<TriluOp>(n, *input, n.builder.getI64IntegerAttr(k),
                          n.builder.getBoolAttr(n.attrInt("upper", 1) != 0)));
}

static LogicalResult importOneHot(NodeContext &n) {
  FailureOr<Value> indices = requireOperand(n, 0);
  FailureOr<Value> values = requireOperand(n, 2);
  if (failed(indices) || failed(values))
    return failure();
  FailureOr<double> depthValue = requireScalar(n, 1, "depth");
  if (failed(depthValue))
    return failure();
  int64_t depth = static_cast<int64_t>(*depthValue);
  if (depth < 1)
    return n.emitError() << "depth " << *depthValue << " must be positive";
  auto valuesType = typeOf(*values);
  if (valuesType.getRank() != 1 || valuesType.getDimSize(0) != 2)
    return n.emitError() << "values must be a 2-element vector [off, on], got "
                         << valuesType;
  FailureOr<int64_t> axis =
      normalizeAxis(n, n.attrInt("axis", -1), typeOf(*indices).getRank() + 1);
  if (failed(axis))
    return failure();
  return setResult(n, buildOp<OneHotOp>(n, *indices, *values,
                                        n.builder.getI64IntegerAttr(depth),
                                        n.builder.getI64IntegerAttr(*axis)));
}

static LogicalResult importReverseSequence(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  FailureOr<Value> lens = requireOperand(n, 1);
  if (failed(input) || failed(lens) || failed(requireIndices(n, *lens)))
    return failure();
  int64_t rank = typeOf(*input).getRank();
  FailureOr<int64_t> batch =
      normalizeAxis(n, n.attrInt("batch_axis", 1), rank, "batch_axis");
  FailureOr<int64_t> time =
      normalizeAxis(n, n.attrInt("time_axis", 0), rank, "time_axis");
  if (failed(batch) || failed(time))
    return failure();
  return setResult(
      n, buildOp<ReverseSequenceOp>(n, typeOf(*input), *input, *lens,
                                    n.builder.getI64IntegerAttr(*batch),
                                    n.builder.getI64IntegerAttr(*time)));
}

//===----------------------------------------------------------------------===//
// Data-dependent output shapes: only for constant inputs
//===----------------------------------------------------------------------===//

static bool isNonZero(Attribute value) {
  if (auto f = dyn_cast<FloatAttr>(value))
    return !f.getValue().isZero();
  return !cast<IntegerAttr>(value).getValue().isZero();
}

static LogicalResult importNonZero(NodeContext &n) {
  DenseElementsAttr input = n.constantOperand(0);
  if (!input)
    return n.emitError() << "the output shape depends on the values of the "
                            "input, which is not a constant; Ridgeline needs "
                            "static shapes";
  ArrayRef<int64_t> shape = input.getType().getShape();
  SmallVector<SmallVector<int64_t>> coords(shape.size());
  int64_t linear = 0, count = 0;
  for (Attribute value : input.getValues<Attribute>()) {
    if (isNonZero(value)) {
      ++count;
      int64_t rest = linear;
      for (int64_t d = shape.size() - 1; d >= 0; --d) {
        coords[d].push_back(rest % shape[d]);
        rest /= shape[d];
      }
    }
    ++linear;
  }
  SmallVector<int64_t> flat;
  for (const auto &c : coords)
    llvm::append_range(flat, c);
  auto type = RankedTensorType::get({(int64_t)shape.size(), count},
                                    n.builder.getI64Type());
  n.setResult(0, ConstantOp::create(
                     n.builder, n.loc,
                     DenseElementsAttr::get(type, ArrayRef<int64_t>(flat))));
  return success();
}

static LogicalResult importCompress(NodeContext &n) {
  DenseElementsAttr input = n.constantOperand(0);
  DenseElementsAttr condition = n.constantOperand(1);
  if (!input || !condition)
    return n.emitError() << "the output shape depends on the values of the "
                            "condition, and Ridgeline needs static shapes: "
                            "input and condition must be constants";
  SmallVector<bool> keep;
  for (Attribute value : condition.getValues<Attribute>())
    keep.push_back(isNonZero(value));
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<Attribute> values(input.getValues<Attribute>());
  SmallVector<Attribute> result;
  SmallVector<int64_t> resultShape;
  if (!n.attr("axis")) {
    // Without an axis the input is flattened first.
    for (auto [i, v] : llvm::enumerate(values))
      if (i < keep.size() && keep[i])
        result.push_back(v);
    resultShape = {(int64_t)result.size()};
  } else {
    FailureOr<int64_t> axis =
        normalizeAxis(n, n.attrInt("axis", 0), type.getRank());
    if (failed(axis))
      return failure();
    ArrayRef<int64_t> shape = type.getShape();
    SmallVector<int64_t> kept;
    for (int64_t i = 0; i < shape[*axis]; ++i)
      if (i < static_cast<int64_t>(keep.size()) && keep[i])
        kept.push_back(i);
    resultShape.assign(shape.begin(), shape.end());
    resultShape[*axis] = kept.size();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (d < *axis)
        outer *= shape[d];
      else if (d > *axis)
        inner *= shape[d];
    }
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i : kept)
        for (int64_t j = 0; j < inner; ++j)
          result.push_back(values[(o * shape[*axis] + i) * inner + j]);
  }
  n.setResult(0, createConstant(n, type.getElementType(), resultShape, result));
  return success();
}

/// An element as a double, for ordering constant data.
static double toDouble(Attribute value) {
  if (auto f = dyn_cast<FloatAttr>(value))
    return f.getValueAsDouble();
  auto i = cast<IntegerAttr>(value);
  if (i.getType().isUnsignedInteger() || i.getType().isInteger(1))
    return static_cast<double>(i.getValue().getZExtValue());
  return static_cast<double>(i.getValue().getSExtValue());
}

/// Unique over the slices along `axis` (over all elements without one).
static LogicalResult importUnique(NodeContext &n) {
  DenseElementsAttr input = n.constantOperand(0);
  if (!input)
    return n.emitError() << "the output shapes depend on the values of the "
                            "input, which is not a constant; Ridgeline needs "
                            "static shapes";
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<Attribute> values(input.getValues<Attribute>());
  SmallVector<int64_t> shape{static_cast<int64_t>(values.size())};
  int64_t axis = 0;
  if (n.attr("axis")) {
    shape.assign(type.getShape().begin(), type.getShape().end());
    FailureOr<int64_t> a =
        normalizeAxis(n, n.attrInt("axis", 0), type.getRank());
    if (failed(a))
      return failure();
    axis = *a;
  }
  int64_t outer = 1, inner = 1, count = shape[axis];
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < axis)
      outer *= shape[d];
    else if (d > axis)
      inner *= shape[d];
  }
  // Slice k holds the elements (o, k, i) for all outer o and inner i.
  auto element = [&](int64_t k, int64_t e) {
    return values[((e / inner) * count + k) * inner + e % inner];
  };
  int64_t sliceSize = outer * inner;
  auto less = [&](int64_t a, int64_t b) {
    for (int64_t e = 0; e < sliceSize; ++e) {
      double x = toDouble(element(a, e)), y = toDouble(element(b, e));
      if (x != y)
        return x < y;
    }
    return false;
  };
  auto equal = [&](int64_t a, int64_t b) { return !less(a, b) && !less(b, a); };
  // First occurrences in input order, then sorted if asked.
  SmallVector<int64_t> firsts;
  for (int64_t k = 0; k < count; ++k)
    if (llvm::none_of(firsts, [&](int64_t f) { return equal(f, k); }))
      firsts.push_back(k);
  if (n.attrInt("sorted", 1))
    llvm::sort(firsts, less);
  SmallVector<int64_t> inverse, counts(firsts.size(), 0);
  for (int64_t k = 0; k < count; ++k) {
    int64_t u = llvm::find_if(firsts, [&](int64_t f) { return equal(f, k); }) -
                firsts.begin();
    inverse.push_back(u);
    ++counts[u];
  }
  SmallVector<int64_t> resultShape(shape);
  resultShape[axis] = firsts.size();
  SmallVector<Attribute> result;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t f : firsts)
      for (int64_t i = 0; i < inner; ++i)
        result.push_back(element(f, o * inner + i));
  n.setResult(0, createConstant(n, type.getElementType(), resultShape, result));
  n.setResult(1, createI64Constant(n, firsts));
  n.setResult(2, createI64Constant(n, inverse));
  n.setResult(3, createI64Constant(n, counts));
  return success();
}

void mlir::ridge::onnx_import::registerShapeHandlers(OnnxHandlerTable &table) {
  table.add("Reshape", 1, importReshape);
  table.add("Flatten", 1, importFlatten);
  table.add("Squeeze", 1, importSqueeze);
  table.add("Unsqueeze", 1, importUnsqueeze);
  table.add("Transpose", 1, importTranspose);
  table.add("DepthToSpace", 1, importDepthToSpace);
  table.add("SpaceToDepth", 1, importSpaceToDepth);
  table.add("Concat", 4, importConcat);
  table.add("Split", 2, importSplit);
  table.add("Slice", 1, importSlice);
  table.add("Gather", 1, importGather);
  table.add("GatherElements", 11, importGatherElements);
  table.add("GatherND", 11, importGatherND);
  table.add("Scatter", 9, importScatterElements);
  table.add("ScatterElements", 11, importScatterElements);
  table.add("ScatterND", 11, importScatterND);
  table.add("Expand", 8, importExpand);
  table.add("Tile", 6, importTile);
  table.add("Pad", 2, importPad);
  table.add("CenterCropPad", 18, importCenterCropPad);
  table.add("TensorScatter", 24, importTensorScatter);
  table.add("Shape", 1, importShape);
  table.add("Size", 1, importSize);
  table.add("ConstantOfShape", 9, importConstantOfShape);
  table.add("Range", 11, importRange);
  table.add("EyeLike", 9, importEyeLike);
  table.add("Trilu", 14, importTrilu);
  table.add("OneHot", 9, importOneHot);
  table.add("ReverseSequence", 10, importReverseSequence);
  table.add("NonZero", 9, importNonZero);
  table.add("Compress", 9, importCompress);
  table.add("Unique", 11, importUnique);
}
