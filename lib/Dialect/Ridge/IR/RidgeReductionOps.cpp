//===- RidgeReductionOps.cpp - ridge Reduction ops ------------------------===//
//
// Type inference, verifiers, folders and costs of the ops declared in
// RidgeReductionOps.td.
//
//===----------------------------------------------------------------------===//

#include "RidgeOpsCommon.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <map>

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::detail;

#include "ridgeline/Dialect/Ridge/IR/RidgeEnums.cpp.inc"

/// Failure unless `axis` indexes a dimension of a rank-`rank` tensor.
static LogicalResult checkAxis(std::optional<Location> loc, int64_t axis,
                               int64_t rank) {
  if (axis < 0 || axis >= rank)
    return inferenceError(loc, "axis " + Twine(axis) +
                                   " out of range for rank " + Twine(rank));
  return success();
}

/// Verifier check that `axis` indexes a dimension of a rank-`rank` tensor.
static LogicalResult verifyAxis(Operation *op, int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    return op->emitOpError("axis ")
           << axis << " out of range for rank " << rank;
  return success();
}

bool mlir::ridge::detail::reducesTrailingAxes(ArrayRef<int64_t> axes,
                                              int64_t rank) {
  for (auto [i, axis] : llvm::enumerate(axes))
    if (axis !=
        rank - static_cast<int64_t>(axes.size()) + static_cast<int64_t>(i))
      return false;
  return !axes.empty();
}

FailureOr<int64_t> mlir::ridge::detail::getRowsOfTrailingDims(Value input,
                                                              int64_t axis) {
  auto type = cast<RankedTensorType>(input.getType());
  if (!type.hasStaticShape())
    return failure();
  int64_t rowLength = 1;
  for (int64_t d = axis; d < type.getRank(); ++d)
    rowLength *= type.getDimSize(d);
  if (rowLength <= 0)
    return failure();
  return type.getNumElements() / rowLength;
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  auto type = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  int64_t rank = type.getRank();
  SmallVector<bool> reduced(rank, false);
  for (int64_t axis : axes) {
    if (failed(checkAxis(loc, axis, rank)))
      return failure();
    reduced[axis] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i])
      shape.push_back(type.getDimSize(i));
    else if (adaptor.getKeepdims())
      shape.push_back(1);
  }
  results.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

LogicalResult ReduceOp::verify() {
  int64_t rank = getInput().getType().getRank();
  ArrayRef<int64_t> axes = getAxes();
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= rank)
      return emitOpError("axis ")
             << axes[i] << " out of range for rank " << rank;
    if (i > 0 && axes[i] <= axes[i - 1])
      return emitOpError("axes must be sorted and unique");
  }
  return success();
}

// Reducing no axes (ONNX noop_with_empty_axes) is the identity for every kind.
// A splat constant (an exporter's element count, a sum of ones) folds where
// the result is exact: the maximum or minimum of any type, and the sum of
// integers, wrapping around as the element type does. A float sum is left to
// run: folded, it would not round as the sequential sum does.
OpFoldResult ReduceOp::fold(FoldAdaptor adaptor) {
  if (getAxes().empty() && getInput().getType() == getType())
    return getInput();
  auto splat = dyn_cast_if_present<SplatElementsAttr>(adaptor.getInput());
  auto resultType = dyn_cast<RankedTensorType>(getType());
  int64_t in = getNumElements(getInput().getType());
  int64_t out = getNumElements(getType());
  if (!splat || !resultType || in <= 0 || out <= 0)
    return {};
  Type element = resultType.getElementType();
  switch (getKind()) {
  case ReduceKind::Max:
  case ReduceKind::Min:
    return DenseElementsAttr::get(resultType, splat.getSplatValue<Attribute>());
  case ReduceKind::Sum:
    if (auto integer = dyn_cast<IntegerType>(element)) {
      APInt value = splat.getSplatValue<APInt>();
      APInt count(value.getBitWidth(), static_cast<uint64_t>(in / out),
                  /*isSigned=*/false, /*implicitTrunc=*/true);
      return DenseElementsAttr::get(
          resultType, Attribute(IntegerAttr::get(integer, value * count)));
    }
    return {};
  default:
    return {};
  }
}

