//===- RidgeOps.cpp - ridge dialect ops: inference, verifiers, costs ------===//

#include "RidgeOpsCommon.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::detail;

#include "ridgeline/Dialect/Ridge/IR/RidgeInterfaces.cpp.inc"

//===----------------------------------------------------------------------===//
// Shape and size helpers
//===----------------------------------------------------------------------===//

int64_t mlir::ridge::getElementByteWidth(Type type) {
  if (auto complex = dyn_cast<ComplexType>(type))
    return 2 * getElementByteWidth(complex.getElementType());
  unsigned bits = type.getIntOrFloatBitWidth();
  return std::max<int64_t>(1, (bits + 7) / 8);
}

int64_t mlir::ridge::getTensorBytes(Type type) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return -1;
  return shaped.getNumElements() * getElementByteWidth(shaped.getElementType());
}

int64_t mlir::ridge::detail::sumOperandAndResultBytes(Operation *op) {
  int64_t total = 0;
  auto add = [&](Type type) {
    if (!isa<RankedTensorType>(type) || total < 0)
      return;
    int64_t bytes = getTensorBytes(type);
    total = bytes < 0 ? -1 : total + bytes;
  };
  for (Type type : op->getOperandTypes())
    add(type);
  // A result nobody reads (LayerNormalization's mean, attention's scores)
  // need never reach device memory.
  for (OpResult result : op->getResults())
    if (!result.use_empty())
      add(result.getType());
  return total;
}

FailureOr<SmallVector<int64_t>>
mlir::ridge::broadcastShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t r = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (l == r || r == 1)
      result[i] = l;
    else if (l == 1)
      result[i] = r;
    else if (ShapedType::isDynamic(l) || ShapedType::isDynamic(r))
      result[i] = ShapedType::isDynamic(l) ? r : l;
    else
      return failure();
  }
  return result;
}

Location mlir::ridge::getOnnxNodeLoc(MLIRContext *context, StringRef name,
                                     StringRef opType, Location file) {
  Location typed =
      FusedLoc::get(context, {file}, StringAttr::get(context, opType));
  return NameLoc::get(StringAttr::get(context, name), typed);
}

Location mlir::ridge::getMatchedNodesLoc(MLIRContext *context, StringRef name,
                                         StringRef opType,
                                         ArrayRef<Location> nodes) {
  Location typed =
      FusedLoc::get(context, nodes, StringAttr::get(context, opType));
  return NameLoc::get(StringAttr::get(context, name), typed);
}

SmallVector<Location> mlir::ridge::getOnnxNodeLocs(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    if (auto fused = dyn_cast<FusedLoc>(name.getChildLoc()))
      if (llvm::any_of(fused.getLocations(),
                       [](Location inner) { return isa<NameLoc>(inner); }))
        return SmallVector<Location>(fused.getLocations());
  return {loc};
}

OnnxNodeRef mlir::ridge::getOnnxNode(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    OnnxNodeRef ref = getOnnxNode(name.getChildLoc());
    ref.name = name.getName().getValue();
    return ref;
  }
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    if (auto opType = dyn_cast_if_present<StringAttr>(fused.getMetadata()))
      return {StringRef(), opType.getValue()};
    for (Location inner : fused.getLocations())
      if (OnnxNodeRef ref = getOnnxNode(inner); !ref.name.empty())
        return ref;
    return {};
  }
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return getOnnxNode(callSite.getCallee());
  return {};
}

int64_t mlir::ridge::detail::getNumElements(Type type) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return -1;
  // Checked: ShapedType::getNumElements wraps around for hostile shapes,
  // and a folder must not reserve a negative count.
  int64_t count = 1;
  for (int64_t dim : shaped.getShape()) {
    std::optional<int64_t> product = llvm::checkedMul(count, dim);
    if (!product)
      return -1;
    count = *product;
  }
  return count;
}

std::string mlir::ridge::detail::typeToString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

LogicalResult mlir::ridge::detail::inferenceError(std::optional<Location> loc,
                                                  const Twine &message) {
  if (loc)
    return emitError(*loc, message);
  return failure();
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location>,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &results) {
  results.push_back(cast<TypedAttr>(adaptor.getValue()).getType());
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

// FLOPs: 0. Bytes: 0; a constant is charged to the ops that read it.
int64_t ConstantOp::getMinBytes() { return 0; }

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

LogicalResult
mlir::ridge::detail::inferBinaryType(std::optional<Location> loc, Value lhs,
                                     Value rhs,
                                     SmallVectorImpl<Type> &results) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  if (lhsType.getElementType() != rhsType.getElementType())
    return inferenceError(
        loc, "operand element types differ: " + Twine(typeToString(lhsType)) +
                 " vs " + typeToString(rhsType));
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(lhsType.getShape(), rhsType.getShape());
  if (failed(shape))
    return inferenceError(
        loc, "operands are not broadcastable: " + Twine(typeToString(lhsType)) +
                 " vs " + typeToString(rhsType));
  results.push_back(RankedTensorType::get(*shape, lhsType.getElementType()));
  return success();
}

