//===- ShapeToLinalg.cpp - shape and data-movement ops -------===//
//
// Lowering of the ridge shape and data-movement ops to linalg on tensors.
//
//===----------------------------------------------------------------------===//

#include "GraphToLinalgCommon.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::linalg_lowering;

namespace {

struct ReshapeLowering : OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    if (!inputType.hasStaticShape() || !resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs static shapes");
    // Any static reshape is a collapse to 1-D followed by an expand; both are
    // views, so no data moves.
    auto all = [](int64_t rank) {
      ReassociationIndices indices;
      for (int64_t i = 0; i < rank; ++i)
        indices.push_back(i);
      return SmallVector<ReassociationIndices>{indices};
    };
    if (inputType.getRank() == 0 || resultType.getRank() == 0) {
      SmallVector<ReassociationIndices> none;
      Value result = inputType.getRank() == 0
                         ? tensor::ExpandShapeOp::create(
                               rewriter, loc, resultType, input, none)
                               .getResult()
                         : tensor::CollapseShapeOp::create(
                               rewriter, loc, resultType, input, none)
                               .getResult();
      rewriter.replaceOp(op, result);
      return success();
    }
    Value flat = input;
    if (inputType.getRank() != 1)
      flat = tensor::CollapseShapeOp::create(rewriter, loc, input,
                                             all(inputType.getRank()));
    Value result = flat;
    if (resultType.getRank() != 1)
      result = tensor::ExpandShapeOp::create(rewriter, loc, resultType, flat,
                                             all(resultType.getRank()));
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct TransposeLowering : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto resultType =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    Value init = createEmpty(rewriter, op.getLoc(), resultType);
    auto transpose = linalg::TransposeOp::create(
        rewriter, op.getLoc(), adaptor.getInput(), init, op.getPerm());
    rewriter.replaceOp(op, transpose->getResult(0));
    return success();
  }
};

} // namespace

void mlir::ridge::linalg_lowering::populateShapeToLinalgPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ReshapeLowering, TransposeLowering>(converter, ctx);
}
