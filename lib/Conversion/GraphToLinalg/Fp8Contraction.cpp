//===- Fp8Contraction.cpp - MatMul/Gemm in e4m3 with per-tensor scales ----===//
//
// The lowering of a contraction the precision policy gave fp8
// (docs/precision.md). Each operand is scaled by a power of two chosen from
// its largest magnitude, rounded to e4m3, and multiplied in that format with
// fp32 sums; the result is scaled back. A weight (a ridge.constant) is
// quantized here, at compile time, so the kernel reads 1 byte per element of
// it; an activation gets a whole-tensor max reduction and an elementwise
// quantizing op, which a GPU build fuses into the contraction's kernel as
// the prologue that stages its tiles.
//
//===----------------------------------------------------------------------===//

#include "GraphToLinalgCommon.h"

#include "ridgeline/Dialect/Ridge/IR/ConstantElements.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;
using namespace mlir::ridge;

namespace mlir::ridge::linalg_lowering {

namespace {

/// An operand as the contraction reads it once quantized.
struct QuantizedOperand {
  Value value;   // f8E4M3FN, k innermost
  AffineMap map; // over (batch..., m, n, k)
  /// An activation's amax (a 0-d f32 tensor computed at run time), from
  /// which each use computes its scale exponent; null for a weight, whose
  /// exponent was chosen here, at compile time.
  Value amax;
  int exponent = 0;
};

/// The permutation of `map`'s results (an operand's dimensions) that moves
/// the dimension indexed by loop `kLoop` last.
SmallVector<int64_t> getKInnermostPermutation(AffineMap map, unsigned kLoop) {
  SmallVector<int64_t> order;
  std::optional<int64_t> kDim;
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (dim && dim.getPosition() == kLoop && !kDim)
      kDim = i;
    else
      order.push_back(i);
  }
  if (kDim)
    order.push_back(*kDim);
  return order;
}

QuantizedOperand quantizeOperand(OpBuilder &b, Location loc, Value operand,
                                 Value graphOperand, AffineMap map,
                                 unsigned kLoop) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType type = getTensorType(operand);
  Type f32 = b.getF32Type(), f8 = Float8E4M3FNType::get(ctx);
  SmallVector<int64_t> order = getKInnermostPermutation(map, kLoop);
  SmallVector<int64_t> shape;
  SmallVector<AffineExpr> results;
  for (int64_t dim : order) {
    shape.push_back(type.getDimSize(dim));
    results.push_back(map.getResult(dim));
  }
  auto quantizedType = RankedTensorType::get(shape, f8);
  QuantizedOperand quantized;
  quantized.map = AffineMap::get(map.getNumDims(), 0, results, ctx);

  if (std::optional<SmallVector<float>> values =
          readF32Constant(graphOperand)) {
    // A weight: its scale and its e4m3 bytes now, permuted to k innermost.
    float amax = 0;
    for (float x : *values)
      amax =
          std::isnan(x) || std::isnan(amax) ? NAN : std::max(amax, std::abs(x));
    quantized.exponent = getFp8ScaleExponent(amax);
    int64_t rank = type.getRank();
    SmallVector<int64_t> strides(rank, 1);
    for (int64_t i = rank - 2; i >= 0; --i)
      strides[i] = strides[i + 1] * type.getDimSize(i + 1);
    SmallVector<uint8_t> bytes(values->size());
    SmallVector<int64_t> index(rank, 0);
    for (uint8_t &byte : bytes) {
      int64_t source = 0;
      for (int64_t i = 0; i < rank; ++i)
        source += index[i] * strides[order[i]];
      byte = quantizeToE4M3((*values)[source], quantized.exponent);
      for (int64_t i = rank - 1; i >= 0; --i) {
        if (++index[i] < shape[i])
          break;
        index[i] = 0;
      }
    }
    // A resource, so that the weights file (not the IR text) holds it.
    auto source = dyn_cast<DenseResourceElementsAttr>(
        graphOperand.getDefiningOp<ConstantOp>().getValue());
    std::string key =
        (source ? source.getRawHandle().getKey().str() : "weight") + ".e4m3";
    auto attr = DenseResourceElementsAttr::get(
        quantizedType, key,
        HeapAsmResourceBlob::allocateAndCopyInferAlign(
            ArrayRef<uint8_t>(bytes)));
    quantized.value = arith::ConstantOp::create(b, loc, quantizedType, attr);
    return quantized;
  }