// FLOPs: |in| - |out|, i.e. N - 1 per output for N reduced elements (0 for
// an empty reduction), plus |out| divides for mean. Bytes: default.
int64_t ReduceOp::getFlops() {
  int64_t in = getNumElements(getInput().getType());
  int64_t out = getNumElements(getType());
  if (in < 0 || out < 0)
    return -1;
  int64_t combines = std::max<int64_t>(in - out, 0);
  return getKind() == ReduceKind::Mean ? combines + out : combines;
}

// Fusion: a row reduction when the reduced axes are the trailing ones; its
// rows are the result's elements.
FusionRole ReduceOp::getFusionRole() {
  return reducesTrailingAxes(getAxes(), getInput().getType().getRank())
             ? FusionRole::Reduction
             : FusionRole::Opaque;
}

FailureOr<int64_t> ReduceOp::getReductionRows() {
  int64_t rows = getNumElements(getType());
  if (rows < 0)
    return failure();
  return rows;
}

//===----------------------------------------------------------------------===//
// ArgReduceOp
//===----------------------------------------------------------------------===//

LogicalResult ArgReduceOp::inferReturnTypes(MLIRContext *ctx,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto type = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(loc, axis, type.getRank())))
    return failure();
  SmallVector<int64_t> shape(type.getShape());
  if (adaptor.getKeepdims())
    shape[axis] = 1;
  else
    shape.erase(shape.begin() + axis);
  results.push_back(RankedTensorType::get(shape, IntegerType::get(ctx, 64)));
  return success();
}

LogicalResult ArgReduceOp::verify() {
  int64_t rank = getInput().getType().getRank();
  if (failed(verifyAxis(*this, getAxis(), rank)))
    return failure();
  return success();
}

// FLOPs: |in| - |out|, N - 1 compares per output for N elements along
// `axis`. Bytes: default (|in| + the i64 result).
int64_t ArgReduceOp::getFlops() {
  int64_t in = getNumElements(getInput().getType());
  int64_t out = getNumElements(getType());
  if (in < 0 || out < 0)
    return -1;
  return std::max<int64_t>(in - out, 0);
}

//===----------------------------------------------------------------------===//
// CumSumOp
//===----------------------------------------------------------------------===//

LogicalResult CumSumOp::verify() {
  int64_t rank = getType().getRank();
  if (failed(verifyAxis(*this, getAxis(), rank)))
    return failure();
  return success();
}

// FLOPs: |x|, one add per element (a scan of N needs N - 1; the difference
// is one per scanned line). Bytes: default.
int64_t CumSumOp::getFlops() { return getNumElements(getType()); }

LogicalResult CumProdOp::verify() {
  return verifyAxis(*this, getAxis(), getType().getRank());
}

// FLOPs: |x|, one multiply per element, as CumSum. Bytes: default.
int64_t CumProdOp::getFlops() { return getNumElements(getType()); }

//===----------------------------------------------------------------------===//
// TopKOp
//===----------------------------------------------------------------------===//

LogicalResult TopKOp::inferReturnTypes(MLIRContext *ctx,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &results) {
  auto type = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(loc, axis, type.getRank())))
    return failure();
  int64_t k = adaptor.getK();
  int64_t dim = type.getDimSize(axis);
  if (k < 0 || (!ShapedType::isDynamic(dim) && k > dim))
    return inferenceError(loc, "k = " + Twine(k) + " out of range for a " +
                                   "dimension of size " + Twine(dim));
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] = k;
  results.push_back(RankedTensorType::get(shape, type.getElementType()));
  results.push_back(RankedTensorType::get(shape, IntegerType::get(ctx, 64)));
  return success();
}

