//===- SignalToLinalg.cpp - signal processing and linear algebra ----------===//
//
// Lowering of the ridge signal processing and linear algebra ops (DFT, Det)
// to linalg on tensors. Both compute in f64: the reference implementations
// work in double precision, and bins or determinants near zero would
// otherwise carry f32 rounding noise far above the test tolerances.
//
//===----------------------------------------------------------------------===//

#include "GraphToLinalgCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::linalg_lowering;

namespace {

Value indexConst(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value f64Const(OpBuilder &b, Location loc, double value) {
  return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(value));
}

//===----------------------------------------------------------------------===//
// DFT
//===----------------------------------------------------------------------===//

/// The DFT as a contraction against twiddle factors computed in the body: an
/// O(n^2) linalg.generic whose extra reduction loop runs over the input bins.
/// The twiddle angle uses (f * t) mod length, exact in integers, so large
/// transforms keep accurate angles.
struct DFTLowering : OpConversionPattern<DFTOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DFTOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    RankedTensorType resultType = op.getType();
    if (!type.hasStaticShape() || !resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs static shapes");
    int64_t rank = type.getRank(), axis = op.getAxis();
    int64_t length = op.getLength();
    bool inverse = op.getInverse(), onesided = op.getOnesided();
    bool realInverse = inverse && onesided;
    bool complexInput = type.getShape().back() == 2;
    Type f64 = rewriter.getF64Type();

    // Input bins beyond the DFT size are dropped (truncation); missing ones
    // are zeros and contribute nothing (padding). The inverse real transform
    // reads only the non-redundant half of the spectrum.
    int64_t used =
        std::min(type.getDimSize(axis), realInverse ? length / 2 + 1 : length);
    if (used < type.getDimSize(axis)) {
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes, strides(rank, rewriter.getIndexAttr(1));
      for (int64_t i = 0; i < rank; ++i)
        sizes.push_back(
            rewriter.getIndexAttr(i == axis ? used : type.getDimSize(i)));
      input = tensor::ExtractSliceOp::create(rewriter, loc, input, offsets,
                                             sizes, strides);
    }

    // Loops: the result dims (the bin at `axis`, the part last) and the
    // input bin (reduction). The real and imaginary input parts are two
    // reads of the same tensor at constant positions of its last dim.
    auto partMap = [&](int64_t part) {
      SmallVector<AffineExpr> exprs;
      for (int64_t i = 0; i + 1 < rank; ++i)
        exprs.push_back(getAffineDimExpr(i == axis ? rank : i, ctx));
      exprs.push_back(getAffineConstantExpr(part, ctx));
      return AffineMap::get(rank + 1, 0, exprs, ctx);
    };
    SmallVector<Value> inputs{input};
    SmallVector<AffineMap> maps{partMap(0)};
    if (complexInput) {
      inputs.push_back(input);
      maps.push_back(partMap(1));
    }
    maps.push_back(
        AffineMap::getMultiDimIdentityMap(rank + 1, ctx).getMajorSubMap(rank));
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    auto accType = RankedTensorType::get(resultType.getShape(), f64);
    double step = 2 * llvm::numbers::pi / static_cast<double>(length);

    Value sums =
        linalg::GenericOp::create(
            rewriter, loc, accType, inputs,
            createFilled(rewriter, loc, accType, rewriter.getF64FloatAttr(0)),
            maps, iterators,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value bin = linalg::IndexOp::create(b, l, axis);
              Value t = linalg::IndexOp::create(b, l, rank);
              Value n = indexConst(b, l, length);
              Value phase = arith::RemUIOp::create(
                  b, l, arith::MulIOp::create(b, l, bin, t), n);
              Value angle = arith::MulFOp::create(
                  b, l,
                  arith::UIToFPOp::create(b, l, f64,
                                          arith::IndexCastUIOp::create(
                                              b, l, b.getI64Type(), phase)),
                  f64Const(b, l, step));
              Value cos = math::CosOp::create(b, l, angle);
              Value sin = math::SinOp::create(b, l, angle);
              Value re = extendTo(b, l, args[0], f64);
              Value im = complexInput ? extendTo(b, l, args[1], f64)
                                      : f64Const(b, l, 0.0);
              auto mul = [&](Value x, Value y) {
                return arith::MulFOp::create(b, l, x, y).getResult();
              };
              // (re + i im) * (cos -+ i sin): the forward transform turns by
              // -angle, the inverse by +angle.
              Value outRe, outIm;
              if (inverse) {
                outRe = arith::SubFOp::create(b, l, mul(re, cos), mul(im, sin));
                outIm = arith::AddFOp::create(b, l, mul(im, cos), mul(re, sin));
              } else {
                outRe = arith::AddFOp::create(b, l, mul(re, cos), mul(im, sin));
                outIm = arith::SubFOp::create(b, l, mul(im, cos), mul(re, sin));
              }
              Value term;
              if (realInverse) {
                // Bins 1 .. ceil(length/2)-1 stand for themselves and their
                // conjugate mirror (2 Re); bin 0 and, for even lengths, bin
                // length/2 appear once.
                Value zero = indexConst(b, l, 0);
                Value single = arith::OrIOp::create(
                    b, l,
                    arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, t,
                                          zero),
                    arith::CmpIOp::create(
                        b, l, arith::CmpIPredicate::eq,
                        arith::MulIOp::create(b, l, t, indexConst(b, l, 2)),
                        n));
                Value weight = arith::SelectOp::create(
                    b, l, single, f64Const(b, l, 1.0), f64Const(b, l, 2.0));
                term = mul(outRe, weight);
              } else {
                Value part = linalg::IndexOp::create(b, l, rank - 1);
                Value isRe = arith::CmpIOp::create(
                    b, l, arith::CmpIPredicate::eq, part, indexConst(b, l, 0));
                term = arith::SelectOp::create(b, l, isRe, outRe, outIm);
              }
              linalg::YieldOp::create(
                  b, l,
                  arith::AddFOp::create(b, l, args.back(), term).getResult());
            })
            .getResult(0);

    double scale = inverse ? 1.0 / static_cast<double>(length) : 1.0;
    Type element = resultType.getElementType();
    Value result = buildElementwise(
        rewriter, loc, resultType, sums,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value v = args[0];
          if (inverse)
            v = arith::MulFOp::create(b, l, v, f64Const(b, l, scale));
          return truncateTo(b, l, v, element);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Det
//===----------------------------------------------------------------------===//

/// LU decomposition with partial pivoting of each matrix, in place on an f64
/// copy of the input, as scf loops: the determinant is the product of the
/// pivots, negated per row swap. A zero pivot column gives 0.
struct DetLowering : OpConversionPattern<DetOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DetOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    RankedTensorType resultType = op.getType();
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs static shapes");
    int64_t rank = type.getRank();
    int64_t n = type.getShape().back();
    int64_t batch = resultType.getNumElements();
    Type f64 = rewriter.getF64Type();
    Type element = type.getElementType();

    // View the input as [batch, n, n].
    auto matricesType = RankedTensorType::get({batch, n, n}, element);
    SmallVector<ReassociationIndices> toMatrices;
    if (rank == 2) {
      toMatrices = {{0, 1}, {2}};
      input = tensor::ExpandShapeOp::create(rewriter, loc, matricesType, input,
                                            toMatrices);
    } else {
      ReassociationIndices batchDims;
      for (int64_t i = 0; i + 2 < rank; ++i)
        batchDims.push_back(i);
      toMatrices = {batchDims, {rank - 2}, {rank - 1}};
      input = tensor::CollapseShapeOp::create(rewriter, loc, matricesType,
                                              input, toMatrices);
    }
    Value work = buildElementwise(
        rewriter, loc, RankedTensorType::get({batch, n, n}, f64), input,
        [&](OpBuilder &b, Location l, ValueRange args) {
          return extendTo(b, l, args[0], f64);
        });
    Value dets =
        createEmpty(rewriter, loc, RankedTensorType::get({batch}, f64));

    Value c0 = indexConst(rewriter, loc, 0);
    Value c1 = indexConst(rewriter, loc, 1);
    Value cn = indexConst(rewriter, loc, n);
    auto perMatrix = scf::ForOp::create(
        rewriter, loc, c0, indexConst(rewriter, loc, batch), c1,
        ValueRange{work, dets},
        [&](OpBuilder &b, Location l, Value m, ValueRange outer) {
          auto get = [&](Value a, Value i, Value j) {
            return tensor::ExtractOp::create(b, l, a, ValueRange{m, i, j})
                .getResult();
          };
          auto perColumn = scf::ForOp::create(
              b, l, c0, cn, c1, ValueRange{outer[0], f64Const(b, l, 1.0)},
              [&](OpBuilder &b, Location l, Value k, ValueRange acc) {
                Value a = acc[0];
                // Pivot: the row at or below k with the largest magnitude.
                Value kp1 = arith::AddIOp::create(b, l, k, c1);
                auto search = scf::ForOp::create(
                    b, l, kp1, cn, c1,
                    ValueRange{math::AbsFOp::create(b, l, get(a, k, k)), k},
                    [&](OpBuilder &b, Location l, Value i, ValueRange best) {
                      Value v = math::AbsFOp::create(b, l, get(a, i, k));
                      Value better = arith::CmpFOp::create(
                          b, l, arith::CmpFPredicate::OGT, v, best[0]);
                      scf::YieldOp::create(
                          b, l,
                          ValueRange{
                              arith::SelectOp::create(b, l, better, v, best[0]),
                              arith::SelectOp::create(b, l, better, i,
                                                      best[1])});
                    });
                Value p = search.getResult(1);
                // Swap rows k and p (a no-op when p == k).
                auto swap = scf::ForOp::create(
                    b, l, c0, cn, c1, ValueRange{a},
                    [&](OpBuilder &b, Location l, Value j, ValueRange s) {
                      Value rowK = get(s[0], k, j), rowP = get(s[0], p, j);
                      Value t = tensor::InsertOp::create(b, l, rowP, s[0],
                                                         ValueRange{m, k, j});
                      t = tensor::InsertOp::create(b, l, rowK, t,
                                                   ValueRange{m, p, j});
                      scf::YieldOp::create(b, l, t);
                    });
                a = swap.getResult(0);
                Value swapped =
                    arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, p, k);
                Value pivot = get(a, k, k);
                Value det = arith::MulFOp::create(b, l, acc[1], pivot);
                det = arith::SelectOp::create(
                    b, l, swapped, arith::NegFOp::create(b, l, det), det);
                Value zero = f64Const(b, l, 0.0);
                Value singular = arith::CmpFOp::create(
                    b, l, arith::CmpFPredicate::OEQ, pivot, zero);
                // Eliminate column k below the pivot.
                auto rows = scf::ForOp::create(
                    b, l, kp1, cn, c1, ValueRange{a},
                    [&](OpBuilder &b, Location l, Value i, ValueRange r) {
                      Value factor = arith::SelectOp::create(
                          b, l, singular, zero,
                          arith::DivFOp::create(b, l, get(r[0], i, k), pivot));
                      auto cols = scf::ForOp::create(
                          b, l, kp1, cn, c1, ValueRange{r[0]},
                          [&](OpBuilder &b, Location l, Value j, ValueRange c) {
                            Value v = arith::SubFOp::create(
                                b, l, get(c[0], i, j),
                                arith::MulFOp::create(b, l, factor,
                                                      get(c[0], k, j)));
                            scf::YieldOp::create(
                                b, l,
                                tensor::InsertOp::create(b, l, v, c[0],
                                                         ValueRange{m, i, j})
                                    .getResult());
                          });
                      scf::YieldOp::create(b, l, cols.getResult(0));
                    });
                scf::YieldOp::create(b, l, ValueRange{rows.getResult(0), det});
              });
          Value out = tensor::InsertOp::create(b, l, perColumn.getResult(1),
                                               outer[1], ValueRange{m});
          scf::YieldOp::create(b, l, ValueRange{perColumn.getResult(0), out});
        });

    Value result = buildElementwise(
        rewriter, loc, RankedTensorType::get({batch}, element),
        perMatrix.getResult(1), [&](OpBuilder &b, Location l, ValueRange args) {
          return truncateTo(b, l, args[0], element);
        });
    if (rank == 2)
      result =
          tensor::CollapseShapeOp::create(rewriter, loc, resultType, result,
                                          SmallVector<ReassociationIndices>{});
    else if (rank > 3)
      result = tensor::ExpandShapeOp::create(rewriter, loc, resultType, result,
                                             ArrayRef(toMatrices).take_front());
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::ridge::linalg_lowering::populateSignalToLinalgPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<DFTLowering, DetLowering>(converter, patterns.getContext());
}
