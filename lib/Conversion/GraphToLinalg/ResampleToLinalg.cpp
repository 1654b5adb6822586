//===- ResampleToLinalg.cpp - Resize, GridSample, RoiAlign ----------------===//
//
// Lowering of the ridge resampling ops to linalg on tensors. Each is one
// linalg.generic over its output that gathers with tensor.extract. Resize
// computes, per resized dim, the source indices and weights of each output
// coordinate in the kernel body from linalg.index, in double precision as the
// ONNX reference does; nothing is tabulated per output index.
//
//===----------------------------------------------------------------------===//

#include "GraphToLinalgCommon.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::linalg_lowering;

namespace {

//===----------------------------------------------------------------------===//
// Resize
//===----------------------------------------------------------------------===//

/// Source taps of one output coordinate along one dim, built in the Resize
/// kernel body from the output index: the same double-precision arithmetic,
/// in the same order, as the ONNX reference, so that the result does not
/// depend on where it runs, and nothing is tabulated per output index (a dim
/// of 2^40 costs what a dim of 4 does).
struct ResizeTapBuilder {
  OpBuilder &b;
  Location loc;
  ResizeOp op;
  int64_t dim, in, out;

  struct Taps {
    SmallVector<Value> indices; // index
    SmallVector<Value> weights; // f64; empty for nearest
    Value valid;                // i1; null unless tf_crop_and_resize
  };

