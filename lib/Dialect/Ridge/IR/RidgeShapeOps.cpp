//===- RidgeShapeOps.cpp - ridge Shape ops ---------------------------===//
//
// Type inference, verifiers, folders and costs of the ops declared in
// RidgeShapeOps.td.
//
//===----------------------------------------------------------------------===//

#include "RidgeOpsCommon.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::detail;

//===----------------------------------------------------------------------===//
// Folding helpers
//===----------------------------------------------------------------------===//

/// Constant folds produce at most this many elements: enough for the shape
/// arithmetic of exported models, small enough to keep the IR readable.
static constexpr int64_t kFoldElementLimit = 4096;

/// Row-major multi-index of `linear` in `shape`.
static SmallVector<int64_t> delinearizeIndex(int64_t linear,
                                             ArrayRef<int64_t> shape) {
  SmallVector<int64_t> index(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = shape[d] == 0 ? 0 : linear % shape[d];
    linear = shape[d] == 0 ? 0 : linear / shape[d];
  }
  return index;
}

/// Row-major linear position of `index` in `shape`.
static int64_t linearizeIndex(ArrayRef<int64_t> index,
                              ArrayRef<int64_t> shape) {
  int64_t linear = 0;
  for (auto [i, d] : llvm::zip_equal(index, shape))
    linear = linear * d + i;
  return linear;
}

/// Whether a fold may produce a constant of `type`.
static bool isFoldable(ShapedType type) {
  int64_t count = getNumElements(type);
  return count >= 0 && count <= kFoldElementLimit;
}

/// A constant of `type` whose element at each multi-index is the element of
/// `source` at the linear position `sourceIndex(index)` returns. Returns null
/// when the result is too large to fold, or when a position lies outside
/// `source` (an empty source, or shapes the verifier has not checked yet).
static DenseElementsAttr
foldByIndexMap(DenseElementsAttr source, RankedTensorType type,
               function_ref<int64_t(ArrayRef<int64_t>)> sourceIndex) {
  if (!isFoldable(type))
    return {};
  int64_t numSource = source.getNumElements();
  if (numSource == 0 && type.getNumElements() != 0)
    return {};
  if (source.isSplat())
    return DenseElementsAttr::get(type, source.getSplatValue<Attribute>());
  auto values = source.value_begin<Attribute>();
  SmallVector<Attribute> result;
  result.reserve(type.getNumElements());
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
    int64_t position = sourceIndex(delinearizeIndex(i, type.getShape()));
    if (position < 0 || position >= numSource)
      return {};
    result.push_back(values[position]);
  }
  return DenseElementsAttr::get(type, result);
}

/// Signed integer values of an index constant.
static SmallVector<int64_t> getIndexValues(DenseElementsAttr indices) {
  SmallVector<int64_t> values;
  for (const APInt &v : indices.getValues<APInt>())
    values.push_back(v.getSExtValue());
  return values;
}

/// ONNX index semantics shared by the gathers and scatters: negative indices
/// count from the end; out-of-range indices are clamped into range.
static int64_t normalizeIndex(int64_t index, int64_t dim) {
  if (index < 0)
    index += dim;
  return std::clamp<int64_t>(index, 0, std::max<int64_t>(dim - 1, 0));
}

static int64_t getRankedBytes(Value value) {
  return getTensorBytes(value.getType());
}