LogicalResult TopKOp::verify() {
  auto type = getInput().getType();
  int64_t rank = type.getRank();
  if (failed(verifyAxis(*this, getAxis(), rank)))
    return failure();
  int64_t dim = type.getDimSize(getAxis());
  int64_t k = getK();
  if (k < 0 || (!ShapedType::isDynamic(dim) && k > dim))
    return emitOpError("k = ")
           << getK() << " out of range for a dimension of size " << dim;
  return success();
}

// FLOPs: |in| * k, k selection passes of one compare per element (an upper
// bound of a sort-free top-k). Bytes: default (|in| + values + indices).
int64_t TopKOp::getFlops() {
  int64_t elements = getNumElements(getInput().getType());
  if (elements < 0)
    return -1;
  return elements * static_cast<int64_t>(getK());
}

//===----------------------------------------------------------------------===//
// EinsumOp
//===----------------------------------------------------------------------===//

namespace {
/// A parsed einsum equation: for each operand the loop dim of each of its
/// dimensions, and the loop dims of the output.
struct EinsumSpec {
  SmallVector<SmallVector<int>> inputLabels;
  SmallVector<int64_t> outputDims;
  int64_t numLoops = 0;
  int64_t numOutputLoops = 0;
};
} // namespace

static FailureOr<EinsumSpec> parseEinsumEquation(StringRef equation,
                                                 ArrayRef<int64_t> operandRanks,
                                                 std::string &error) {
  EinsumSpec spec;
  std::string text;
  for (char c : equation)
    if (c != ' ')
      text.push_back(c);
  StringRef eq(text);
  StringRef lhs = eq, rhs;
  bool explicitOutput = false;
  size_t arrow = eq.find("->");
  if (arrow != StringRef::npos) {
    lhs = eq.take_front(arrow);
    rhs = eq.drop_front(arrow + 2);
    explicitOutput = true;
  }
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  if (terms.size() != operandRanks.size()) {
    error = "equation has " + std::to_string(terms.size()) +
            " input terms for " + std::to_string(operandRanks.size()) +
            " operands";
    return failure();
  }

  // Labels are letters; ellipsis dims get labels above 'z' (one per dim,
  // right-aligned, shared by all terms).
  int64_t ellipsisRank = -1;
  std::map<int, int64_t> labelToDim;
  auto parseTerm = [&](StringRef term, int64_t rank,
                       SmallVectorImpl<int> &labels) -> LogicalResult {
    size_t dots = term.find("...");
    int64_t letters = 0;
    for (char c : term)
      if (c != '.') {
        if (!llvm::isAlpha(c)) {
          error = std::string("invalid label '") + c + "' in equation";
          return failure();
        }
        ++letters;
      }
    int64_t dotCount = llvm::count(term, '.');
    if ((dots == StringRef::npos && dotCount != 0) ||
        (dots != StringRef::npos && dotCount != 3)) {
      error = "malformed ellipsis in equation term '" + term.str() + "'";
      return failure();
    }
    int64_t local = 0;
    if (dots != StringRef::npos) {
      if (rank < 0) { // Output term: uses the operands' ellipsis rank.
        local = std::max<int64_t>(ellipsisRank, 0);
      } else {
        local = rank - letters;
        if (local < 0) {
          error = "equation term '" + term.str() + "' has more labels than " +
                  "the operand's rank " + std::to_string(rank);
          return failure();
        }
        ellipsisRank = std::max(ellipsisRank, local);
      }
    } else if (rank >= 0 && letters != rank) {
      error = "equation term '" + term.str() + "' has " +
              std::to_string(letters) + " labels for an operand of rank " +
              std::to_string(rank);
      return failure();
    }
    for (size_t i = 0; i < term.size(); ++i) {
      if (term[i] == '.') {
        // Right-aligned ellipsis labels: 256 + (position from the right).
        for (int64_t e = local; e > 0; --e)
          labels.push_back(256 + e - 1);
        i += 2;
        continue;
      }
      labels.push_back(static_cast<unsigned char>(term[i]));
    }
    return success();
  };

  for (auto [term, rank] : llvm::zip(terms, operandRanks)) {
    SmallVector<int> labels;
    if (failed(parseTerm(term, rank, labels)))
      return failure();
    spec.inputLabels.push_back(labels);
  }
  SmallVector<int> outLabels;
  if (explicitOutput) {
    if (failed(parseTerm(rhs, -1, outLabels)))
      return failure();
    for (size_t i = 0; i < outLabels.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (outLabels[i] == outLabels[j]) {
          error = "output label repeated in equation";
          return failure();
        }
  } else {
    // Implicit output: ellipsis dims, then labels seen exactly once, sorted.
    for (int64_t e = std::max<int64_t>(ellipsisRank, 0); e > 0; --e)
      outLabels.push_back(256 + e - 1);
    std::map<int, int> counts;
    for (auto &labels : spec.inputLabels)
      for (int l : labels)
        if (l < 256)
          ++counts[l];
    for (auto [l, c] : counts)
      if (c == 1)
        outLabels.push_back(l);
  }

  // Loop dims: output labels first, then the summed ones.
  for (int l : outLabels)
    labelToDim.emplace(l, labelToDim.size());
  for (auto &labels : spec.inputLabels)
    for (int l : labels)
      labelToDim.emplace(l, labelToDim.size());
  for (int l : outLabels)
    if (!llvm::any_of(spec.inputLabels, [&](const SmallVector<int> &labels) {
          return llvm::is_contained(labels, l);
        })) {
      error = "output label does not appear in any input term";
      return failure();
    }
  spec.numLoops = labelToDim.size();
  spec.numOutputLoops = outLabels.size();
  for (auto &labels : spec.inputLabels)
    for (int &l : labels)
      l = labelToDim[l];
  for (int l : outLabels)
    spec.outputDims.push_back(labelToDim[l]);
  return spec;
}

/// Loop bounds of `spec` for operands of `types`; failure when a label's
/// sizes disagree (size-1 ellipsis dims broadcast).
static FailureOr<SmallVector<int64_t>>
getEinsumLoopSizes(const EinsumSpec &spec, TypeRange types,
                   std::string &error) {
  SmallVector<int64_t> sizes(spec.numLoops, 1);
  SmallVector<bool> seen(spec.numLoops, false);
  for (auto [labels, type] : llvm::zip(spec.inputLabels, types)) {
    auto shaped = cast<RankedTensorType>(type);
    for (auto [i, d] : llvm::enumerate(labels)) {
      int64_t size = shaped.getDimSize(i);
      if (!seen[d] || sizes[d] == 1) {
        sizes[d] = size;
        seen[d] = true;
      } else if (size != sizes[d] && size != 1) {
        error = "equation label sizes disagree: " + std::to_string(size) +
                " vs " + std::to_string(sizes[d]);
        return failure();
      }
    }
  }
  return sizes;
}

LogicalResult EinsumOp::getLoopStructure(SmallVectorImpl<AffineMap> &maps,
                                         SmallVectorImpl<int64_t> &loopSizes,
                                         int64_t &numOutputLoops) {
  SmallVector<int64_t> ranks;
  for (Value v : getInputs())
    ranks.push_back(cast<RankedTensorType>(v.getType()).getRank());
  std::string error;
  FailureOr<EinsumSpec> spec = parseEinsumEquation(getEquation(), ranks, error);
  if (failed(spec))
    return failure();
  FailureOr<SmallVector<int64_t>> sizes =
      getEinsumLoopSizes(*spec, getInputs().getTypes(), error);
  if (failed(sizes))
    return failure();
  MLIRContext *ctx = getContext();
  for (auto [labels, v] : llvm::zip(spec->inputLabels, getInputs())) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<AffineExpr> exprs;
    for (auto [i, d] : llvm::enumerate(labels))
      exprs.push_back(type.getDimSize(i) == 1 && (*sizes)[d] != 1
                          ? getAffineConstantExpr(0, ctx)
                          : getAffineDimExpr(d, ctx));
    maps.push_back(AffineMap::get(spec->numLoops, 0, exprs, ctx));
  }
  SmallVector<AffineExpr> outExprs;
  for (int64_t d : spec->outputDims)
    outExprs.push_back(getAffineDimExpr(d, ctx));
  maps.push_back(AffineMap::get(spec->numLoops, 0, outExprs, ctx));
  loopSizes.assign(sizes->begin(), sizes->end());
  numOutputLoops = spec->numOutputLoops;
  return success();
}