  Value f64(double v) {
    return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v));
  }
  Value i64(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  /// An i64 source index clamped to the dim, as an index.
  Value clampIndex(Value i) {
    Value clamped = arith::MaxSIOp::create(
        b, loc, arith::MinSIOp::create(b, loc, i, i64(in - 1)), i64(0));
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), clamped);
  }
  /// 0 where the i64 index `i` is outside the dim, `w` elsewhere.
  Value zeroOutside(Value i, Value w) {
    Value outside = arith::OrIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, i64(0)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, i, i64(in)));
    return select(outside, f64(0), w);
  }
  /// Divides each weight by their sum unless it is 0.
  void normalize(SmallVectorImpl<Value> &weights) {
    Value total = weights.front();
    for (Value w : ArrayRef<Value>(weights).drop_front())
      total = add(total, w);
    Value nonzero = cmp(arith::CmpFPredicate::UNE, total, f64(0));
    for (Value &w : weights)
      w = select(nonzero, div(w, total), w);
  }

  /// The source coordinate of output index `o` (f64).
  Value sourceCoordinate(Value o) {
    double scale = op.getScales()[dim];
    StringRef coord = op.getCoordinateTransformationMode();
    // As in the ONNX reference, align_corners and tf_crop_and_resize divide
    // by the unrounded resized length scale * in (equal to `out` for sizes).
    double resized = scale * static_cast<double>(in);
    auto halfPixel = [&] {
      return sub(div(add(o, f64(0.5)), f64(scale)), f64(0.5));
    };
    if (coord == "half_pixel")
      return halfPixel();
    if (coord == "half_pixel_symmetric") {
      // Centers the resized image on the input when out was rounded down
      // from scale * in.
      double adjustment = static_cast<double>(out) / resized;
      double offset = 0.5 * static_cast<double>(in) * (1 - adjustment);
      return sub(add(f64(offset), div(add(o, f64(0.5)), f64(scale))), f64(0.5));
    }
    if (coord == "pytorch_half_pixel")
      return out > 1 ? halfPixel() : f64(0);
    if (coord == "align_corners")
      return resized == 1 ? f64(0)
                          : div(mul(o, f64(static_cast<double>(in - 1))),
                                f64(resized - 1));
    if (coord == "asymmetric")
      return div(o, f64(scale));
    if (coord == "tf_half_pixel_for_nn")
      return div(add(o, f64(0.5)), f64(scale));
    // tf_crop_and_resize
    ArrayRef<double> roi = *op.getRoi();
    int64_t rank = op.getScales().size();
    double start = roi[dim], end = roi[dim + rank];
    double last = static_cast<double>(in - 1);
    if (resized == 1)
      return f64(0.5 * (start + end) * last);
    return add(f64(start * last),
               div(mul(mul(o, f64(end - start)), f64(last)), f64(resized - 1)));
  }

  /// The taps of the output index `index` (an index value).
  Taps build(Value index) {
    double scale = op.getScales()[dim];
    Value o = arith::SIToFPOp::create(
        b, loc, b.getF64Type(),
        arith::IndexCastOp::create(b, loc, b.getI64Type(), index));
    Value x = sourceCoordinate(o);
    Taps taps;
    if (op.getCoordinateTransformationMode() == "tf_crop_and_resize")
      taps.valid = arith::AndIOp::create(
          b, loc, cmp(arith::CmpFPredicate::OGE, x, f64(0)),
          cmp(arith::CmpFPredicate::OLE, x, f64(static_cast<double>(in - 1))));
    Value base = math::FloorOp::create(b, loc, x);
    Value ratio = sub(x, base);
    Value x0 = arith::FPToSIOp::create(b, loc, b.getI64Type(), base);
    auto plus = [&](Value i, int64_t k) {
      return arith::AddIOp::create(b, loc, i, i64(k));
    };
    StringRef mode = op.getMode();
    if (mode == "nearest") {
      StringRef rounding = op.getNearestMode();
      Value up;
      if (rounding == "round_prefer_floor")
        up = cmp(arith::CmpFPredicate::OGT, ratio, f64(0.5));
      else if (rounding == "round_prefer_ceil")
        up = cmp(arith::CmpFPredicate::OGE, ratio, f64(0.5));
      else if (rounding == "ceil")
        up = cmp(arith::CmpFPredicate::ONE, ratio, f64(0));
      taps.indices.push_back(clampIndex(up ? select(up, plus(x0, 1), x0) : x0));
      return taps;
    }
    double a = op.getCubicCoeffA().convertToDouble();
    // Keys' cubic convolution kernel, |t| <= 1 and 1 < |t| < 2.
    auto near = [&](Value t) {
      return add(mul(mul(sub(mul(f64(a + 2), t), f64(a + 3)), t), t), f64(1));
    };
    auto far = [&](Value t) {
      return sub(
          mul(add(mul(sub(mul(f64(a), t), f64(5 * a)), t), f64(8 * a)), t),
          f64(4 * a));
    };
    bool linear = mode == "linear";
    if (op.getAntialias() && scale < 1) {
      // ONNX's antialiasing filters: the linear (triangle) or cubic kernel
      // stretched by 1 / scale, taps x0 + i for i in [start, 2 - start),
      // normalized to sum 1. As in the reference, an integral x counts as
      // x0 = x - 1 with ratio 1.
      Value integral = cmp(arith::CmpFPredicate::OEQ, ratio, f64(0));
      x0 = select(integral, plus(x0, -1), x0);
      ratio = select(integral, f64(1), ratio);
      int64_t start = ResizeOp::getFirstAntialiasTap(linear, scale);
      for (int64_t i = start; i < 2 - start; ++i) {
        Value t = math::AbsFOp::create(
            b, loc, mul(f64(scale), sub(f64(static_cast<double>(i)), ratio)));
        Value w;
        if (linear) {
          w = arith::MaximumFOp::create(b, loc, f64(0), sub(f64(1), t));
        } else {
          w = select(cmp(arith::CmpFPredicate::OLE, t, f64(1)), near(t),
                     select(cmp(arith::CmpFPredicate::OLT, t, f64(2)), far(t),
                            f64(0)));
        }
        Value source = plus(x0, i);
        if (op.getExcludeOutside())
          w = zeroOutside(source, w);
        taps.weights.push_back(w);
        taps.indices.push_back(clampIndex(source));
      }
      normalize(taps.weights);
      return taps;
    }
    if (linear) {
      taps.indices = {clampIndex(x0), clampIndex(plus(x0, 1))};
      taps.weights = {sub(f64(1), ratio), ratio};
      return taps;
    }
    // Cubic convolution over x0 - 1 .. x0 + 2.
    taps.weights = {far(add(ratio, f64(1))), near(ratio),
                    near(sub(f64(1), ratio)), far(sub(f64(2), ratio))};
    for (int64_t t = 0; t < 4; ++t) {
      Value source = plus(x0, t - 1);
      if (op.getExcludeOutside())
        taps.weights[t] = zeroOutside(source, taps.weights[t]);
      taps.indices.push_back(clampIndex(source));
    }
    if (op.getExcludeOutside())
      normalize(taps.weights);
    return taps;
  }
};