//===----------------------------------------------------------------------===//
// ConcatOp
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return inferenceError(loc, "concat needs at least one input");
  auto first = cast<RankedTensorType>(inputs.front().getType());
  int64_t rank = first.getRank();
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= rank)
    return inferenceError(loc, "concat axis " + Twine(axis) +
                                   " out of range for rank " + Twine(rank));
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (Value input : inputs) {
    auto type = cast<RankedTensorType>(input.getType());
    if (type.getElementType() != first.getElementType())
      return inferenceError(loc, "concat input element types differ: " +
                                     Twine(typeToString(first)) + " vs " +
                                     typeToString(type));
    if (type.getRank() != rank)
      return inferenceError(
          loc, "concat input ranks differ: " + Twine(typeToString(first)) +
                   " vs " + typeToString(type));
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis)
        continue;
      if (type.getDimSize(d) != first.getDimSize(d))
        return inferenceError(loc, "concat inputs differ in dimension " +
                                       Twine(d) + ": " + typeToString(first) +
                                       " vs " + typeToString(type));
    }
    if (ShapedType::isDynamic(type.getDimSize(axis)) ||
        ShapedType::isDynamic(shape[axis]))
      shape[axis] = ShapedType::kDynamic;
    else
      shape[axis] += type.getDimSize(axis);
  }
  results.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1)
    return getInputs().front();
  SmallVector<DenseElementsAttr> inputs;
  for (Attribute attr : adaptor.getInputs()) {
    auto dense = dyn_cast_if_present<DenseElementsAttr>(attr);
    if (!dense)
      return {};
    inputs.push_back(dense);
  }
  RankedTensorType type = getType();
  if (!isFoldable(type))
    return {};
  int64_t axis = getAxis();
  // Which input and which offset within it each position along `axis` reads.
  SmallVector<std::pair<unsigned, int64_t>> source;
  for (auto [k, input] : llvm::enumerate(inputs))
    for (int64_t i = 0, e = input.getType().getDimSize(axis); i < e; ++i)
      source.push_back({static_cast<unsigned>(k), i});
  SmallVector<Attribute> result;
  result.reserve(type.getNumElements());
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
    SmallVector<int64_t> index = delinearizeIndex(i, type.getShape());
    auto [k, offset] = source[index[axis]];
    index[axis] = offset;
    DenseElementsAttr input = inputs[k];
    int64_t linear = linearizeIndex(index, input.getType().getShape());
    result.push_back(input.isSplat() ? input.getSplatValue<Attribute>()
                                     : input.value_begin<Attribute>()[linear]);
  }
  return DenseElementsAttr::get(type, result);
}

//===----------------------------------------------------------------------===//
// SliceOp
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  auto type = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> sizes = adaptor.getSizes();
  if (static_cast<int64_t>(sizes.size()) != type.getRank())
    return inferenceError(loc, "slice has " + Twine(sizes.size()) +
                                   " sizes for an input of rank " +
                                   Twine(type.getRank()));
  results.push_back(RankedTensorType::get(sizes, type.getElementType()));
  return success();
}

LogicalResult SliceOp::verify() {
  auto type = cast<RankedTensorType>(getInput().getType());
  int64_t rank = type.getRank();
  if (static_cast<int64_t>(getStarts().size()) != rank ||
      static_cast<int64_t>(getSteps().size()) != rank)
    return emitOpError("needs one start, size and step per dimension (rank ")
           << rank << ")";
  for (int64_t d = 0; d < rank; ++d) {
    int64_t start = getStarts()[d], size = getSizes()[d], step = getSteps()[d],
            dim = type.getDimSize(d);
    if (step == 0)
      return emitOpError("step of dimension ") << d << " is zero";
    if (size < 0)
      return emitOpError("size of dimension ") << d << " is negative";
    if (size == 0 || ShapedType::isDynamic(dim))
      continue;
    int64_t last = start + (size - 1) * step;
    if (start < 0 || start >= dim || last < 0 || last >= dim)
      return emitOpError("dimension ")
             << d << " reads indices " << start << ".." << last
             << " outside [0, " << dim << ")";
  }
  return success();
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  auto inType = cast<RankedTensorType>(getInput().getType());
  bool identity = inType == getType();
  for (auto [start, step] : llvm::zip_equal(getStarts(), getSteps()))
    identity &= start == 0 && step == 1;
  if (identity)
    return getInput();
  auto input = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  if (!input)
    return {};
  ArrayRef<int64_t> starts = getStarts(), steps = getSteps();
  return foldByIndexMap(input, getType(), [&](ArrayRef<int64_t> index) {
    SmallVector<int64_t> source;
    for (auto [d, i] : llvm::enumerate(index))
      source.push_back(starts[d] + i * steps[d]);
    return linearizeIndex(source, inType.getShape());
  });
}

// FLOPs: 0. Bytes: 2 * |out|: only the window is read, then written.
int64_t SliceOp::getMinBytes() {
  int64_t bytes = getTensorBytes(getType());
  return bytes < 0 ? -1 : 2 * bytes;
}

