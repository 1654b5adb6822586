//===- ReductionToLinalg.cpp - reduction and normalization ops -------===//
//
// Lowering of the ridge reduction and normalization ops to linalg on tensors.
//
//===----------------------------------------------------------------------===//

#include "GraphToLinalgCommon.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::linalg_lowering;

namespace {

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

/// Reduces `input` along `axis` with `combine`, starting from `initValue`.
Value buildRowReduction(
    OpBuilder &b, Location loc, Value input, int64_t axis, Type accType,
    TypedAttr initValue,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  MLIRContext *ctx = b.getContext();
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t rank = inputType.getRank();
  SmallVector<int64_t> reducedShape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t i = 0; i < rank; ++i) {
    iterators.push_back(i == axis ? utils::IteratorType::reduction
                                  : utils::IteratorType::parallel);
    if (i == axis)
      continue;
    reducedShape.push_back(inputType.getDimSize(i));
    outExprs.push_back(getAffineDimExpr(i, ctx));
  }
  auto reducedType = RankedTensorType::get(reducedShape, accType);
  Value init = createFilled(b, loc, reducedType, initValue);
  AffineMap inMap = b.getMultiDimIdentityMap(rank);
  AffineMap outMap = AffineMap::get(rank, 0, outExprs, ctx);
  return linalg::GenericOp::create(
             b, loc, reducedType, input, init,
             ArrayRef<AffineMap>{inMap, outMap}, iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value v = extendTo(nb, nloc, args[0], accType);
               linalg::YieldOp::create(nb, nloc, combine(nb, nloc, args[1], v));
             })
      .getResult(0);
}

struct SoftmaxLowering : OpConversionPattern<SoftmaxOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SoftmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    int64_t axis = op.getAxis(), rank = type.getRank();
    Type element = type.getElementType();
    Type acc = getAccumulatorType(element);
    auto accFloat = cast<FloatType>(acc);

    Value rowMax = buildRowReduction(
        rewriter, loc, input, axis, acc,
        rewriter.getFloatAttr(acc, APFloat::getInf(accFloat.getFloatSemantics(),
                                                   /*Negative=*/true)),
        [](OpBuilder &b, Location l, Value a, Value v) -> Value {
          return arith::MaximumFOp::create(b, l, a, v);
        });
    // The reduced operands broadcast back along `axis`.
    SmallVector<AffineExpr> rowExprs;
    for (int64_t i = 0; i < rank; ++i)
      if (i != axis)
        rowExprs.push_back(getAffineDimExpr(i, ctx));
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    AffineMap rowMap = AffineMap::get(rank, 0, rowExprs, ctx);
    SmallVector<utils::IteratorType> parallel(rank,
                                              utils::IteratorType::parallel);
    auto accType = RankedTensorType::get(type.getShape(), acc);
    Value exps =
        linalg::GenericOp::create(
            rewriter, loc, accType, ValueRange{input, rowMax},
            createEmpty(rewriter, loc, accType),
            ArrayRef<AffineMap>{identity, rowMap, identity}, parallel,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value x = extendTo(b, l, args[0], acc);
              Value shifted = arith::SubFOp::create(b, l, x, args[1]);
              linalg::YieldOp::create(
                  b, l, math::ExpOp::create(b, l, shifted).getResult());
            })
            .getResult(0);
    Value rowSum = buildRowReduction(
        rewriter, loc, exps, axis, acc, rewriter.getFloatAttr(acc, 0.0),
        [](OpBuilder &b, Location l, Value a, Value v) -> Value {
          return arith::AddFOp::create(b, l, a, v);
        });
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, type, ValueRange{exps, rowSum},
            createEmpty(rewriter, loc, type),
            ArrayRef<AffineMap>{identity, rowMap, identity}, parallel,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value q = arith::DivFOp::create(b, l, args[0], args[1]);
              linalg::YieldOp::create(b, l, truncateTo(b, l, q, element));
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::ridge::linalg_lowering::populateReductionToLinalgPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<SoftmaxLowering>(converter, ctx);
}