LogicalResult EinsumOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  if (adaptor.getInputs().empty())
    return inferenceError(loc, "einsum needs at least one operand");
  SmallVector<int64_t> ranks;
  for (Value v : adaptor.getInputs())
    ranks.push_back(cast<RankedTensorType>(v.getType()).getRank());
  std::string error;
  FailureOr<EinsumSpec> spec =
      parseEinsumEquation(adaptor.getEquation(), ranks, error);
  if (failed(spec))
    return inferenceError(loc, error);
  FailureOr<SmallVector<int64_t>> sizes =
      getEinsumLoopSizes(*spec, adaptor.getInputs().getTypes(), error);
  if (failed(sizes))
    return inferenceError(loc, error);
  SmallVector<int64_t> shape;
  for (int64_t d : spec->outputDims)
    shape.push_back((*sizes)[d]);
  Type element = cast<RankedTensorType>(adaptor.getInputs().front().getType())
                     .getElementType();
  results.push_back(RankedTensorType::get(shape, element));
  return success();
}

LogicalResult EinsumOp::verify() {
  Type element =
      cast<RankedTensorType>(getInputs().front().getType()).getElementType();
  for (Value v : getInputs())
    if (cast<RankedTensorType>(v.getType()).getElementType() != element)
      return emitOpError("operand element types differ");
  return success();
}

