//===- GraphToLinalg.cpp - ridge graph dialect -> linalg on tensors -------===//
//
// One pattern per graph op, in the style of TosaToLinalg: broadcasting is
// expressed in indexing maps, results are built destination-style on
// `tensor.empty`, and reductions keep f16/bf16 data in f32 while they
// accumulate.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Conversion/Passes.h"

#include "GraphToLinalgCommon.h"

#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Transforms/DialectConversion.h"

#define DEBUG_TYPE "ridge-convert-graph-to-linalg"

namespace mlir::ridge {
#define GEN_PASS_DEF_CONVERTGRAPHTOLINALGPASS
#include "ridgeline/Conversion/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::linalg_lowering;

namespace {

/// ONNX Cast semantics between any two supported element types. `from` and
/// `to` are the graph's element types, `toSignless` the lowered result type;
/// float8 values travel as their i8 bits, and convert through f32.
Value buildCast(OpBuilder &b, Location loc, Value in, Type from, Type to,
                Type toSignless, bool saturate) {
  if (isOnnxFloat8(from)) {
    if (from == to)
      return in;
    Type f32 = b.getF32Type();
    return buildCast(b, loc, decodeFloat8(b, loc, in, cast<FloatType>(from)),
                     f32, to, toSignless, saturate);
  }
  if (isOnnxFloat8(to)) {
    Value value = in;
    if (!isa<FloatType>(in.getType())) {
      // Exact: a value that f32 rounds overflows every float8 type.
      Type f32 = b.getF32Type();
      value = buildCast(b, loc, in, from, f32, f32, saturate);
    }
    return encodeFloat8(b, loc, value, cast<FloatType>(to), saturate);
  }
  Type inType = in.getType();
  if (inType == toSignless)
    return in;
  if (toSignless.isInteger(1)) { // x != 0
    if (isa<FloatType>(inType)) {
      Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(inType, 0));
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, in, zero);
    }
    Value zero = arith::ConstantOp::create(b, loc, b.getIntegerAttr(inType, 0));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, in, zero);
  }
  bool fromUnsigned = from.isUnsignedInteger() || from.isInteger(1);
  if (isa<FloatType>(inType) && isa<FloatType>(toSignless)) {
    if (inType.getIntOrFloatBitWidth() < toSignless.getIntOrFloatBitWidth())
      return arith::ExtFOp::create(b, loc, toSignless, in);
    if (inType.getIntOrFloatBitWidth() > toSignless.getIntOrFloatBitWidth())
      return arith::TruncFOp::create(b, loc, toSignless, in);
    // f16 <-> bf16: go through f32.
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), in);
    return arith::TruncFOp::create(b, loc, toSignless, wide);
  }
  if (isa<FloatType>(inType)) {
    if (to.isUnsignedInteger())
      return arith::FPToUIOp::create(b, loc, toSignless, in);
    return arith::FPToSIOp::create(b, loc, toSignless, in);
  }
  if (isa<FloatType>(toSignless)) {
    if (fromUnsigned)
      return arith::UIToFPOp::create(b, loc, toSignless, in);
    return arith::SIToFPOp::create(b, loc, toSignless, in);
  }
  unsigned inWidth = inType.getIntOrFloatBitWidth();
  unsigned outWidth = toSignless.getIntOrFloatBitWidth();
  if (inWidth > outWidth)
    return arith::TruncIOp::create(b, loc, toSignless, in);
  if (fromUnsigned)
    return arith::ExtUIOp::create(b, loc, toSignless, in);
  return arith::ExtSIOp::create(b, loc, toSignless, in);
}