// Binary elementwise ops (add, sub, mul, div, pow, max, min).
// FLOPs: |out|, one per result element (pow counts as one transcendental).
// Bytes: default (both operands at their own, unbroadcast size, plus |out|).
#define RIDGE_DEFINE_BINARY(OP)                                                \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &results) {                                        \
    return inferBinaryType(loc, adaptor.getLhs(), adaptor.getRhs(), results);  \
  }                                                                            \
  int64_t OP::getFlops() { return getNumElements(getType()); }
RIDGE_DEFINE_BINARY(AddOp)
RIDGE_DEFINE_BINARY(SubOp)
RIDGE_DEFINE_BINARY(MulOp)
RIDGE_DEFINE_BINARY(DivOp)
RIDGE_DEFINE_BINARY(PowOp)
RIDGE_DEFINE_BINARY(MaxOp)
RIDGE_DEFINE_BINARY(MinOp)
#undef RIDGE_DEFINE_BINARY

// Unary elementwise ops (relu = max(x, 0), neg, abs, and the transcendentals
// tanh, exp, log, sqrt, erf, sigmoid, reciprocal).
// FLOPs: |out|, one per element. Bytes: default (|in| + |out|).
#define RIDGE_DEFINE_UNARY(OP)                                                 \
  int64_t OP::getFlops() { return getNumElements(getType()); }
RIDGE_DEFINE_UNARY(ReluOp)
RIDGE_DEFINE_UNARY(NegOp)
RIDGE_DEFINE_UNARY(AbsOp)
RIDGE_DEFINE_UNARY(TanhOp)
RIDGE_DEFINE_UNARY(ExpOp)
RIDGE_DEFINE_UNARY(LogOp)
RIDGE_DEFINE_UNARY(SqrtOp)
RIDGE_DEFINE_UNARY(ErfOp)
RIDGE_DEFINE_UNARY(SigmoidOp)
RIDGE_DEFINE_UNARY(ReciprocalOp)
#undef RIDGE_DEFINE_UNARY

// Cast: FLOPs 0 (a conversion is not arithmetic); bytes default (|in| at the
// source element size + |out| at the result element size).
OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return foldCastConstant(adaptor.getInput(), getInput().getType(), getType(),
                          getSaturate());
}

//===----------------------------------------------------------------------===//
// MatMulOp
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  auto lhsType = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhsType = cast<RankedTensorType>(adaptor.getRhs().getType());
  if (lhsType.getElementType() != rhsType.getElementType())
    return inferenceError(loc, "matmul operand element types differ");
  if (lhsType.getRank() < 1 || rhsType.getRank() < 1)
    return inferenceError(loc, "matmul operands must have rank >= 1");
  // Promote rank-1 operands as numpy does.
  SmallVector<int64_t> lhs(lhsType.getShape()), rhs(rhsType.getShape());
  bool lhsVector = lhs.size() == 1, rhsVector = rhs.size() == 1;
  if (lhsVector)
    lhs.insert(lhs.begin(), 1);
  if (rhsVector)
    rhs.push_back(1);
  int64_t k1 = lhs.back(), k2 = rhs[rhs.size() - 2];
  if (!ShapedType::isDynamic(k1) && !ShapedType::isDynamic(k2) && k1 != k2)
    return inferenceError(loc, "matmul contraction dims differ: " + Twine(k1) +
                                   " vs " + Twine(k2));
  FailureOr<SmallVector<int64_t>> batch =
      broadcastShapes(ArrayRef(lhs).drop_back(2), ArrayRef(rhs).drop_back(2));
  if (failed(batch))
    return inferenceError(loc, "matmul batch dims are not broadcastable");
  SmallVector<int64_t> shape = *batch;
  if (!lhsVector)
    shape.push_back(lhs[lhs.size() - 2]);
  if (!rhsVector)
    shape.push_back(rhs.back());
  results.push_back(RankedTensorType::get(shape, lhsType.getElementType()));
  return success();
}

// FLOPs: 2 * |out| * K (one multiply-add per output per K), i.e.
// 2 * batch * M * N * K; broadcast batch dims count once per result batch.
// Bytes: default (lhs + rhs + out; a broadcast operand is read once).
int64_t MatMulOp::getFlops() {
  int64_t outputs = getNumElements(getType());
  auto lhsType = cast<RankedTensorType>(getLhs().getType());
  if (outputs < 0 || !lhsType.hasStaticShape())
    return -1;
  return 2 * outputs * lhsType.getShape().back();
}

bool MatMulOp::isContraction() { return true; }

//===----------------------------------------------------------------------===//
// GemmOp
//===----------------------------------------------------------------------===//

LogicalResult GemmOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &results) {
  auto aType = cast<RankedTensorType>(adaptor.getA().getType());
  auto bType = cast<RankedTensorType>(adaptor.getB().getType());
  if (aType.getRank() != 2 || bType.getRank() != 2)
    return inferenceError(loc, "gemm operands A and B must have rank 2");
  int64_t m = aType.getDimSize(adaptor.getTransA() ? 1 : 0);
  int64_t n = bType.getDimSize(adaptor.getTransB() ? 0 : 1);
  results.push_back(RankedTensorType::get({m, n}, aType.getElementType()));
  return success();
}