// FLOPs with two or more operands: 2 per point of the iteration space (the
// product of every label's size), a multiply-add as in MatMul. With one
// operand: points - |out|, N - 1 adds per output for N summed points, and 0
// for pure data movement (a transpose or a diagonal). Bytes: default.
int64_t EinsumOp::getFlops() {
  SmallVector<int64_t> ranks;
  for (Value v : getInputs()) {
    auto type = cast<RankedTensorType>(v.getType());
    if (!type.hasStaticShape())
      return -1;
    ranks.push_back(type.getRank());
  }
  std::string error;
  FailureOr<EinsumSpec> spec = parseEinsumEquation(getEquation(), ranks, error);
  if (failed(spec))
    return -1;
  FailureOr<SmallVector<int64_t>> sizes =
      getEinsumLoopSizes(*spec, getInputs().getTypes(), error);
  if (failed(sizes))
    return -1;
  int64_t points = 1;
  for (int64_t s : *sizes)
    points *= s;
  if (getInputs().size() > 1)
    return 2 * points;
  int64_t outputs = getNumElements(getType());
  return outputs < 0 ? -1 : std::max<int64_t>(points - outputs, 0);
}

// Products of operands run on tensor cores; a single-operand equation
// (transpose, diagonal, sum) multiplies nothing.
bool EinsumOp::isContraction() { return getInputs().size() > 1; }

//===----------------------------------------------------------------------===//
// LogSoftmaxOp, HardmaxOp
//===----------------------------------------------------------------------===//

LogicalResult LogSoftmaxOp::verify() {
  int64_t rank = getType().getRank();
  if (failed(verifyAxis(*this, getAxis(), rank)))
    return failure();
  return success();
}

// FLOPs: rows * (5N - 1) for rows of N along `axis`: max N-1, sub N, exp N,
// sum N-1, log 1, sub N. Bytes: default (|in| + |out|).
int64_t LogSoftmaxOp::getFlops() {
  int64_t elements = getNumElements(getType());
  if (elements < 0)
    return -1;
  int64_t n = getType().getDimSize(getAxis());
  int64_t rows = n == 0 ? 0 : elements / n;
  return rows * (5 * n - 1);
}

// Fusion: a row reduction when it runs along the last axis.
FusionRole LogSoftmaxOp::getFusionRole() {
  return getAxis() == getType().getRank() - 1 ? FusionRole::Reduction
                                              : FusionRole::Opaque;
}