struct CastLowering : OpConversionPattern<CastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto resultType =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    Type from = getElementTypeOrSelf(op.getInput().getType());
    Type to = getElementTypeOrSelf(op.getType());
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType, adaptor.getInput(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return buildCast(b, loc, args[0], from, to,
                           resultType.getElementType(), op.getSaturate());
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Constants and views
//===----------------------------------------------------------------------===//

struct ConstantLowering : OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    ElementsAttr value = op.getValue();
    if (type != op.getType()) {
      // Unsigned data keeps its bits under the signless type.
      if (auto dense = dyn_cast<DenseElementsAttr>(value))
        value = dense.bitcast(type.getElementType());
      else if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
        value = DenseResourceElementsAttr::get(type, resource.getRawHandle());
      else
        return rewriter.notifyMatchFailure(op, "unsupported constant kind");
    }
    // Weight blobs become 1-D globals viewed through expand_shape: LLVM
    // translates a nested array type element row by element row (a 512x512x3x3
    // weight would be 786k uniqued constants), a flat one as a single
    // ConstantDataArray.
    auto resource = dyn_cast<DenseResourceElementsAttr>(value);
    if (resource && type.getRank() > 1 && type.hasStaticShape()) {
      auto flatType =
          RankedTensorType::get({type.getNumElements()}, type.getElementType());
      Value flat = arith::ConstantOp::create(
          rewriter, op.getLoc(), flatType,
          DenseResourceElementsAttr::get(flatType, resource.getRawHandle()));
      ReassociationIndices all;
      for (int64_t i = 0; i < type.getRank(); ++i)
        all.push_back(i);
      rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
          op, type, flat, SmallVector<ReassociationIndices>{all});
      return success();
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, type,
                                                   cast<TypedAttr>(value));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// Builds out[batch..., m, n] = sum_k lhs[.., m, k] * rhs[.., k, n] as a
/// linalg op, accumulating narrow floats in f32. `lhsMap`/`rhsMap` are over
/// the iteration space (batch..., m, n, k). Integer multiply-add is the same
/// for signed and unsigned data in two's complement. A non-null `roundTo`
/// (the op's ridge.precision) rounds each f32 operand to it in the body,
/// right before the multiply; the sum stays f32.
Value buildContraction(OpBuilder &b, Location loc, Value lhs, Value rhs,
                       AffineMap lhsMap, AffineMap rhsMap,
                       RankedTensorType resultType, Type roundTo) {
  MLIRContext *ctx = b.getContext();
  Type element = resultType.getElementType();
  Type acc = getAccumulatorType(element);
  auto accType = RankedTensorType::get(resultType.getShape(), acc);
  Value init = createFilled(b, loc, accType, b.getZeroAttr(acc));
  unsigned numLoops = resultType.getRank() + 1;
  AffineMap outMap = AffineMap::getMultiDimIdentityMap(numLoops, ctx)
                         .getMajorSubMap(resultType.getRank());
  SmallVector<utils::IteratorType> iterators(numLoops - 1,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      b, loc, accType, ValueRange{lhs, rhs}, init,
      ArrayRef<AffineMap>{lhsMap, rhsMap, outMap}, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value l = args[0], r = args[1], sum = args[2];
        Value updated;
        if (isa<FloatType>(acc)) {
          l = extendTo(nb, nloc, roundThrough(nb, nloc, l, roundTo), acc);
          r = extendTo(nb, nloc, roundThrough(nb, nloc, r, roundTo), acc);
          updated = arith::AddFOp::create(
              nb, nloc, sum, arith::MulFOp::create(nb, nloc, l, r));
        } else {
          updated = arith::AddIOp::create(
              nb, nloc, sum, arith::MulIOp::create(nb, nloc, l, r));
        }
        linalg::YieldOp::create(nb, nloc, updated);
      });
  Value result = generic.getResult(0);
  if (acc != element)
    result = buildElementwise(b, loc, resultType, result,
                              [&](OpBuilder &nb, Location nloc, ValueRange a) {
                                return truncateTo(nb, nloc, a[0], element);
                              });
  return result;
}