/// Whether the taps of `dim` are the identity: every output index reads its
/// own input index with weight 1. With scale 1 every coordinate mode but the
/// two below maps o to exactly o, and each mode's weights are then 1 on it.
bool isIdentityResize(ResizeOp op, int64_t dim, int64_t in, int64_t out) {
  StringRef coord = op.getCoordinateTransformationMode();
  return in == out && op.getScales()[dim] == 1.0 &&
         coord != "tf_half_pixel_for_nn" && coord != "tf_crop_and_resize";
}

struct ResizeLowering : OpConversionPattern<ResizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ResizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    auto resultType =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    Value input = adaptor.getInput();
    auto inType = getTensorType(input);
    int64_t rank = inType.getRank();
    Type element = inType.getElementType();
    bool nearest = op.getMode() == "nearest";
    Type compute = element.isF64() ? element : b.getF32Type();
    // Dims whose taps are the identity are read with linalg.index directly.
    SmallVector<int64_t> resized;
    for (int64_t d = 0; d < rank; ++d)
      if (!isIdentityResize(op, d, inType.getDimSize(d),
                            resultType.getDimSize(d)))
        resized.push_back(d);
    double extrapolation = op.getExtrapolationValue().convertToDouble();

    Value result =
        linalg::GenericOp::create(
            b, loc, resultType, ValueRange(), createEmpty(b, loc, resultType),
            b.getMultiDimIdentityMap(rank),
            SmallVector<utils::IteratorType>(rank,
                                             utils::IteratorType::parallel),
            [&](OpBuilder &nb, Location nloc, ValueRange) {
              SmallVector<Value> position;
              for (int64_t d = 0; d < rank; ++d)
                position.push_back(linalg::IndexOp::create(nb, nloc, d));
              SmallVector<ResizeTapBuilder::Taps> taps;
              Value valid;
              for (int64_t d : resized) {
                ResizeTapBuilder builder{nb,
                                         nloc,
                                         op,
                                         d,
                                         inType.getDimSize(d),
                                         resultType.getDimSize(d)};
                taps.push_back(builder.build(position[d]));
                // The weights, as the tables held them, in the compute type.
                for (Value &w : taps.back().weights)
                  w = truncateTo(nb, nloc, w, compute);
                if (Value ok = taps.back().valid)
                  valid =
                      valid ? arith::AndIOp::create(nb, nloc, valid, ok) : ok;
              }
              // Sum over the cartesian product of the taps (antialiased
              // dims may have more taps than others).
              size_t combos = 1;
              for (const ResizeTapBuilder::Taps &t : taps)
                combos *= t.indices.size();
              Value sum;
              for (size_t c = 0; c < combos; ++c) {
                size_t rest = c;
                Value weight;
                for (auto [t, d] : llvm::enumerate(resized)) {
                  size_t k = rest % taps[t].indices.size();
                  rest /= taps[t].indices.size();
                  position[d] = taps[t].indices[k];
                  if (!nearest)
                    weight = weight ? arith::MulFOp::create(nb, nloc, weight,
                                                            taps[t].weights[k])
                                    : taps[t].weights[k];
                }
                Value v = tensor::ExtractOp::create(nb, nloc, input, position);
                if (nearest) {
                  sum = v;
                  break;
                }
                v = arith::MulFOp::create(
                    nb, nloc, extendTo(nb, nloc, v, compute), weight);
                sum = sum ? arith::AddFOp::create(nb, nloc, sum, v) : v;
              }
              if (!nearest)
                sum = truncateTo(nb, nloc, sum, element);
              if (valid) {
                Value fill = arith::ConstantOp::create(
                    nb, nloc,
                    isa<FloatType>(element)
                        ? TypedAttr(nb.getFloatAttr(element, extrapolation))
                        : TypedAttr(nb.getIntegerAttr(
                              element, static_cast<int64_t>(extrapolation))));
                sum = arith::SelectOp::create(nb, nloc, valid, sum, fill);
              }
              linalg::YieldOp::create(nb, nloc, sum);
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// GridSample
//===----------------------------------------------------------------------===//

/// Scalar helpers for GridSample's body, in the float type `ft`.
struct GridSampler {
  OpBuilder &b;
  Location loc;
  Type ft;
  GridSampleOp op;
  Value input, n, c;

  Value cst(double v) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(ft, v));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value clip(Value v, int64_t size) {
    return arith::MinimumFOp::create(
        b, loc, arith::MaximumFOp::create(b, loc, v, cst(0)), cst(size - 1));
  }

  /// [-1, 1] to pixel coordinates.
  Value unnormalize(Value g, int64_t size) {
    if (op.getAlignCorners())
      return mul(add(g, cst(1)), cst(0.5 * (size - 1)));
    return mul(sub(mul(add(g, cst(1)), cst(size)), cst(1)), cst(0.5));
  }

  /// Reflects `v` into [low, high] (given doubled, as PyTorch does).
  Value reflect(Value v, int64_t twiceLow, int64_t twiceHigh) {
    if (twiceLow == twiceHigh)
      return cst(0);
    double low = twiceLow / 2.0, span = (twiceHigh - twiceLow) / 2.0;
    Value d = math::AbsFOp::create(b, loc, sub(v, cst(low)));
    Value extra = arith::RemFOp::create(b, loc, d, cst(span));
    Value flips = math::FloorOp::create(
        b, loc, arith::DivFOp::create(b, loc, d, cst(span)));
    Value even = arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OEQ,
        arith::RemFOp::create(b, loc, flips, cst(2)), cst(0));
    return arith::SelectOp::create(b, loc, even, add(extra, cst(low)),
                                   add(sub(cst(span), extra), cst(low)));
  }

  /// Applies the padding mode to a pixel coordinate.
  Value applyPadding(Value v, int64_t size) {
    StringRef padding = op.getPaddingMode();
    if (padding == "border")
      return clip(v, size);
    if (padding == "reflection") {
      v = op.getAlignCorners() ? reflect(v, 0, 2 * (size - 1))
                               : reflect(v, -1, 2 * size - 1);
      return clip(v, size);
    }
    return v;
  }

  /// input[n, c, coords...] for integral float coordinates (slowest spatial
  /// dim first); 0 outside.
  Value sample(ArrayRef<Value> coords, ArrayRef<int64_t> sizes) {
    SmallVector<Value> indices{n, c};
    Value ok;
    for (auto [v, size] : llvm::zip(coords, sizes)) {
      Value lo =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, v, cst(0));
      Value hi = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, v,
                                       cst(size - 1));
      Value inside = arith::AndIOp::create(b, loc, lo, hi);
      ok = ok ? arith::AndIOp::create(b, loc, ok, inside) : inside;
      Value i = arith::FPToSIOp::create(b, loc, b.getI64Type(), clip(v, size));
      indices.push_back(
          arith::IndexCastOp::create(b, loc, b.getIndexType(), i));
    }
    Value v = tensor::ExtractOp::create(b, loc, input, indices);
    v = extendTo(b, loc, v, ft);
    return arith::SelectOp::create(b, loc, ok, v, cst(0));
  }
  Value sample(Value x, Value y, int64_t height, int64_t width) {
    return sample({y, x}, {height, width});
  }

  /// PyTorch's cubic convolution weights for fraction `t`, A = -0.75.
  SmallVector<Value> cubicWeights(Value t) {
    double a = -0.75;
    auto near = [&](Value x) {
      return add(mul(mul(sub(mul(cst(a + 2), x), cst(a + 3)), x), x), cst(1));
    };
    auto far = [&](Value x) {
      Value inner = add(mul(sub(mul(cst(a), x), cst(5 * a)), x), cst(8 * a));
      return sub(mul(inner, x), cst(4 * a));
    };
    return {far(add(t, cst(1))), near(t), near(sub(cst(1), t)),
            far(sub(cst(2), t))};
  }
};

