//===- RecurrentToLinalg.cpp - recurrent networks (RNN, LSTM, GRU) -------===//
//
// Lowering of the ridge recurrent networks (RNN, LSTM, GRU) to linalg on
// tensors.
//
// Per direction, the input projection X * W^T + Wb of all steps is one
// contraction ahead of the loop; an scf.for over the steps then carries the
// result Y and the hidden (and cell) state as tensor iter_args. Each step is
// a contraction H * R^T + Rb and one elementwise generic for the gate math
// that also writes the step's row of Y. Sequence lengths are runtime values:
// a step at or beyond an entry's length keeps its state and writes zeros.
//
//===----------------------------------------------------------------------===//

#include "GraphToLinalgCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::linalg_lowering;

namespace {

Value floatConstant(OpBuilder &b, Location loc, Type type, double value) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
}

/// ONNX RNN activation `name` with parameters `alpha`, `beta` applied to `x`.
Value applyActivation(OpBuilder &b, Location loc, StringRef name, float alpha,
                      float beta, Value x) {
  Type t = x.getType();
  auto cst = [&](double value) { return floatConstant(b, loc, t, value); };
  Value zero = cst(0.0), one = cst(1.0);
  auto a = [&]() { return cst(alpha); };
  auto bt = [&]() { return cst(beta); };
  auto isNegative = [&]() {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
  };
  if (name == "sigmoid") {
    Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
    return arith::DivFOp::create(b, loc, one,
                                 arith::AddFOp::create(b, loc, one, e));
  }
  if (name == "tanh")
    return math::TanhOp::create(b, loc, x);
  if (name == "relu")
    return arith::MaximumFOp::create(b, loc, x, zero);
  if (name == "affine")
    return arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, a(), x),
                                 bt());
  if (name == "hardsigmoid") {
    Value v = arith::AddFOp::create(
        b, loc, arith::MulFOp::create(b, loc, a(), x), bt());
    return arith::MinimumFOp::create(
        b, loc, arith::MaximumFOp::create(b, loc, v, zero), one);
  }
  if (name == "leakyrelu")
    return arith::SelectOp::create(b, loc, isNegative(),
                                   arith::MulFOp::create(b, loc, a(), x), x);
  if (name == "thresholdedrelu") {
    Value above =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, a());
    return arith::SelectOp::create(b, loc, above, x, zero);
  }
  if (name == "scaledtanh")
    return arith::MulFOp::create(
        b, loc, a(),
        math::TanhOp::create(b, loc, arith::MulFOp::create(b, loc, bt(), x)));
  if (name == "elu") {
    Value em1 =
        arith::SubFOp::create(b, loc, math::ExpOp::create(b, loc, x), one);
    return arith::SelectOp::create(b, loc, isNegative(),
                                   arith::MulFOp::create(b, loc, a(), em1), x);
  }
  if (name == "softsign")
    return arith::DivFOp::create(
        b, loc, x,
        arith::AddFOp::create(b, loc, one, math::AbsFOp::create(b, loc, x)));
  // softplus, stable for large |x|: max(x, 0) + log1p(exp(-|x|)).
  Value negAbs = arith::NegFOp::create(b, loc, math::AbsFOp::create(b, loc, x));
  return arith::AddFOp::create(
      b, loc, arith::MaximumFOp::create(b, loc, x, zero),
      math::Log1pOp::create(b, loc, math::ExpOp::create(b, loc, negAbs)));
}

SmallVector<OpFoldResult> indexAttrs(OpBuilder &b, ArrayRef<int64_t> values) {
  SmallVector<OpFoldResult> result;
  for (int64_t v : values)
    result.push_back(b.getIndexAttr(v));
  return result;
}

/// The static slice of `source` at `offsets` with `sizes`, dropping the
/// leading unit dims so that the result has `resultShape`.
Value staticSlice(OpBuilder &b, Location loc, Value source,
                  ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
                  ArrayRef<int64_t> resultShape) {
  auto type = cast<RankedTensorType>(source.getType());
  SmallVector<int64_t> strides(sizes.size(), 1);
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(resultShape, type.getElementType()), source,
      indexAttrs(b, offsets), indexAttrs(b, sizes), indexAttrs(b, strides));
}