//===----------------------------------------------------------------------===//
// Gathers
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  auto data = cast<RankedTensorType>(adaptor.getData().getType());
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= data.getRank())
    return inferenceError(loc, "gather axis " + Twine(axis) +
                                   " out of range for rank " +
                                   Twine(data.getRank()));
  // Every index is out of range on an empty axis.
  if (data.getDimSize(axis) == 0 && indices.hasStaticShape() &&
      indices.getNumElements() != 0)
    return inferenceError(loc, "gather axis " + Twine(axis) +
                                   " has size 0: no index is in range");
  SmallVector<int64_t> shape(data.getShape().take_front(axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, data.getShape().drop_front(axis + 1));
  results.push_back(RankedTensorType::get(shape, data.getElementType()));
  return success();
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  auto data = dyn_cast_if_present<DenseElementsAttr>(adaptor.getData());
  auto indices = dyn_cast_if_present<DenseElementsAttr>(adaptor.getIndices());
  if (!data || !indices || !isFoldable(getType()))
    return {};
  SmallVector<int64_t> positions = getIndexValues(indices);
  ArrayRef<int64_t> dataShape = data.getType().getShape();
  ArrayRef<int64_t> indexShape = indices.getType().getShape();
  int64_t axis = getAxis(), q = indexShape.size();
  return foldByIndexMap(data, getType(), [&](ArrayRef<int64_t> index) {
    SmallVector<int64_t> source(index.take_front(axis));
    int64_t position =
        positions[linearizeIndex(index.slice(axis, q), indexShape)];
    source.push_back(normalizeIndex(position, dataShape[axis]));
    llvm::append_range(source, index.drop_front(axis + q));
    return linearizeIndex(source, dataShape);
  });
}

// FLOPs: 0. Bytes: 2 * |out| + |indices|: only the gathered entries of
// `data` are read (an embedding lookup does not read the whole table).
int64_t GatherOp::getMinBytes() {
  int64_t result = getTensorBytes(getType());
  int64_t indices = getRankedBytes(getIndices());
  return result < 0 || indices < 0 ? -1 : 2 * result + indices;
}

LogicalResult
GatherElementsOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                   Adaptor adaptor,
                                   SmallVectorImpl<Type> &results) {
  auto data = cast<RankedTensorType>(adaptor.getData().getType());
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  int64_t axis = adaptor.getAxis();
  if (data.getRank() != indices.getRank())
    return inferenceError(loc, "gather_elements data and indices ranks "
                               "differ: " +
                                   Twine(typeToString(data)) + " vs " +
                                   typeToString(indices));
  if (axis < 0 || axis >= data.getRank())
    return inferenceError(loc, "gather_elements axis " + Twine(axis) +
                                   " out of range for rank " +
                                   Twine(data.getRank()));
  results.push_back(
      RankedTensorType::get(indices.getShape(), data.getElementType()));
  return success();
}

// FLOPs: 0. Bytes: 2 * |out| + |indices| (|out| = |indices|), as Gather.
int64_t GatherElementsOp::getMinBytes() {
  int64_t result = getTensorBytes(getType());
  int64_t indices = getRankedBytes(getIndices());
  return result < 0 || indices < 0 ? -1 : 2 * result + indices;
}

LogicalResult GatherNDOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &results) {
  auto data = cast<RankedTensorType>(adaptor.getData().getType());
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  int64_t batch = adaptor.getBatchDims();
  int64_t r = data.getRank(), q = indices.getRank();
  if (r < 1 || q < 1)
    return inferenceError(loc, "gather_nd data and indices need rank >= 1");
  int64_t k = indices.getShape().back();
  if (ShapedType::isDynamic(k))
    return inferenceError(loc, "gather_nd index tuple length is dynamic");
  if (batch < 0 || batch >= std::min(r, q))
    return inferenceError(loc, "gather_nd batch_dims " + Twine(batch) +
                                   " out of range");
  if (batch + k > r)
    return inferenceError(loc, "gather_nd index tuples of length " + Twine(k) +
                                   " exceed data rank " + Twine(r) + " after " +
                                   Twine(batch) + " batch dims");
  for (int64_t d = 0; d < batch; ++d)
    if (data.getDimSize(d) != indices.getDimSize(d))
      return inferenceError(loc, "gather_nd batch dimension " + Twine(d) +
                                     " differs between data and indices");
  SmallVector<int64_t> shape(indices.getShape().drop_back());
  llvm::append_range(shape, data.getShape().drop_front(batch + k));
  results.push_back(RankedTensorType::get(shape, data.getElementType()));
  return success();
}