  // An activation: amax = max |x| over the whole tensor (NaN propagates).
  auto scalarType = RankedTensorType::get({}, f32);
  Value init = createFilled(b, loc, scalarType, b.getZeroAttr(f32));
  unsigned rank = type.getRank();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap toScalar = AffineMap::get(rank, 0, {}, ctx);
  quantized.amax =
      linalg::GenericOp::create(
          b, loc, scalarType, operand, init,
          ArrayRef<AffineMap>{identity, toScalar},
          SmallVector<utils::IteratorType>(rank,
                                           utils::IteratorType::reduction),
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            Value magnitude = math::AbsFOp::create(nb, nloc, args[0]);
            linalg::YieldOp::create(
                nb, nloc,
                arith::MaximumFOp::create(nb, nloc, args[1], magnitude)
                    .getResult());
          })
          .getResult(0);

  // q = e4m3(clamp(x * 2^e, +-448)), written with k innermost: the op
  // iterates the quantized layout and reads the operand through the
  // inverse permutation.
  SmallVector<AffineExpr> sourceExprs(rank);
  for (auto [position, dim] : llvm::enumerate(order))
    sourceExprs[dim] = getAffineDimExpr(position, ctx);
  AffineMap sourceMap = AffineMap::get(rank, 0, sourceExprs, ctx);
  Value empty = tensor::EmptyOp::create(b, loc, shape, f8);
  quantized.value =
      linalg::GenericOp::create(
          b, loc, quantizedType, ValueRange{operand, quantized.amax}, empty,
          ArrayRef<AffineMap>{sourceMap, toScalar, identity},
          SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            Value scale = buildPowerOfTwo(
                nb, nloc, buildFp8ScaleExponent(nb, nloc, args[1]));
            Value scaled = arith::MulFOp::create(nb, nloc, args[0], scale);
            auto bound = [&](float v) {
              return arith::ConstantOp::create(nb, nloc, nb.getF32FloatAttr(v));
            };
            Value clamped = arith::MinimumFOp::create(
                nb, nloc,
                arith::MaximumFOp::create(nb, nloc, scaled,
                                          bound(-kFp8E4M3Max)),
                bound(kFp8E4M3Max));
            linalg::YieldOp::create(
                nb, nloc,
                arith::TruncFOp::create(nb, nloc, f8, clamped).getResult());
          })
          .getResult(0);
  return quantized;
}

} // namespace

Value buildFp8Contraction(OpBuilder &b, Location loc, Value lhs, Value rhs,
                          Value graphLhs, Value graphRhs, AffineMap lhsMap,
                          AffineMap rhsMap, RankedTensorType resultType) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  unsigned numLoops = resultType.getRank() + 1;
  unsigned kLoop = numLoops - 1;
  QuantizedOperand qLhs = quantizeOperand(b, loc, lhs, graphLhs, lhsMap, kLoop);
  QuantizedOperand qRhs = quantizeOperand(b, loc, rhs, graphRhs, rhsMap, kLoop);

  // sum_k e4m3 x e4m3 in f32 (each product is exact in f32).
  auto accType = RankedTensorType::get(resultType.getShape(), f32);
  Value init = createFilled(b, loc, accType, b.getZeroAttr(f32));
  AffineMap outMap = AffineMap::getMultiDimIdentityMap(numLoops, ctx)
                         .getMajorSubMap(resultType.getRank());
  SmallVector<utils::IteratorType> iterators(numLoops - 1,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value sum =
      linalg::GenericOp::create(
          b, loc, accType, ValueRange{qLhs.value, qRhs.value}, init,
          ArrayRef<AffineMap>{qLhs.map, qRhs.map, outMap}, iterators,
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            Value l = arith::ExtFOp::create(nb, nloc, f32, args[0]);
            Value r = arith::ExtFOp::create(nb, nloc, f32, args[1]);
            linalg::YieldOp::create(
                nb, nloc,
                arith::AddFOp::create(nb, nloc, args[2],
                                      arith::MulFOp::create(nb, nloc, l, r))
                    .getResult());
          })
          .getResult(0);

  // out = sum * 2^-e_lhs * 2^-e_rhs: exact, one factor at a time (their
  // product may leave the f32 range).
  SmallVector<Value> inputs{sum};
  for (QuantizedOperand *q : {&qLhs, &qRhs})
    if (q->amax)
      inputs.push_back(q->amax);
  return buildElementwise(
      b, loc, accType, inputs,
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value result = args[0];
        unsigned next = 1;
        for (QuantizedOperand *q : {&qLhs, &qRhs}) {
          Value factor;
          if (q->amax) {
            Value exponent = buildFp8ScaleExponent(nb, nloc, args[next++]);
            factor = buildPowerOfTwo(
                nb, nloc,
                arith::SubIOp::create(nb, nloc,
                                      arith::ConstantOp::create(
                                          nb, nloc, nb.getI32IntegerAttr(0)),
                                      exponent));
          } else {
            factor = arith::ConstantOp::create(
                nb, nloc, nb.getF32FloatAttr(std::ldexp(1.0f, -q->exponent)));
          }
          result = arith::MulFOp::create(nb, nloc, result, factor);
        }
        return result;
      });
}

} // namespace mlir::ridge::linalg_lowering