/// `bias` [N] (or zeros when null) broadcast to `shape` (last dim N).
Value broadcastBias(OpBuilder &b, Location loc, Value bias,
                    ArrayRef<int64_t> shape, Type element) {
  auto type = RankedTensorType::get(shape, element);
  if (!bias)
    return createFilled(b, loc, type, b.getFloatAttr(element, 0.0));
  int64_t rank = shape.size();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps{
      AffineMap::get(rank, 0, {getAffineDimExpr(rank - 1, ctx)}, ctx),
      b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type, bias, createEmpty(b, loc, type), maps, iterators,
             [](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(nb, nloc, args[0]);
             })
      .getResult(0);
}

/// init + lhs * weight^T, with lhs [..., K], weight [N, K], init [..., N].
Value matmulTransposed(OpBuilder &b, Location loc, Value lhs, Value weight,
                       Value init) {
  auto initType = cast<RankedTensorType>(init.getType());
  int64_t rank = initType.getRank(); // parallel dims; one reduction dim more
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> lhsExprs, outExprs;
  for (int64_t i = 0; i < rank - 1; ++i)
    lhsExprs.push_back(getAffineDimExpr(i, ctx));
  lhsExprs.push_back(getAffineDimExpr(rank, ctx));
  for (int64_t i = 0; i < rank; ++i)
    outExprs.push_back(getAffineDimExpr(i, ctx));
  SmallVector<AffineMap> maps{AffineMap::get(rank + 1, 0, lhsExprs, ctx),
                              AffineMap::get(rank + 1, 0,
                                             {getAffineDimExpr(rank - 1, ctx),
                                              getAffineDimExpr(rank, ctx)},
                                             ctx),
                              AffineMap::get(rank + 1, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  return linalg::GenericOp::create(
             b, loc, initType, ValueRange{lhs, weight}, init, maps, iterators,
             [](OpBuilder &nb, Location nloc, ValueRange args) {
               Value product =
                   arith::MulFOp::create(nb, nloc, args[0], args[1]);
               linalg::YieldOp::create(nb, nloc,
                                       ValueRange{arith::AddFOp::create(
                                           nb, nloc, args[2], product)});
             })
      .getResult(0);
}

/// `v` converted elementwise to the float type `element` (null stays null).
Value convertTensor(OpBuilder &b, Location loc, Value v, Type element) {
  if (!v)
    return v;
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getElementType() == element)
    return v;
  bool widen = element.getIntOrFloatBitWidth() >
               type.getElementType().getIntOrFloatBitWidth();
  return buildElementwise(b, loc, type.clone(element), v,
                          [&](OpBuilder &nb, Location nloc, ValueRange args) {
                            return widen
                                       ? extendTo(nb, nloc, args[0], element)
                                       : truncateTo(nb, nloc, args[0], element);
                          });
}

/// The [2, batch, hidden] state of direction `d` at the first step: slot 0
/// from `initH`, slot 1 from `initC` ([dirs, batch, hidden] each; zeros when
/// null).
Value buildInitialState(OpBuilder &b, Location loc, Value initH, Value initC,
                        int64_t d, RankedTensorType type) {
  Type ct = type.getElementType();
  if (!initH && !initC)
    return createFilled(b, loc, type, b.getFloatAttr(ct, 0.0));
  MLIRContext *ctx = b.getContext();
  AffineMap read =
      AffineMap::get(3, 0,
                     {getAffineConstantExpr(d, ctx), getAffineDimExpr(1, ctx),
                      getAffineDimExpr(2, ctx)},
                     ctx);
  SmallVector<Value> inputs;
  for (Value v : {initH, initC})
    if (v)
      inputs.push_back(v);
  SmallVector<AffineMap> maps(inputs.size(), read);
  maps.push_back(b.getMultiDimIdentityMap(3));
  SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type, inputs, createEmpty(b, loc, type), maps, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value zero = floatConstant(nb, nl, ct, 0.0);
               Value h = initH ? args[0] : zero;
               Value c = initC ? args[initH ? 1 : 0] : zero;
               Value slot = linalg::IndexOp::create(nb, nl, 0);
               Value isH = arith::CmpIOp::create(
                   nb, nl, arith::CmpIPredicate::eq, slot,
                   arith::ConstantIndexOp::create(nb, nl, 0));
               linalg::YieldOp::create(
                   nb, nl,
                   ValueRange{arith::SelectOp::create(nb, nl, isH, h, c)});
             })
      .getResult(0);
}