// FLOPs: 0. Bytes: 2 * |out| + |indices|, as Gather.
int64_t GatherNDOp::getMinBytes() {
  int64_t result = getTensorBytes(getType());
  int64_t indices = getRankedBytes(getIndices());
  return result < 0 || indices < 0 ? -1 : 2 * result + indices;
}

//===----------------------------------------------------------------------===//
// Scatters
//===----------------------------------------------------------------------===//

static bool isValidReduction(StringRef reduction) {
  return llvm::is_contained(
      ArrayRef<StringRef>{"none", "add", "mul", "max", "min"}, reduction);
}

LogicalResult ScatterElementsOp::verify() {
  auto data = cast<RankedTensorType>(getData().getType());
  auto indices = cast<RankedTensorType>(getIndices().getType());
  auto updates = cast<RankedTensorType>(getUpdates().getType());
  if (!isValidReduction(getReduction()))
    return emitOpError("unknown reduction '") << getReduction() << "'";
  if (updates.getElementType() != data.getElementType())
    return emitOpError("updates element type differs from data: ")
           << updates.getElementType() << " vs " << data.getElementType();
  if (indices.getShape() != updates.getShape())
    return emitOpError("indices and updates shapes differ: ")
           << indices << " vs " << updates;
  if (indices.getRank() != data.getRank())
    return emitOpError("indices rank ")
           << indices.getRank() << " differs from data rank " << data.getRank();
  int64_t axis = getAxis();
  if (axis < 0 || axis >= data.getRank())
    return emitOpError("axis ")
           << axis << " out of range for rank " << data.getRank();
  for (int64_t d = 0; d < data.getRank(); ++d)
    if (d != axis && indices.getDimSize(d) > data.getDimSize(d))
      return emitOpError("indices dimension ")
             << d << " (" << indices.getDimSize(d) << ") exceeds data ("
             << data.getDimSize(d) << ")";
  return success();
}

// FLOPs: 0 for "none" (data movement), else |updates| (one add, mul, max or
// min per update). Bytes: default (data + indices + updates + out: the
// result is a copy of `data`).
int64_t ScatterElementsOp::getFlops() {
  if (getReduction() == "none")
    return 0;
  return getNumElements(getUpdates().getType());
}