struct GridSampleLowering : OpConversionPattern<GridSampleOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GridSampleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    auto resultType =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    Value input = adaptor.getInput();
    auto inType = getTensorType(input);
    int64_t rank = inType.getRank(), spatial = rank - 2;
    // Spatial sizes, slowest first; 2-d names for the bicubic path.
    SmallVector<int64_t> sizes(inType.getShape().drop_front(2));
    int64_t height = sizes[spatial - 2], width = sizes[spatial - 1];
    Type element = resultType.getElementType();
    Type ft = element.isF64() ? element : rewriter.getF32Type();
    StringRef mode = op.getMode();
    auto dim = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    // Grid component i (x first) addresses spatial dim spatial - 1 - i.
    auto gridMap = [&](int64_t component) {
      SmallVector<AffineExpr> exprs{dim(0)};
      for (int64_t d = 0; d < spatial; ++d)
        exprs.push_back(dim(2 + d));
      exprs.push_back(getAffineConstantExpr(component, ctx));
      return AffineMap::get(rank, 0, exprs, ctx);
    };
    Value grid = adaptor.getGrid();
    SmallVector<Value> gridInputs(spatial, grid);
    SmallVector<AffineMap> maps;
    for (int64_t i = 0; i < spatial; ++i)
      maps.push_back(gridMap(i));
    maps.push_back(rewriter.getMultiDimIdentityMap(rank));
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, resultType, gridInputs,
            createEmpty(rewriter, loc, resultType), maps,
            SmallVector<utils::IteratorType>(rank,
                                             utils::IteratorType::parallel),
            [&](OpBuilder &b, Location l, ValueRange args) {
              GridSampler s{b,
                            l,
                            ft,
                            op,
                            input,
                            linalg::IndexOp::create(b, l, 0),
                            linalg::IndexOp::create(b, l, 1)};
              // Pixel coordinates, slowest spatial dim first.
              SmallVector<Value> coords;
              for (int64_t d = 0; d < spatial; ++d)
                coords.push_back(s.unnormalize(
                    extendTo(b, l, args[spatial - 1 - d], ft), sizes[d]));
              Value x = coords[spatial - 1], y = coords[spatial - 2];
              Value v;
              if (mode == "nearest") {
                for (int64_t d = 0; d < spatial; ++d)
                  coords[d] = math::RoundEvenOp::create(
                      b, l, s.applyPadding(coords[d], sizes[d]));
                v = s.sample(coords, sizes);
              } else if (mode == "bilinear") {
                // n-linear: 2^spatial corners weighted by the fractions.
                SmallVector<Value> low, frac;
                for (int64_t d = 0; d < spatial; ++d) {
                  Value p = s.applyPadding(coords[d], sizes[d]);
                  low.push_back(math::FloorOp::create(b, l, p));
                  frac.push_back(s.sub(p, low.back()));
                }
                for (int64_t corner = 0; corner < (1 << spatial); ++corner) {
                  SmallVector<Value> at;
                  Value weight;
                  for (int64_t d = 0; d < spatial; ++d) {
                    bool high = (corner >> d) & 1;
                    at.push_back(high ? s.add(low[d], s.cst(1)) : low[d]);
                    Value w = high ? frac[d] : s.sub(s.cst(1), frac[d]);
                    weight = weight ? s.mul(weight, w) : w;
                  }
                  Value term = s.mul(s.sample(at, sizes), weight);
                  v = v ? s.add(v, term) : term;
                }
              } else {
                // Bicubic: the padding mode applies to each tap.
                Value x0 = math::FloorOp::create(b, l, x);
                Value y0 = math::FloorOp::create(b, l, y);
                SmallVector<Value> wx = s.cubicWeights(s.sub(x, x0));
                SmallVector<Value> wy = s.cubicWeights(s.sub(y, y0));
                for (int64_t i = 0; i < 4; ++i) {
                  Value row;
                  Value ty = s.applyPadding(s.add(y0, s.cst(i - 1)), height);
                  for (int64_t j = 0; j < 4; ++j) {
                    Value tx = s.applyPadding(s.add(x0, s.cst(j - 1)), width);
                    Value term = s.mul(s.sample(tx, ty, height, width), wx[j]);
                    row = row ? s.add(row, term) : term;
                  }
                  Value term = s.mul(row, wy[i]);
                  v = v ? s.add(v, term) : term;
                }
              }
              linalg::YieldOp::create(b, l, truncateTo(b, l, v, element));
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// RoiAlign
//===----------------------------------------------------------------------===//

/// One generic over (roi, channel, bin y, bin x, sample y, sample x); the
/// region corners and batch index are read per roi with tensor.extract, and
/// every sample interpolates bilinearly as ONNX Runtime's RoiAlign does
/// (samples beyond one pixel outside the image contribute 0).
struct RoiAlignLowering : OpConversionPattern<RoiAlignOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RoiAlignOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    auto resultType =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    Value input = adaptor.getInput(), rois = adaptor.getRois(),
          batchIndices = adaptor.getBatchIndices();
    auto inType = getTensorType(input);
    int64_t batch = inType.getDimSize(0), height = inType.getDimSize(2),
            width = inType.getDimSize(3);
    Type element = resultType.getElementType();
    Type ft = element.isF64() ? element : rewriter.getF32Type();
    bool isMax = op.getMode() == "max";
    int64_t grid = op.getSamplingRatio();
    int64_t binsY = op.getOutputHeight(), binsX = op.getOutputWidth();
    double scale = op.getSpatialScale().convertToDouble();
    bool halfPixel = op.getHalfPixel();
    bool indexUnsigned = getElementTypeOrSelf(op.getBatchIndices().getType())
                             .isUnsignedInteger();

    auto accType = RankedTensorType::get(resultType.getShape(), ft);
    auto ftFloat = cast<FloatType>(ft);
    Value init = createFilled(
        rewriter, loc, accType,
        isMax ? rewriter.getFloatAttr(
                    ft, APFloat::getInf(ftFloat.getFloatSemantics(), true))
              : rewriter.getFloatAttr(ft, 0.0));
    Value window = tensor::EmptyOp::create(rewriter, loc,
                                           ArrayRef<int64_t>{grid, grid}, ft);
    auto dim = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    SmallVector<AffineMap> maps{
        AffineMap::get(6, 0, {dim(4), dim(5)}, ctx),
        AffineMap::get(6, 0, {dim(0), dim(1), dim(2), dim(3)}, ctx)};
    SmallVector<utils::IteratorType> iterators(4,
                                               utils::IteratorType::parallel);
    iterators.append(2, utils::IteratorType::reduction);
    Value reduced =
        linalg::GenericOp::create(
            rewriter, loc, accType, window, init, maps, iterators,
            [&](OpBuilder &b, Location l, ValueRange args) {
              auto cst = [&](double v) -> Value {
                return arith::ConstantOp::create(b, l, b.getFloatAttr(ft, v));
              };
              auto icst = [&](int64_t v) -> Value {
                return arith::ConstantIndexOp::create(b, l, v);
              };
              auto add = [&](Value x, Value y) -> Value {
                return arith::AddFOp::create(b, l, x, y);
              };
              auto sub = [&](Value x, Value y) -> Value {
                return arith::SubFOp::create(b, l, x, y);
              };
              auto mul = [&](Value x, Value y) -> Value {
                return arith::MulFOp::create(b, l, x, y);
              };
              auto toFloat = [&](Value index) -> Value {
                Value i =
                    arith::IndexCastOp::create(b, l, b.getI64Type(), index);
                return arith::SIToFPOp::create(b, l, ft, i);
              };
              auto toIndex = [&](Value v) -> Value {
                Value i = arith::FPToSIOp::create(b, l, b.getI64Type(), v);
                return arith::IndexCastOp::create(b, l, b.getIndexType(), i);
              };
              Value r = linalg::IndexOp::create(b, l, 0);
              Value c = linalg::IndexOp::create(b, l, 1);
              auto corner = [&](int64_t k) {
                Value v = tensor::ExtractOp::create(b, l, rois,
                                                    ValueRange{r, icst(k)});
                v = extendTo(b, l, v, ft);
                return sub(mul(v, cst(scale)), cst(halfPixel ? 0.5 : 0.0));
              };
              Value startX = corner(0), startY = corner(1);
              Value sizeX = sub(corner(2), startX);
              Value sizeY = sub(corner(3), startY);
              if (!halfPixel) {
                sizeX = arith::MaximumFOp::create(b, l, sizeX, cst(1));
                sizeY = arith::MaximumFOp::create(b, l, sizeY, cst(1));
              }
              Value binY = arith::DivFOp::create(b, l, sizeY, cst(binsY));
              Value binX = arith::DivFOp::create(b, l, sizeX, cst(binsX));
              auto samplePos = [&](Value start, Value bin, int64_t binDim,
                                   int64_t sampleDim) {
                Value binIndex = toFloat(linalg::IndexOp::create(b, l, binDim));
                Value sample =
                    add(toFloat(linalg::IndexOp::create(b, l, sampleDim)),
                        cst(0.5));
                return add(
                    add(start, mul(binIndex, bin)),
                    arith::DivFOp::create(b, l, mul(sample, bin), cst(grid)));
              };
              Value y = samplePos(startY, binY, 2, 4);
              Value x = samplePos(startX, binX, 3, 5);
              Value outside = arith::OrIOp::create(
                  b, l,
                  arith::OrIOp::create(
                      b, l,
                      arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, y,
                                            cst(-1)),
                      arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, y,
                                            cst(height))),
                  arith::OrIOp::create(
                      b, l,
                      arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x,
                                            cst(-1)),
                      arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x,
                                            cst(width))));
              // Low/high neighbours, clamped to the last row/column.
              auto neighbours = [&](Value v, int64_t size) {
                v = arith::MaximumFOp::create(b, l, v, cst(0));
                Value low = math::FloorOp::create(b, l, v);
                Value atEnd = arith::CmpFOp::create(
                    b, l, arith::CmpFPredicate::OGE, low, cst(size - 1));
                Value last = cst(size - 1);
                low = arith::SelectOp::create(b, l, atEnd, last, low);
                Value high = arith::SelectOp::create(b, l, atEnd, last,
                                                     add(low, cst(1)));
                v = arith::SelectOp::create(b, l, atEnd, last, v);
                Value frac = sub(v, low);
                return std::make_tuple(toIndex(low), toIndex(high), frac,
                                       sub(cst(1), frac));
              };
              auto [yLow, yHigh, ly, hy] = neighbours(y, height);
              auto [xLow, xHigh, lx, hx] = neighbours(x, width);
              Value n = tensor::ExtractOp::create(b, l, batchIndices, r);
              n = indexUnsigned
                      ? arith::IndexCastUIOp::create(b, l, b.getIndexType(), n)
                            .getResult()
                      : arith::IndexCastOp::create(b, l, b.getIndexType(), n)
                            .getResult();
              n = arith::MaxSIOp::create(
                  b, l, arith::MinSIOp::create(b, l, n, icst(batch - 1)),
                  icst(0));
              auto at = [&](Value yi, Value xi) {
                Value v = tensor::ExtractOp::create(b, l, input,
                                                    ValueRange{n, c, yi, xi});
                return extendTo(b, l, v, ft);
              };
              Value t1 = mul(mul(hy, hx), at(yLow, xLow));
              Value t2 = mul(mul(hy, lx), at(yLow, xHigh));
              Value t3 = mul(mul(ly, hx), at(yHigh, xLow));
              Value t4 = mul(mul(ly, lx), at(yHigh, xHigh));
              Value v;
              if (isMax)
                v = arith::MaximumFOp::create(
                    b, l, arith::MaximumFOp::create(b, l, t1, t2),
                    arith::MaximumFOp::create(b, l, t3, t4));
              else
                v = add(add(t1, t2), add(t3, t4));
              v = arith::SelectOp::create(b, l, outside, cst(0), v);
              Value next =
                  isMax
                      ? arith::MaximumFOp::create(b, l, args[1], v).getResult()
                      : add(args[1], v);
              linalg::YieldOp::create(b, l, next);
            })
            .getResult(0);
    Value result = buildElementwise(
        rewriter, loc, resultType, reduced,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value v = args[0];
          if (!isMax)
            v = arith::DivFOp::create(
                b, l, v,
                arith::ConstantOp::create(
                    b, l, b.getFloatAttr(ft, double(grid * grid))));
          return truncateTo(b, l, v, element);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::ridge::linalg_lowering::populateResampleToLinalgPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ResizeLowering, GridSampleLowering, RoiAlignLowering>(
      converter, patterns.getContext());
}