/// Slot `slot` of every direction's final [2, batch, hidden] state, stacked
/// into `type` ([dirs, batch, hidden] of the result element type).
Value gatherFinalStates(OpBuilder &b, Location loc, ArrayRef<Value> states,
                        int64_t slot, RankedTensorType type) {
  MLIRContext *ctx = b.getContext();
  AffineMap read =
      AffineMap::get(3, 0,
                     {getAffineConstantExpr(slot, ctx),
                      getAffineDimExpr(1, ctx), getAffineDimExpr(2, ctx)},
                     ctx);
  SmallVector<AffineMap> maps(states.size(), read);
  maps.push_back(b.getMultiDimIdentityMap(3));
  SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
  Type element = type.getElementType();
  return linalg::GenericOp::create(
             b, loc, type, states, createEmpty(b, loc, type), maps, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value v = args[0];
               if (states.size() == 2) {
                 Value dir = linalg::IndexOp::create(nb, nl, 0);
                 Value first = arith::CmpIOp::create(
                     nb, nl, arith::CmpIPredicate::eq, dir,
                     arith::ConstantIndexOp::create(nb, nl, 0));
                 v = arith::SelectOp::create(nb, nl, first, args[0], args[1]);
               }
               linalg::YieldOp::create(
                   nb, nl, ValueRange{truncateTo(nb, nl, v, element)});
             })
      .getResult(0);
}