LogicalResult ScatterNDOp::verify() {
  auto data = cast<RankedTensorType>(getData().getType());
  auto indices = cast<RankedTensorType>(getIndices().getType());
  auto updates = cast<RankedTensorType>(getUpdates().getType());
  if (!isValidReduction(getReduction()))
    return emitOpError("unknown reduction '") << getReduction() << "'";
  if (updates.getElementType() != data.getElementType())
    return emitOpError("updates element type differs from data: ")
           << updates.getElementType() << " vs " << data.getElementType();
  if (indices.getRank() < 1)
    return emitOpError("indices need rank >= 1");
  int64_t k = indices.getShape().back();
  if (ShapedType::isDynamic(k) || k > data.getRank())
    return emitOpError("index tuples of length ")
           << k << " do not fit data of rank " << data.getRank();
  SmallVector<int64_t> expected(indices.getShape().drop_back());
  llvm::append_range(expected, data.getShape().drop_front(k));
  if (updates.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("updates shape ")
           << updates << " should be indices.shape[:-1] ++ data.shape[k:]";
  return success();
}

// FLOPs: 0 for "none", else |updates| (one combine per updated element).
// Bytes: default (data + indices + updates + out).
int64_t ScatterNDOp::getFlops() {
  if (getReduction() == "none")
    return 0;
  return getNumElements(getUpdates().getType());
}

//===----------------------------------------------------------------------===//
// TensorScatterOp
//===----------------------------------------------------------------------===//

LogicalResult TensorScatterOp::verify() {
  auto past = cast<RankedTensorType>(getPast().getType());
  auto update = cast<RankedTensorType>(getUpdate().getType());
  int64_t rank = past.getRank(), axis = getAxis();
  if (rank < 2 || axis < 1 || axis >= rank)
    return emitOpError("axis ")
           << axis << " must be a non-batch dim of the rank-" << rank
           << " cache";
  if (update.getElementType() != past.getElementType() ||
      update.getRank() != rank)
    return emitOpError("update must have the cache's rank and element type");
  for (int64_t d = 0; d < rank; ++d)
    if (d == axis ? update.getDimSize(d) > past.getDimSize(d)
                  : update.getDimSize(d) != past.getDimSize(d))
      return emitOpError("update ")
             << update << " does not fit the cache " << past << " at dim " << d;
  if (Value indices = getWriteIndices()) {
    auto type = cast<RankedTensorType>(indices.getType());
    if (type.getRank() != 1 || type.getDimSize(0) != past.getDimSize(0))
      return emitOpError("write_indices must have shape [")
             << past.getDimSize(0) << "], got " << type;
  }
  return success();
}

// FLOPs: 0 (data movement). Bytes: default (past + update + write_indices +
// out): with value semantics the result is a full copy of `past`.
int64_t TensorScatterOp::getFlops() { return 0; }

//===----------------------------------------------------------------------===//
// ExpandOp
//===----------------------------------------------------------------------===//

LogicalResult ExpandOp::verify() {
  auto inType = cast<RankedTensorType>(getInput().getType());
  if (inType.getElementType() != getType().getElementType())
    return emitOpError("element type changes: ")
           << inType.getElementType() << " -> " << getType().getElementType();
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(inType.getShape(), getType().getShape());
  if (failed(shape) || ArrayRef<int64_t>(*shape) != getType().getShape())
    return emitOpError("input ")
           << inType << " does not broadcast to " << getType();
  return success();
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  auto input = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  if (!input)
    return {};
  ArrayRef<int64_t> inShape = input.getType().getShape();
  int64_t offset = getType().getRank() - inShape.size();
  return foldByIndexMap(input, getType(), [&](ArrayRef<int64_t> index) {
    SmallVector<int64_t> source;
    for (auto [d, size] : llvm::enumerate(inShape))
      source.push_back(size == 1 ? 0 : index[d + offset]);
    return linearizeIndex(source, inShape);
  });
}

//===----------------------------------------------------------------------===//
// TileOp
//===----------------------------------------------------------------------===//

LogicalResult TileOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &results) {
  auto type = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> repeats = adaptor.getRepeats();
  if (static_cast<int64_t>(repeats.size()) != type.getRank())
    return inferenceError(loc, "tile has " + Twine(repeats.size()) +
                                   " repeats for an input of rank " +
                                   Twine(type.getRank()));
  SmallVector<int64_t> shape;
  for (auto [dim, repeat] : llvm::zip_equal(type.getShape(), repeats)) {
    if (repeat < 0)
      return inferenceError(loc,
                            "tile repeat " + Twine(repeat) + " is negative");
    if (ShapedType::isDynamic(dim)) {
      shape.push_back(dim);
      continue;
    }
    std::optional<int64_t> size = llvm::checkedMul(dim, repeat);
    if (!size)
      return inferenceError(loc, "tile of a dim of " + Twine(dim) + " by " +
                                     Twine(repeat) + " overflows 64 bits");
    shape.push_back(*size);
  }
  results.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

OpFoldResult TileOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  auto input = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  if (!input)
    return {};
  ArrayRef<int64_t> inShape = input.getType().getShape();
  return foldByIndexMap(input, getType(), [&](ArrayRef<int64_t> index) {
    SmallVector<int64_t> source;
    for (auto [d, size] : llvm::enumerate(inShape))
      source.push_back(index[d] % size);
    return linearizeIndex(source, inShape);
  });
}

//===----------------------------------------------------------------------===//
// PadOp
//===----------------------------------------------------------------------===//

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &results) {
  auto type = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> pads = adaptor.getPads();
  int64_t rank = type.getRank();
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    return inferenceError(loc, "pad has " + Twine(pads.size()) +
                                   " pads for an input of rank " + Twine(rank) +
                                   " (needs " + Twine(2 * rank) + ")");
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (pads[d] < 0 || pads[d + rank] < 0)
      return inferenceError(loc, "pad amounts must be non-negative");
    int64_t dim = type.getDimSize(d);
    shape.push_back(
        ShapedType::isDynamic(dim) ? dim : dim + pads[d] + pads[d + rank]);
  }
  results.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