LogicalResult GemmOp::verify() {
  auto aType = cast<RankedTensorType>(getA().getType());
  auto bType = cast<RankedTensorType>(getB().getType());
  if (aType.getElementType() != bType.getElementType())
    return emitOpError("A and B element types differ");
  int64_t ka = aType.getDimSize(getTransA() ? 0 : 1);
  int64_t kb = bType.getDimSize(getTransB() ? 1 : 0);
  if (!ShapedType::isDynamic(ka) && !ShapedType::isDynamic(kb) && ka != kb)
    return emitOpError("contraction dims differ: ") << ka << " vs " << kb;
  if (Value c = getC()) {
    auto cType = cast<RankedTensorType>(c.getType());
    if (cType.getElementType() != aType.getElementType())
      return emitOpError("bias element type differs from A");
    if (cType.getRank() > 2)
      return emitOpError("bias C must have rank <= 2");
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes(getType().getShape(), cType.getShape());
    if (failed(shape) || ArrayRef<int64_t>(*shape) != getType().getShape())
      return emitOpError("bias ")
             << cType << " does not broadcast to the result " << getType();
  }
  return success();
}

// FLOPs: 2 * M * N * K, plus M * N when alpha != 1, plus M * N for the bias
// add and M * N more when beta != 1. Bytes: default (A + B + C + out).
int64_t GemmOp::getFlops() {
  int64_t outputs = getNumElements(getType());
  auto aType = cast<RankedTensorType>(getA().getType());
  if (outputs < 0 || !aType.hasStaticShape())
    return -1;
  int64_t k = aType.getDimSize(getTransA() ? 0 : 1);
  int64_t flops = 2 * outputs * k;
  if (getAlpha().convertToFloat() != 1.0f)
    flops += outputs;
  if (getC())
    flops += getBeta().convertToFloat() != 1.0f ? 2 * outputs : outputs;
  return flops;
}

bool GemmOp::isContraction() { return true; }

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto inType = cast<RankedTensorType>(getInput().getType());
  if (inType.getElementType() != getType().getElementType())
    return emitOpError("element type changes: ")
           << inType.getElementType() << " -> " << getType().getElementType();
  if (inType.hasStaticShape() && getType().hasStaticShape() &&
      inType.getNumElements() != getType().getNumElements())
    return emitOpError("element count changes: ")
           << inType.getNumElements() << " -> " << getType().getNumElements();
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // reshape(reshape(x)) -> reshape(x).
  if (auto producer = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(producer.getInput());
    return getResult();
  }
  // Reshaping a dense constant is a constant of the new type.
  if (auto dense = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput()))
    return dense.reshape(getType());
  return {};
}

// A view: FLOPs 0, bytes 0.
int64_t ReshapeOp::getMinBytes() { return 0; }

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto inType = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> perm = adaptor.getPerm();
  if (static_cast<int64_t>(perm.size()) != inType.getRank())
    return inferenceError(loc, "transpose perm has the wrong length");
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= inType.getRank())
      return inferenceError(loc, "transpose perm entry out of range");
    shape.push_back(inType.getDimSize(p));
  }
  results.push_back(RankedTensorType::get(shape, inType.getElementType()));
  return success();
}

// Transpose: FLOPs 0 (data movement); bytes default (|in| + |out|).
LogicalResult TransposeOp::verify() {
  SmallVector<bool> seen(getPerm().size(), false);
  for (int64_t p : getPerm()) {
    if (p < 0 || p >= static_cast<int64_t>(seen.size()) || seen[p])
      return emitOpError("perm is not a permutation");
    seen[p] = true;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// SoftmaxOp
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::verify() {
  int64_t rank = getType().getRank();
  int64_t axis = static_cast<int64_t>(getAxis());
  if (axis < 0 || axis >= rank)
    return emitOpError("axis ")
           << getAxis() << " out of range for rank " << rank;
  return success();
}

// FLOPs: rows * (5N - 2) for rows of N along `axis`: max N-1, sub N, exp N,
// sum N-1, div N. Bytes: default (|in| + |out|).
int64_t SoftmaxOp::getFlops() {
  int64_t elements = getNumElements(getType());
  if (elements < 0)
    return -1;
  int64_t n = getType().getDimSize(getAxis());
  int64_t rows = n == 0 ? 0 : elements / n;
  return rows * (5 * n - 2);
}

// Fusion: a row reduction when it runs along the last axis.
FusionRole SoftmaxOp::getFusionRole() {
  return static_cast<int64_t>(getAxis()) == getType().getRank() - 1
             ? FusionRole::Reduction
             : FusionRole::Opaque;
}

FailureOr<int64_t> SoftmaxOp::getReductionRows() {
  return getRowsOfTrailingDims(getInput(), getType().getRank() - 1);
}

#define GET_OP_CLASSES
#include "ridgeline/Dialect/Ridge/IR/RidgeOps.cpp.inc"