struct RecurrentLowering : OpConversionPattern<RecurrentOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(RecurrentOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto xType = cast<RankedTensorType>(adaptor.getX().getType());
    Type element = xType.getElementType();
    Type ct = getAccumulatorType(element);
    int64_t seq = xType.getDimSize(0), batch = xType.getDimSize(1),
            inputSize = xType.getDimSize(2);
    int64_t hidden = op.getHiddenSize(), gates = op.getNumGates(),
            dirs = op.getNumDirections();
    int64_t gateWidth = gates * hidden;
    StringRef cell = op.getCell();
    bool isLstm = cell == "lstm", isGru = cell == "gru";
    // GRU without linear_before_reset applies the reset gate to H before
    // the recurrence matmul of the h gate.
    bool resetIntoState = isGru && !op.getLinearBeforeReset();
    int64_t actsPerDir = isLstm ? 3 : isGru ? 2 : 1;
    std::optional<float> clip;
    if (FloatAttr clipAttr = op.getClipAttr())
      clip = clipAttr.getValueAsDouble();

    Value x = convertTensor(rewriter, loc, adaptor.getX(), ct);
    Value w = convertTensor(rewriter, loc, adaptor.getW(), ct);
    Value r = convertTensor(rewriter, loc, adaptor.getR(), ct);
    Value bias = convertTensor(rewriter, loc, adaptor.getB(), ct);
    Value initH = convertTensor(rewriter, loc, adaptor.getInitialH(), ct);
    Value initC = convertTensor(rewriter, loc, adaptor.getInitialC(), ct);
    Value peep = convertTensor(rewriter, loc, adaptor.getP(), ct);
    Value lens = adaptor.getSequenceLens();

    auto stateType = RankedTensorType::get({batch, hidden}, ct);
    auto yType = RankedTensorType::get({seq, dirs, batch, hidden}, ct);
    // Y (all steps) is only written when it is used.
    bool needY = !op.getY().use_empty();
    Value y = createEmpty(rewriter, loc, yType);
    auto twoStates = RankedTensorType::get({2, batch, hidden}, ct);
    SmallVector<Value> finalStates;

    for (int64_t d = 0; d < dirs; ++d) {
      bool reverse = op.getDirection() == "reverse" || d == 1;
      Value wd = staticSlice(rewriter, loc, w, {d, 0, 0},
                             {1, gateWidth, inputSize}, {gateWidth, inputSize});
      Value rd = staticSlice(rewriter, loc, r, {d, 0, 0},
                             {1, gateWidth, hidden}, {gateWidth, hidden});
      Value wb, rb;
      if (bias) {
        wb = staticSlice(rewriter, loc, bias, {d, 0}, {1, gateWidth},
                         {gateWidth});
        rb = staticSlice(rewriter, loc, bias, {d, gateWidth}, {1, gateWidth},
                         {gateWidth});
      }
      // GRU without linear_before_reset multiplies the reset gate into H
      // before the recurrence of the h gate: that part (rows 2H..3H) is a
      // second contraction inside the step.
      int64_t recurrentWidth = resetIntoState ? 2 * hidden : gateWidth;
      Value rMain = rd, rReset, rbMain = rb, rbReset;
      if (resetIntoState) {
        rMain = staticSlice(rewriter, loc, rd, {0, 0}, {2 * hidden, hidden},
                            {2 * hidden, hidden});
        rReset = staticSlice(rewriter, loc, rd, {2 * hidden, 0},
                             {hidden, hidden}, {hidden, hidden});
        if (rb) {
          rbMain =
              staticSlice(rewriter, loc, rb, {0}, {2 * hidden}, {2 * hidden});
          rbReset =
              staticSlice(rewriter, loc, rb, {2 * hidden}, {hidden}, {hidden});
        }
      }

      // Input projection of every step at once.
      Value xw = matmulTransposed(
          rewriter, loc, x, wd,
          broadcastBias(rewriter, loc, wb, {seq, batch, gateWidth}, ct));
      Value hrInit =
          broadcastBias(rewriter, loc, rbMain, {batch, recurrentWidth}, ct);
      Value resetInit = resetIntoState ? broadcastBias(rewriter, loc, rbReset,
                                                       {batch, hidden}, ct)
                                       : Value();

      Value pd = peep ? staticSlice(rewriter, loc, peep, {d, 0},
                                    {1, 3 * hidden}, {3 * hidden})
                      : Value();

      SmallVector<StringRef> actNames;
      SmallVector<float> alphas, betas;
      for (int64_t k = 0; k < actsPerDir; ++k) {
        int64_t idx = d * actsPerDir + k;
        actNames.push_back(
            cast<StringAttr>(op.getActivations()[idx]).getValue());
        alphas.push_back(op.getActivationAlpha()[idx]);
        betas.push_back(op.getActivationBeta()[idx]);
      }

      // The loop carries Y and the state [2, batch, hidden] (slot 0 the
      // hidden state, slot 1 the lstm cell), updated with insert_slice so
      // that the yielded buffers stay equivalent to the iter_args whatever
      // fusion does to the step's generics. State and results move in and
      // out through generics rather than slice copies: a copy out of a
      // strided view has no GPU lowering.
      auto insertSlot = [&](OpBuilder &b, Location l, Value slot, Value into,
                            int64_t index) -> Value {
        return tensor::InsertSliceOp::create(
            b, l, slot, into, indexAttrs(b, {index, 0, 0}),
            indexAttrs(b, {1, batch, hidden}), indexAttrs(b, {1, 1, 1}));
      };
      Value state0 =
          buildInitialState(rewriter, loc, initH, initC, d, twoStates);
      SmallVector<Value> iterArgs{state0};
      if (needY)
        iterArgs.insert(iterArgs.begin(), y);
      Value lb = arith::ConstantIndexOp::create(rewriter, loc, 0);
      Value ub = arith::ConstantIndexOp::create(rewriter, loc, seq);
      Value step = arith::ConstantIndexOp::create(rewriter, loc, 1);
      auto loop = scf::ForOp::create(
          rewriter, loc, lb, ub, step, iterArgs,
          [&](OpBuilder &b, Location l, Value iv, ValueRange args) {
            Value yAcc = needY ? args[0] : Value(), state = args.back();
            Value hPrev = staticSlice(b, l, state, {0, 0, 0},
                                      {1, batch, hidden}, {batch, hidden});
            Value cPrev = isLstm
                              ? staticSlice(b, l, state, {1, 0, 0},
                                            {1, batch, hidden}, {batch, hidden})
                              : Value();
            Value t = iv;
            if (reverse)
              t = arith::SubIOp::create(
                  b, l, arith::ConstantIndexOp::create(b, l, seq - 1), iv);
            SmallVector<OpFoldResult> xwOffsets{t, b.getIndexAttr(0),
                                                b.getIndexAttr(0)};
            Value xwT = tensor::ExtractSliceOp::create(
                b, l, RankedTensorType::get({batch, gateWidth}, ct), xw,
                xwOffsets, indexAttrs(b, {1, batch, gateWidth}),
                indexAttrs(b, {1, 1, 1}));
            Value hr = matmulTransposed(b, l, hPrev, rMain, hrInit);

            auto clipped = [&](OpBuilder &nb, Location nl, Value v) -> Value {
              if (!clip)
                return v;
              Value c = floatConstant(nb, nl, ct, *clip);
              Value negC = floatConstant(nb, nl, ct, -*clip);
              return arith::MinimumFOp::create(
                  nb, nl, arith::MaximumFOp::create(nb, nl, v, negC), c);
            };
            auto act = [&](OpBuilder &nb, Location nl, int64_t k,
                           Value v) -> Value {
              return applyActivation(nb, nl, actNames[k], alphas[k], betas[k],
                                     v);
            };

            // Per-gate column maps of the [batch, gates * hidden] operands.
            // Gate g of a [batch, gates * hidden] operand, as a strided view
            // that the generics only read.
            auto gateSlice = [&](Value v, int64_t gate) {
              return staticSlice(b, l, v, {0, gate * hidden}, {batch, hidden},
                                 {batch, hidden});
            };
            AffineMap identity = b.getMultiDimIdentityMap(2);
            SmallVector<utils::IteratorType> parallel(
                2, utils::IteratorType::parallel);

            Value resetTerm;
            if (resetIntoState) {
              // (r (.) H) * Rh^T + Rbh.
              Value rh =
                  linalg::GenericOp::create(
                      b, l, stateType,
                      ValueRange{gateSlice(xwT, 1), gateSlice(hr, 1), hPrev},
                      createEmpty(b, l, stateType),
                      {identity, identity, identity, identity}, parallel,
                      [&](OpBuilder &nb, Location nl, ValueRange a) {
                        Value pre = arith::AddFOp::create(nb, nl, a[0], a[1]);
                        Value gate = act(nb, nl, 0, clipped(nb, nl, pre));
                        linalg::YieldOp::create(
                            nb, nl,
                            ValueRange{
                                arith::MulFOp::create(nb, nl, gate, a[2])});
                      })
                      .getResult(0);
              resetTerm = matmulTransposed(b, l, rh, rReset, resetInit);
            }

            // Every input is [batch, hidden] (identity map) except the
            // peepholes and lengths, so the first one fixes the loop ranges.
            SmallVector<Value> inputs;
            SmallVector<AffineMap> maps;
            auto addInput = [&](Value v, AffineMap map) {
              inputs.push_back(v);
              maps.push_back(map);
              return inputs.size() - 1;
            };
            SmallVector<size_t> xwIdx, hrIdx, pIdx;
            for (int64_t g = 0; g < gates; ++g)
              xwIdx.push_back(addInput(gateSlice(xwT, g), identity));
            for (int64_t g = 0; g < recurrentWidth / hidden; ++g)
              hrIdx.push_back(addInput(gateSlice(hr, g), identity));
            if (pd)
              for (int64_t g = 0; g < 3; ++g)
                pIdx.push_back(addInput(
                    staticSlice(b, l, pd, {g * hidden}, {hidden}, {hidden}),
                    AffineMap::get(2, 0, {getAffineDimExpr(1, ctx)}, ctx)));
            size_t resetIdx = resetTerm ? addInput(resetTerm, identity) : 0;
            size_t lenIdx =
                lens
                    ? addInput(lens, AffineMap::get(
                                         2, 0, {getAffineDimExpr(0, ctx)}, ctx))
                    : 0;
            // The step's row of Y is written into Y's own slice.
            SmallVector<OpFoldResult> yOffsets{
                t, b.getIndexAttr(d), b.getIndexAttr(0), b.getIndexAttr(0)};
            Value yRow;
            if (needY)
              yRow = tensor::ExtractSliceOp::create(
                  b, l, stateType, yAcc, yOffsets,
                  indexAttrs(b, {1, 1, batch, hidden}),
                  indexAttrs(b, {1, 1, 1, 1}));
            size_t hIdx = addInput(hPrev, identity);
            size_t cIdx = isLstm ? addInput(cPrev, identity) : 0;
            SmallVector<Value> outs{createEmpty(b, l, stateType)};
            if (isLstm)
              outs.push_back(createEmpty(b, l, stateType));
            if (needY)
              outs.push_back(yRow);
            for (size_t i = 0; i < outs.size(); ++i)
              maps.push_back(identity);
            SmallVector<Type> outTypes(outs.size(), stateType);

            auto gateStep = linalg::GenericOp::create(
                b, l, outTypes, inputs, outs, maps, parallel,
                [&](OpBuilder &nb, Location nl, ValueRange a) {
                  auto pre = [&](int64_t g) -> Value {
                    return arith::AddFOp::create(nb, nl, a[xwIdx[g]],
                                                 a[hrIdx[g]]);
                  };
                  auto mul = [&](Value p, Value q) -> Value {
                    return arith::MulFOp::create(nb, nl, p, q);
                  };
                  auto add = [&](Value p, Value q) -> Value {
                    return arith::AddFOp::create(nb, nl, p, q);
                  };
                  Value one = floatConstant(nb, nl, ct, 1.0);
                  Value hOld = a[hIdx];
                  Value hNew, cNew;
                  if (cell == "rnn") {
                    hNew = act(nb, nl, 0, clipped(nb, nl, pre(0)));
                  } else if (isLstm) {
                    // Gates i, o, f, c; peepholes i, o, f.
                    Value cOld = a[cIdx];
                    Value iPre = pre(0), fPre = pre(2);
                    if (pd) {
                      iPre = add(iPre, mul(a[pIdx[0]], cOld));
                      fPre = add(fPre, mul(a[pIdx[2]], cOld));
                    }
                    Value iGate = act(nb, nl, 0, clipped(nb, nl, iPre));
                    Value fGate =
                        op.getInputForget()
                            ? arith::SubFOp::create(nb, nl, one, iGate)
                                  .getResult()
                            : act(nb, nl, 0, clipped(nb, nl, fPre));
                    Value cand = act(nb, nl, 1, clipped(nb, nl, pre(3)));
                    cNew = add(mul(fGate, cOld), mul(iGate, cand));
                    Value oPre = pre(1);
                    if (pd)
                      oPre = add(oPre, mul(a[pIdx[1]], cNew));
                    Value oGate = act(nb, nl, 0, clipped(nb, nl, oPre));
                    hNew = mul(oGate, act(nb, nl, 2, cNew));
                  } else {
                    // Gates z, r, h.
                    Value z = act(nb, nl, 0, clipped(nb, nl, pre(0)));
                    Value cand;
                    if (resetIntoState) {
                      cand = add(a[xwIdx[2]], a[resetIdx]);
                    } else {
                      Value rGate = act(nb, nl, 0, clipped(nb, nl, pre(1)));
                      cand = add(a[xwIdx[2]], mul(rGate, a[hrIdx[2]]));
                    }
                    cand = act(nb, nl, 1, clipped(nb, nl, cand));
                    hNew = add(mul(arith::SubFOp::create(nb, nl, one, z), cand),
                               mul(z, hOld));
                  }
                  Value yOut = hNew;
                  if (lens) {
                    Value len = arith::IndexCastOp::create(
                        nb, nl, nb.getIndexType(), a[lenIdx]);
                    Value valid = arith::CmpIOp::create(
                        nb, nl, arith::CmpIPredicate::slt, t, len);
                    yOut = arith::SelectOp::create(
                        nb, nl, valid, hNew, floatConstant(nb, nl, ct, 0.0));
                    hNew = arith::SelectOp::create(nb, nl, valid, hNew, hOld);
                    if (isLstm)
                      cNew =
                          arith::SelectOp::create(nb, nl, valid, cNew, a[cIdx]);
                  }
                  SmallVector<Value> results{hNew};
                  if (isLstm)
                    results.push_back(cNew);
                  if (needY)
                    results.push_back(yOut);
                  linalg::YieldOp::create(nb, nl, results);
                });

            SmallVector<Value> yielded;
            if (needY)
              yielded.push_back(tensor::InsertSliceOp::create(
                  b, l, gateStep.getResults().back(), yAcc, yOffsets,
                  indexAttrs(b, {1, 1, batch, hidden}),
                  indexAttrs(b, {1, 1, 1, 1})));
            Value stateNext = insertSlot(b, l, gateStep.getResult(0), state, 0);
            if (isLstm)
              stateNext = insertSlot(b, l, gateStep.getResult(1), stateNext, 1);
            yielded.push_back(stateNext);
            scf::YieldOp::create(b, l, yielded);
          });

      if (needY)
        y = loop.getResult(0);
      finalStates.push_back(loop.getResults().back());
    }

    auto finalType = RankedTensorType::get({dirs, batch, hidden}, element);
    SmallVector<Value> results{
        convertTensor(rewriter, loc, y, element),
        gatherFinalStates(rewriter, loc, finalStates, 0, finalType)};
    if (isLstm)
      results.push_back(
          gatherFinalStates(rewriter, loc, finalStates, 1, finalType));
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void mlir::ridge::linalg_lowering::populateRecurrentToLinalgPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<RecurrentLowering>(converter, patterns.getContext());
}