LogicalResult PadOp::verify() {
  StringRef mode = getMode();
  if (mode != "constant" && mode != "edge" && mode != "reflect" &&
      mode != "wrap")
    return emitOpError("unknown mode '") << mode << "'";
  auto type = cast<RankedTensorType>(getInput().getType());
  if (Value value = getValue()) {
    if (mode != "constant")
      return emitOpError("a padding value needs mode 'constant'");
    auto valueType = cast<RankedTensorType>(value.getType());
    if (valueType.getElementType() != type.getElementType())
      return emitOpError("padding value element type ")
             << valueType.getElementType() << " differs from the input's "
             << type.getElementType();
    if (getNumElements(valueType) != 1)
      return emitOpError("padding value must hold one element, got ")
             << valueType;
  }
  if (mode != "constant") {
    int64_t rank = type.getRank();
    for (int64_t d = 0; d < rank; ++d)
      if (type.getDimSize(d) == 0 && (getPads()[d] || getPads()[d + rank]))
        return emitOpError("mode '")
               << mode << "' cannot pad the empty dimension " << d;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// TriluOp, OneHotOp, EyeOp, ReverseSequenceOp
//===----------------------------------------------------------------------===//

LogicalResult TriluOp::verify() {
  if (getType().getRank() < 2)
    return emitOpError("needs rank >= 2, got ") << getType();
  return success();
}

// FLOPs: |out|, one select per element (the position test is index
// arithmetic). Bytes: default (|in| + |out|).
int64_t TriluOp::getFlops() { return getNumElements(getType()); }

LogicalResult OneHotOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  auto values = cast<RankedTensorType>(adaptor.getValues().getType());
  if (values.getRank() != 1 || values.getDimSize(0) != 2)
    return inferenceError(loc, "one_hot values must be a 2-element vector "
                               "[off, on], got " +
                                   Twine(typeToString(values)));
  int64_t axis = adaptor.getAxis(), depth = adaptor.getDepth();
  if (axis < 0 || axis > indices.getRank())
    return inferenceError(loc, "one_hot axis " + Twine(axis) +
                                   " out of range for result rank " +
                                   Twine(indices.getRank() + 1));
  if (depth < 1)
    return inferenceError(loc, "one_hot depth " + Twine(depth) +
                                   " must be positive");
  SmallVector<int64_t> shape(indices.getShape());
  shape.insert(shape.begin() + axis, depth);
  results.push_back(RankedTensorType::get(shape, values.getElementType()));
  return success();
}

// FLOPs: |out|, one select per element (the index comparison is index
// arithmetic). Bytes: default (indices + values + out).
int64_t OneHotOp::getFlops() { return getNumElements(getType()); }

LogicalResult EyeOp::verify() {
  if (getType().getRank() != 2)
    return emitOpError("result must have rank 2, got ") << getType();
  return success();
}

OpFoldResult EyeOp::fold(FoldAdaptor) {
  RankedTensorType type = getType();
  if (!isFoldable(type))
    return {};
  Type element = type.getElementType();
  Builder b(getContext());
  Attribute zero = b.getZeroAttr(element);
  Attribute one = isa<FloatType>(element)
                      ? Attribute(b.getFloatAttr(element, 1.0))
                      : Attribute(b.getIntegerAttr(element, 1));
  int64_t cols = type.getDimSize(1);
  SmallVector<Attribute> values;
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i)
    values.push_back(
        i % cols - i / cols == static_cast<int64_t>(getK()) ? one : zero);
  return DenseElementsAttr::get(type, values);
}

LogicalResult ReverseSequenceOp::verify() {
  auto type = cast<RankedTensorType>(getInput().getType());
  auto lens = cast<RankedTensorType>(getSequenceLens().getType());
  int64_t rank = type.getRank();
  int64_t batch = getBatchAxis(), time = getTimeAxis();
  if (rank < 2)
    return emitOpError("needs rank >= 2, got ") << type;
  if (batch < 0 || batch >= rank || time < 0 || time >= rank || batch == time)
    return emitOpError("batch_axis ")
           << batch << " and time_axis " << time
           << " must be different dimensions of rank " << rank;
  if (lens.getRank() != 1 || lens.getDimSize(0) != type.getDimSize(batch))
    return emitOpError("sequence_lens ")
           << lens << " must be a vector of the batch size "
           << type.getDimSize(batch);
  return success();
}