FailureOr<int64_t> LogSoftmaxOp::getReductionRows() {
  return getRowsOfTrailingDims(getInput(), getType().getRank() - 1);
}

LogicalResult HardmaxOp::verify() {
  int64_t rank = getType().getRank();
  if (failed(verifyAxis(*this, getAxis(), rank)))
    return failure();
  return success();
}

// FLOPs: rows * (2N - 1) for rows of N along `axis`: N - 1 compares for the
// argmax, N selects for the one-hot. Bytes: default (|in| + |out|).
int64_t HardmaxOp::getFlops() {
  int64_t elements = getNumElements(getType());
  if (elements < 0)
    return -1;
  int64_t n = getType().getDimSize(getAxis());
  int64_t rows = n == 0 ? 0 : elements / n;
  return rows * (2 * n - 1);
}

//===----------------------------------------------------------------------===//
// LayerNormOp
//===----------------------------------------------------------------------===//

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *ctx,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto type = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(loc, axis, type.getRank())))
    return failure();
  Type stash = adaptor.getStashType() == 1 ? Float32Type::get(ctx)
                                           : type.getElementType();
  SmallVector<int64_t> statShape(type.getShape());
  for (int64_t i = axis; i < type.getRank(); ++i)
    statShape[i] = 1;
  results.push_back(type);
  results.push_back(RankedTensorType::get(statShape, stash));
  results.push_back(RankedTensorType::get(statShape, stash));
  return success();
}

LogicalResult LayerNormOp::verify() {
  auto type = getInput().getType();
  int64_t rank = type.getRank(), axis = getAxis();
  if (failed(verifyAxis(*this, axis, rank)))
    return failure();
  ArrayRef<int64_t> normalized = type.getShape().drop_front(axis);
  for (Value param : {getScale(), getBias()}) {
    if (!param)
      continue;
    auto paramType = cast<RankedTensorType>(param.getType());
    if (paramType.getElementType() != type.getElementType())
      return emitOpError("scale/bias element type differs from the input");
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes(normalized, paramType.getShape());
    if (failed(shape) || ArrayRef<int64_t>(*shape) != normalized)
      return emitOpError("scale/bias ")
             << paramType << " does not broadcast to the normalized shape";
  }
  return success();
}

// FLOPs: 8 * |x| + 3 * rows (rows = |mean|): a rounded-up 8 per element
// (mean sum, centering, square, variance sum, normalize, scale and shift
// are 7, 6 without a bias) plus the epsilon add, sqrt and reciprocal per
// row. Bytes: default (x, scale, bias, the result; `mean` and `inv_std_dev`
// only when used).
int64_t LayerNormOp::getFlops() {
  int64_t elements = getNumElements(getResult().getType());
  int64_t rows = getNumElements(getMean().getType());
  if (elements < 0 || rows < 0)
    return -1;
  return 8 * elements + 3 * rows;
}

// Fusion: always a row reduction over the dims from `axis`; its rows are the
// elements of `mean`.
FusionRole LayerNormOp::getFusionRole() { return FusionRole::Reduction; }

FailureOr<int64_t> LayerNormOp::getReductionRows() {
  int64_t rows = getNumElements(getMean().getType());
  if (rows < 0)
    return failure();
  return rows;
}

//===----------------------------------------------------------------------===//
// LRNOp
//===----------------------------------------------------------------------===//

LogicalResult LRNOp::verify() {
  if (getType().getRank() < 3)
    return emitOpError("input rank must be >= 3, got ") << getType().getRank();
  if (getSize() < 1)
    return emitOpError("size must be positive, got ") << getSize();
  return success();
}

// FLOPs: |x| * (2 * size + 4): a square and an add per window position,
// then scale, bias, pow and divide per element. Bytes: default.
int64_t LRNOp::getFlops() {
  int64_t elements = getNumElements(getType());
  return elements < 0 ? -1 : elements * (2 * getSize() + 4);
}