struct MatMulLowering : OpConversionPattern<MatMulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MatMulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    Value lhs =
        getStoredOperand(rewriter, loc, op, op.getLhs(), adaptor.getLhs());
    // A tf32 weight B is stored K-major ([..., N, K]); rhsType stays the
    // [..., K, N] the product reads, and its map reads (n, k).
    auto rhsType = cast<RankedTensorType>(adaptor.getRhs().getType());
    Value rhs = getKMajorTf32Weight(rewriter, loc, op, op.getRhs());
    bool rhsKMajor = static_cast<bool>(rhs);
    if (!rhsKMajor)
      rhs = getStoredOperand(rewriter, loc, op, op.getRhs(), adaptor.getRhs());
    rhsType = rhsType.clone(getElementTypeOrSelf(rhs.getType()));
    auto lhsType = cast<RankedTensorType>(lhs.getType());
    auto resultType =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    if (!lhsType.hasStaticShape() || !rhsType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs static shapes");
    FailureOr<Type> roundTo = getOperandRoundingType(op);
    if (failed(roundTo))
      return failure();
    // Promote vectors to matrices (numpy): [K] -> [1, K] and [K] -> [K, 1].
    bool lhsVector = lhsType.getRank() == 1, rhsVector = rhsType.getRank() == 1;
    if (lhsVector) {
      lhsType = RankedTensorType::get({1, lhsType.getDimSize(0)},
                                      lhsType.getElementType());
      lhs = tensor::ExpandShapeOp::create(
          rewriter, loc, lhsType, lhs,
          SmallVector<ReassociationIndices>{{0, 1}});
    }
    if (rhsVector) {
      rhsType = RankedTensorType::get({rhsType.getDimSize(0), 1},
                                      rhsType.getElementType());
      rhs = tensor::ExpandShapeOp::create(
          rewriter, loc, rhsType, rhs,
          SmallVector<ReassociationIndices>{{0, 1}});
    }
    FailureOr<SmallVector<int64_t>> batch = broadcastShapes(
        lhsType.getShape().drop_back(2), rhsType.getShape().drop_back(2));
    if (failed(batch))
      return rewriter.notifyMatchFailure(op, "batch dims do not broadcast");
    SmallVector<int64_t> fullShape = *batch;
    fullShape.push_back(lhsType.getDimSize(lhsType.getRank() - 2));
    fullShape.push_back(rhsType.getDimSize(rhsType.getRank() - 1));
    int64_t batchRank = batch->size();
    unsigned numLoops = batchRank + 3; // batch..., m, n, k
    AffineExpr m = getAffineDimExpr(batchRank, ctx);
    AffineExpr n = getAffineDimExpr(batchRank + 1, ctx);
    AffineExpr k = getAffineDimExpr(batchRank + 2, ctx);
    auto operandMap = [&](RankedTensorType type, AffineExpr row,
                          AffineExpr col) {
      SmallVector<AffineExpr> exprs;
      int64_t offset = batchRank - (type.getRank() - 2);
      for (int64_t i = 0; i < type.getRank() - 2; ++i)
        exprs.push_back(type.getDimSize(i) == 1 && (*batch)[i + offset] != 1
                            ? getAffineConstantExpr(0, ctx)
                            : getAffineDimExpr(i + offset, ctx));
      exprs.push_back(row);
      exprs.push_back(col);
      return AffineMap::get(numLoops, 0, exprs, ctx);
    };
    auto fullType =
        RankedTensorType::get(fullShape, resultType.getElementType());
    Value result =
        isa_and_nonnull<Float8E4M3FNType>(*roundTo)
            ? buildFp8Contraction(rewriter, loc, lhs, rhs, op.getLhs(),
                                  op.getRhs(), operandMap(lhsType, m, k),
                                  operandMap(rhsType, k, n), fullType)
            : buildContraction(rewriter, loc, lhs, rhs,
                               operandMap(lhsType, m, k),
                               rhsKMajor ? operandMap(rhsType, n, k)
                                         : operandMap(rhsType, k, n),
                               fullType, *roundTo);
    if (fullType != resultType) {
      // A vector operand was promoted: fold the unit dim it added into its
      // neighbour (both unit dims vanish for vector x vector, rank 0).
      SmallVector<ReassociationIndices> reassociation;
      if (resultType.getRank() != 0) {
        int64_t rank = fullType.getRank();
        for (int64_t i = 0; i < batchRank; ++i)
          reassociation.push_back({i});
        reassociation.push_back({rank - 2, rank - 1});
      }
      result = tensor::CollapseShapeOp::create(rewriter, loc, resultType,
                                               result, reassociation);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct GemmLowering : OpConversionPattern<GemmOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GemmOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    auto resultType =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    AffineExpr m = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx),
               k = getAffineDimExpr(2, ctx);
    AffineMap aMap = AffineMap::get(3, 0,
                                    op.getTransA() ? ArrayRef<AffineExpr>{k, m}
                                                   : ArrayRef<AffineExpr>{m, k},
                                    ctx);
    // A tf32 weight B is stored K-major: as if transB.
    Value kMajorB = op.getTransB()
                        ? Value()
                        : getKMajorTf32Weight(rewriter, loc, op, op.getB());
    AffineMap bMap =
        AffineMap::get(3, 0,
                       op.getTransB() || kMajorB ? ArrayRef<AffineExpr>{n, k}
                                                 : ArrayRef<AffineExpr>{k, n},
                       ctx);
    FailureOr<Type> roundTo = getOperandRoundingType(op);
    if (failed(roundTo))
      return failure();
    Value product =
        isa_and_nonnull<Float8E4M3FNType>(*roundTo)
            ? buildFp8Contraction(rewriter, loc, adaptor.getA(), adaptor.getB(),
                                  op.getA(), op.getB(), aMap, bMap, resultType)
            : buildContraction(rewriter, loc,
                               getStoredOperand(rewriter, loc, op, op.getA(),
                                                adaptor.getA()),
                               kMajorB ? kMajorB
                                       : getStoredOperand(rewriter, loc, op,
                                                          op.getB(),
                                                          adaptor.getB()),
                               aMap, bMap, resultType, *roundTo);
    double alpha = op.getAlpha().convertToDouble();
    double beta = op.getBeta().convertToDouble();
    Value c = adaptor.getC();
    if (alpha == 1.0 && !c) {
      rewriter.replaceOp(op, product);
      return success();
    }
    // Epilogue: alpha * product + beta * C, in one elementwise generic.
    SmallVector<Value> inputs{product};
    if (c)
      inputs.push_back(c);
    Type element = resultType.getElementType();
    Value result = buildElementwise(
        rewriter, loc, resultType, inputs,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          auto scale = [&](Value v, double factor) -> Value {
            if (factor == 1.0)
              return v;
            Value f = isa<FloatType>(element)
                          ? arith::ConstantOp::create(
                                b, l, b.getFloatAttr(element, factor))
                                .getResult()
                          : arith::ConstantOp::create(
                                b, l,
                                b.getIntegerAttr(element,
                                                 static_cast<int64_t>(factor)))
                                .getResult();
            return isa<FloatType>(element)
                       ? arith::MulFOp::create(b, l, v, f).getResult()
                       : arith::MulIOp::create(b, l, v, f).getResult();
          };
          Value acc = scale(args[0], alpha);
          if (args.size() == 1)
            return acc;
          Value bias = scale(args[1], beta);
          return isa<FloatType>(element)
                     ? arith::AddFOp::create(b, l, acc, bias).getResult()
                     : arith::AddIOp::create(b, l, acc, bias).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

/// Unsigned integers become signless: arith and linalg only take signless.
/// The float8 types become i8, their bits: the back ends have no arithmetic
/// of their own for them (Float8.cpp converts them).
class SignlessTypeConverter : public TypeConverter {
public:
  SignlessTypeConverter() {
    addConversion([](Type type) { return type; });
    addConversion([](FloatType type) -> Type {
      if (isOnnxFloat8(type))
        return IntegerType::get(type.getContext(), 8);
      return type;
    });
    addConversion([](IntegerType type) -> Type {
      if (type.isSignless())
        return type;
      return IntegerType::get(type.getContext(), type.getWidth());
    });
    addConversion([this](RankedTensorType type) -> Type {
      return type.clone(convertType(type.getElementType()));
    });
  }
};

struct ConvertGraphToLinalgPass
    : ridge::impl::ConvertGraphToLinalgPassBase<ConvertGraphToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    SignlessTypeConverter converter;
    RewritePatternSet patterns(ctx);
    populateGraphToLinalgPatterns(converter, patterns);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    populateReturnOpTypeConversionPattern(patterns, converter);
    populateCallOpTypeConversionPattern(patterns, converter);

    ConversionTarget target(*ctx);
    target.addIllegalDialect<RidgeDialect>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, scf::SCFDialect,
                           tensor::TensorDialect>();
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp op) {
      return converter.isSignatureLegal(op.getFunctionType()) &&
             converter.isLegal(&op.getBody());
    });
    target.addDynamicallyLegalOp<func::ReturnOp, func::CallOp>(
        [&](Operation *op) { return converter.isLegal(op); });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::ridge::populateGraphToLinalgPatterns(const TypeConverter &converter,
                                                RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<CastLowering, ConstantLowering, MatMulLowering, GemmLowering>(
      converter, ctx);
  populateElementwiseToLinalgPatterns(converter, patterns);
  populateShapeToLinalgPatterns(converter, patterns);
  populateReductionToLinalgPatterns(converter, patterns);
  populateNNToLinalgPatterns(converter, patterns);
  populateQuantizeToLinalgPatterns(converter, patterns);
  populateResampleToLinalgPatterns(converter, patterns);
  populateRecurrentToLinalgPatterns(converter, patterns);
  populateSignalToLinalgPatterns(converter, patterns);
  populateTransformerToLinalgPatterns(converter, patterns);
}
