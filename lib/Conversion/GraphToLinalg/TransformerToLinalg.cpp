//===- TransformerToLinalg.cpp - transformer building blocks -------------===//
//
// Lowering of the ridge transformer building blocks (attention, RMS
// normalization, rotary embeddings, Gelu) to linalg on tensors. Attention
// whose scores nothing reads is lowered in its online form (one pass over the
// keys per query row, no score buffer); otherwise as the reference
// computation (scores, bias, softmax in f32, PV contraction), which also
// keeps ONNX's roundings for f16/bf16.
//
//===----------------------------------------------------------------------===//

#include "GraphToLinalgCommon.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::linalg_lowering;

/// t + log2(e) * bias for a score `t` in log2 units: a finite bias stays
/// finite. Exporters mask with the most negative float (GPT-2's finfo.min);
/// times log2(e) that overflows to -inf, and a row masked everywhere would
/// then give zero probabilities where the exported Softmax gives uniform
/// ones (every score equal). Clamped to -FLT_MAX, such a row stays uniform,
/// and a key masked beside a visible one still gets exp2(-FLT_MAX - m) = 0.
/// A -inf bias (a boolean mask) stays -inf. The tensor-core and decode
/// kernels apply the same function (LowerFlashAttention.cpp), so the CPU
/// build stays their oracle.
static Value addBiasLog2(OpBuilder &b, Location loc, Value bias, Value t) {
  Type f32 = b.getF32Type();
  Value sum = math::FmaOp::create(
      b, loc, bias,
      arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.4426950408889634)),
      t);
  Value lowest = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(f32, -std::numeric_limits<float>::max()));
  Value negInf = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(f32, -std::numeric_limits<float>::infinity()));
  Value isNegInf =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, bias, negInf);
  return arith::SelectOp::create(
      b, loc, isNegInf, negInf, arith::MaximumFOp::create(b, loc, sum, lowest));
}

namespace {

Value floatConst(OpBuilder &b, Location loc, Type type, double v) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, v));
}

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// `x` (of the accumulator type) rounded to the narrower float `type` and
/// widened again, so that narrow-type results match a computation carried
/// out in `type`.
Value roundTo(OpBuilder &b, Location loc, Value x, Type type) {
  if (x.getType() == type)
    return x;
  return extendTo(b, loc, truncateTo(b, loc, x, type), x.getType());
}

/// `v` rounded to the float semantics of `type`.
double roundConstant(double v, Type type) {
  APFloat f(v);
  bool lost;
  f.convert(cast<FloatType>(type).getFloatSemantics(),
            APFloat::rmNearestTiesToEven, &lost);
  return f.convertToDouble();
}

SmallVector<utils::IteratorType> parallelIterators(int64_t n) {
  return SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel);
}

/// Map of a 4-D iteration space (b, h, i, x) onto a key/value operand that
/// has Hq / `groups` heads: (b, h floordiv groups, ...).
AffineMap groupedMap(MLIRContext *ctx, unsigned numDims,
                     ArrayRef<unsigned> dims, int64_t groups) {
  SmallVector<AffineExpr> exprs;
  for (auto [i, d] : llvm::enumerate(dims)) {
    AffineExpr e = getAffineDimExpr(d, ctx);
    exprs.push_back(i == 1 && groups != 1 ? e.floorDiv(groups) : e);
  }
  return AffineMap::get(numDims, 0, exprs, ctx);
}

AffineMap selectDims(MLIRContext *ctx, unsigned numDims,
                     ArrayRef<unsigned> dims) {
  return groupedMap(ctx, numDims, dims, 1);
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// Query and accumulator rows of at most this many elements in all are held
/// in registers (head dims up to 64 + 64; a GPU thread has 255).
constexpr int64_t kMaxRegisterRow = 160;

/// The strides of a row-major [`shape`] tensor reshaped to `newShape`
/// without copying (numpy's no-copy reshape): each group of old dimensions
/// that becomes a group of new ones must be contiguous within itself.
/// Dimensions of size 1 take stride 0. Nullopt when a copy is needed.
std::optional<SmallVector<int64_t>> reshapeStrides(ArrayRef<int64_t> shape,
                                                   ArrayRef<int64_t> strides,
                                                   ArrayRef<int64_t> newShape) {
  SmallVector<int64_t> oldDims, oldStrides, newDims;
  for (auto [size, stride] : llvm::zip(shape, strides)) {
    if (size != 1) {
      oldDims.push_back(size);
      oldStrides.push_back(stride);
    }
  }
  for (int64_t size : newShape)
    if (size != 1)
      newDims.push_back(size);
  SmallVector<int64_t> newStrides(newDims.size(), 0);
  size_t oi = 0, ni = 0;
  while (oi < oldDims.size() && ni < newDims.size()) {
    size_t oj = oi + 1, nj = ni + 1;
    int64_t oldProduct = oldDims[oi], newProduct = newDims[ni];
    while (oldProduct != newProduct) {
      if (newProduct < oldProduct) {
        if (nj == newDims.size())
          return std::nullopt;
        newProduct *= newDims[nj++];
      } else {
        if (oj == oldDims.size())
          return std::nullopt;
        oldProduct *= oldDims[oj++];
      }
    }
    for (size_t k = oi; k + 1 < oj; ++k)
      if (oldStrides[k] != oldDims[k + 1] * oldStrides[k + 1])
        return std::nullopt;
    newStrides[nj - 1] = oldStrides[oj - 1];
    for (size_t k = nj - 1; k > ni; --k)
      newStrides[k - 1] = newStrides[k] * newDims[k];
    oi = oj;
    ni = nj;
  }
  if (oi != oldDims.size() || ni != newDims.size())
    return std::nullopt;
  SmallVector<int64_t> result;
  size_t next = 0;
  for (int64_t size : newShape)
    result.push_back(size == 1 ? 0 : newStrides[next++]);
  return result;
}

/// `value` as a strided view of an argument of its function, through the
/// reshapes, transposes and slices between them (the head split the fusion
/// plan puts in an attention kernel): {argument, offset, strides...} in
/// elements. Nullopt when an op computes or copies (RoPE, a concat). A
/// kernel-boundary widening (ridge-narrow-kernel-boundaries: an argument
/// stored in bf16/f16 because every reader rounds it to that format) is
/// seen through too: the kernel reads the argument in its stored type and
/// rounds it, a no-op, where the attention rounds its operands.
std::optional<SmallVector<int64_t>> traceStridedView(Value value) {
  SmallVector<Operation *> chain;
  while (Operation *def = value.getDefiningOp()) {
    if (isa<CastOp>(def) && def->hasAttr(kBoundaryCastAttr)) {
      value = def->getOperand(0);
      continue;
    }
    if (!isa<ReshapeOp, TransposeOp, SliceOp>(def))
      return std::nullopt;
    chain.push_back(def);
    value = def->getOperand(0);
  }
  auto arg = dyn_cast<BlockArgument>(value);
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!arg || !type || !type.hasStaticShape() ||
      !isa_and_present<func::FuncOp>(arg.getOwner()->getParentOp()))
    return std::nullopt;
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  int64_t offset = 0;
  for (Operation *op : llvm::reverse(chain)) {
    if (auto transpose = dyn_cast<TransposeOp>(op)) {
      SmallVector<int64_t> newShape, newStrides;
      for (int64_t p : transpose.getPerm()) {
        newShape.push_back(shape[p]);
        newStrides.push_back(strides[p]);
      }
      shape = newShape;
      strides = newStrides;
    } else if (auto slice = dyn_cast<SliceOp>(op)) {
      for (auto [d, start, step] :
           llvm::enumerate(slice.getStarts(), slice.getSteps())) {
        if (start < 0 || step <= 0)
          return std::nullopt;
        offset += start * strides[d];
        strides[d] *= step;
      }
      shape.assign(slice.getSizes().begin(), slice.getSizes().end());
    } else {
      auto newShape =
          cast<RankedTensorType>(op->getResult(0).getType()).getShape();
      std::optional<SmallVector<int64_t>> newStrides =
          reshapeStrides(shape, strides, newShape);
      if (!newStrides)
        return std::nullopt;
      shape.assign(newShape.begin(), newShape.end());
      strides = *newStrides;
    }
  }
  SmallVector<int64_t> view{arg.getArgNumber(), offset};
  llvm::append_range(view, strides);
  return view;
}

/// The argument that `op`'s first result becomes after bufferization turns
/// the kernel's results into trailing arguments, when its function returns
/// it: the function's argument count plus its position among the results.
static std::optional<unsigned> getResultArgument(Operation *op) {
  auto func = op->getParentOfType<func::FuncOp>();
  if (!func)
    return std::nullopt;
  for (OpOperand &use : op->getResult(0).getUses())
    if (isa<func::ReturnOp>(use.getOwner()))
      return func.getNumArguments() + use.getOperandNumber();
  return std::nullopt;
}

/// The kOnlineAttentionAttr of `op`: its shape {B, H, Hkv, Sq, Skv, d, dv},
/// options, the format its products round to, and the strided views of Q,
/// K, V and a mask (f32, f16 or bf16 added, or i1 allowing; broadcast to
/// 4-D: stride 0 along broadcast dimensions) where they are views of kernel
/// arguments.
DictionaryAttr getOnlineAttentionAttr(AttentionOp op, Type roundTo) {
  MLIRContext *ctx = op.getContext();
  Builder b(ctx);
  auto qType = op.getQuery().getType(), kType = op.getKey().getType(),
       vType = op.getValue().getType();
  SmallVector<NamedAttribute> fields;
  auto add = [&](StringRef name, Attribute value) {
    fields.push_back(b.getNamedAttr(name, value));
  };
  add("shape", b.getDenseI64ArrayAttr({qType.getDimSize(0), qType.getDimSize(1),
                                       kType.getDimSize(1), qType.getDimSize(2),
                                       kType.getDimSize(2), qType.getDimSize(3),
                                       vType.getDimSize(3)}));
  add("scale", b.getF64FloatAttr(op.getScale().convertToDouble()));
  add("causal", b.getBoolAttr(op.getIsCausal()));
  add("query_offset", b.getI64IntegerAttr(op.getQueryOffset()));
  // What the tensor-core kernel does not implement (yet): an option, or an
  // operand ("q", "k", "v", "mask") that is not a strided view of a kernel
  // argument (RoPE computes Q and K; a mask may be computed or boolean).
  // The policy keeps such an attention on the SIMT loop.
  SmallVector<StringRef> unsupported;
  if (op.getSoftcap().convertToDouble() > 0)
    unsupported.push_back("softcap");
  if (static_cast<int64_t>(op.getLeftWindow()) >= 0 ||
      static_cast<int64_t>(op.getRightWindow()) >= 0)
    unsupported.push_back("sliding window");
  if (op.getNonpadKvSeqlen())
    unsupported.push_back("nonpad_kv_seqlen");
  if (roundTo)
    add("round_to", TypeAttr::get(roundTo));
  bool writesAppend = false;
  for (auto [name, operand] : {std::pair<StringRef, Value>{"q", op.getQuery()},
                               {"k", op.getKey()},
                               {"v", op.getValue()}}) {
    // A rotary embedding in the kernel (the fusion plan's prologue of Q or
    // K): the view of what it rotates, and its [B, S, D/2] caches as views
    // onto (b, h, row, col < D/2), constant along the heads.
    auto rotary = operand.getDefiningOp<RotaryEmbeddingOp>();
    if (rotary && name != "v" && !rotary.getPositionIds() &&
        !rotary.getInterleaved() &&
        rotary.getRotaryEmbeddingDim() == rotary.getType().getDimSize(3)) {
      std::optional<SmallVector<int64_t>> view =
          traceStridedView(rotary.getInput());
      std::optional<SmallVector<int64_t>> cos =
          traceStridedView(rotary.getCosCache());
      std::optional<SmallVector<int64_t>> sin =
          traceStridedView(rotary.getSinCache());
      if (view && cos && sin) {
        add(name, b.getDenseI64ArrayAttr(*view));
        for (auto [suffix, cache] :
             {std::pair<StringRef, SmallVector<int64_t> &>{"_cos", *cos},
              {"_sin", *sin}})
          add((name + suffix).str(),
              b.getDenseI64ArrayAttr(
                  {cache[0], cache[1], cache[2], 0, cache[3], cache[4]}));
        continue;
      }
    }
    // A KV-cache append (the fusion plan's decode attention over
    // Concat(past, new) along the keys): the rows of `past` and of `new`,
    // each a view, and the argument the kernel's concatenation result
    // becomes when the graph returns it (results follow the arguments).
    auto concat = operand.getDefiningOp<ConcatOp>();
    if (concat && name != "q" && concat.getAxis() == 2 &&
        concat.getInputs().size() == 2) {
      std::optional<SmallVector<int64_t>> past =
          traceStridedView(concat.getInputs()[0]);
      std::optional<SmallVector<int64_t>> tail =
          traceStridedView(concat.getInputs()[1]);
      if (past && tail) {
        add(name, b.getDenseI64ArrayAttr(*past));
        add((name + "_tail").str(), b.getDenseI64ArrayAttr(*tail));
        add((name + "_split").str(),
            b.getI64IntegerAttr(
                cast<RankedTensorType>(concat.getInputs()[0].getType())
                    .getDimSize(2)));
        if (std::optional<unsigned> present = getResultArgument(concat)) {
          add((name + "_present").str(), b.getI64IntegerAttr(*present));
          writesAppend = true;
        }
        continue;
      }
    }
    if (std::optional<SmallVector<int64_t>> view = traceStridedView(operand))
      add(name, b.getDenseI64ArrayAttr(*view));
    else
      unsupported.push_back(name);
  }
  if (writesAppend) {
    if (std::optional<unsigned> result = getResultArgument(op))
      add("result", b.getI64IntegerAttr(*result));
    else
      unsupported.push_back("result");
  }
  if (Value mask = op.getMask()) {
    auto maskType = cast<RankedTensorType>(mask.getType());
    std::optional<SmallVector<int64_t>> view = traceStridedView(mask);
    Type maskElement = maskType.getElementType();
    if (!(maskElement.isF32() || maskElement.isF16() || maskElement.isBF16() ||
          maskElement.isInteger(1)) ||
        !view) {
      unsupported.push_back("mask");
    } else {
      // numpy broadcast onto (b, h, i, j): leading and size-1 dimensions
      // read stride 0.
      SmallVector<int64_t> full{(*view)[0], (*view)[1]};
      int64_t skip = 4 - maskType.getRank();
      for (int64_t d = 0; d < 4; ++d) {
        int64_t md = d - skip;
        full.push_back(
            md < 0 || maskType.getDimSize(md) == 1 ? 0 : (*view)[2 + md]);
      }
      add("mask", b.getDenseI64ArrayAttr(full));
    }
  }
  if (!unsupported.empty())
    add("unsupported", b.getStrArrayAttr(unsupported));
  return b.getDictionaryAttr(fields);
}

/// The online form (FlashAttention's algorithm, one query row per
/// iteration): an `scf.forall` over (b, h, i) whose body keeps the query row,
/// a running maximum m, a running sum l and an f32 accumulator row, and walks
/// the keys the masks allow once:
///
///   t = log2(e) * (softcap(scale * q.k_j) + bias_j)
///   m' = max(m, t);  c = exp2(m - m');  p = exp2(t - m')
///   l = l * c + p;   acc = acc * c + p * v_j
///
/// then writes acc / l (0 for a row with no allowed key, as ONNX defines).
/// The scale and log2(e) fold into the query row, so each key costs one dot
/// product, two exp2 and one multiply-add per output element; the causal and
/// window limits and `nonpad_kv_seqlen` bound the key loop instead of adding
/// -inf. The scores exist one at a time, in a register: no buffer of
/// Sq x Skv anywhere. Operands are read with tensor.extract, so that
/// ridge-fuse-kernel-bodies folds the layout and elementwise producers the
/// fusion plan put in the kernel (head split, RoPE) into the reads.
struct OnlineAttentionLowering : OpConversionPattern<AttentionOp> {
  OnlineAttentionLowering(const TypeConverter &converter, MLIRContext *ctx)
      : OpConversionPattern(converter, ctx, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(AttentionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.isOnlineSoftmaxForm())
      return rewriter.notifyMatchFailure(op, "not computable online");
    FailureOr<Type> rounding = getOperandRoundingType(op);
    if (failed(rounding))
      return failure();
    Type roundTo = *rounding;
    Location loc = op.getLoc();
    Value q = adaptor.getQuery(), k = adaptor.getKey(), v = adaptor.getValue();
    Value mask = adaptor.getMask(), lens = adaptor.getNonpadKvSeqlen();
    auto qType = cast<RankedTensorType>(q.getType());
    auto vType = cast<RankedTensorType>(v.getType());
    Type f32 = rewriter.getF32Type();
    // A bf16/f16 attention multiplies its operands as stored and rounds P
    // to their format, where the exported chain's Softmax stores it: the
    // products of the tensor-core kernel, whose description this names.
    Type element = qType.getElementType();
    if (!roundTo && !element.isF32())
      roundTo = element;
    int64_t batch = qType.getDimSize(0), heads = qType.getDimSize(1),
            qLen = qType.getDimSize(2), dim = qType.getDimSize(3),
            kvLen = cast<RankedTensorType>(k.getType()).getDimSize(2),
            vDim = vType.getDimSize(3);
    int64_t groups = heads / cast<RankedTensorType>(k.getType()).getDimSize(1);
    double scale = op.getScale().convertToDouble();
    double softcap = op.getSoftcap().convertToDouble();
    bool causal = op.getIsCausal();
    int64_t offset = op.getQueryOffset(), left = op.getLeftWindow(),
            right = op.getRightWindow();
    const double log2e = 1.4426950408889634;
    const double negInf = -std::numeric_limits<double>::infinity();
    auto rowType = RankedTensorType::get({vDim}, f32);
    // The result in the operands' format, rounded once from O / l.
    auto outRowType = RankedTensorType::get({vDim}, element);
    auto resultType =
        RankedTensorType::get({batch, heads, qLen, vDim}, element);

    auto forall = scf::ForallOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(batch),
                               rewriter.getIndexAttr(heads),
                               rewriter.getIndexAttr(qLen)},
        ValueRange{createEmpty(rewriter, loc, resultType)},
        /*mapping=*/std::nullopt);
    forall->setAttr(kOnlineAttentionAttr, getOnlineAttentionAttr(op, roundTo));
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(forall.getBody()->getTerminator());
    OpBuilder &b = rewriter;
    Value bIdx = forall.getInductionVar(0), hIdx = forall.getInductionVar(1),
          iIdx = forall.getInductionVar(2);
    Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
    Value kvHead =
        groups == 1
            ? hIdx
            : arith::DivUIOp::create(b, loc, hIdx, indexConst(b, loc, groups))
                  .getResult();
    // A loop over [lower, upper) carrying `inits`.
    auto forLoop =
        [&](Value lower, Value upper, ValueRange inits,
            function_ref<SmallVector<Value>(Value, ValueRange)> body) {
          auto loop = scf::ForOp::create(
              b, loc, lower, upper, one, inits,
              [&](OpBuilder &nested, Location, Value iv, ValueRange args) {
                scf::YieldOp::create(nested, loc, body(iv, args));
              });
          return loop.getResults();
        };

    // The query row, scaled once: by scale, and by log2(e) unless a softcap
    // comes between the product and the bias. Rows of up to
    // kMaxRegisterRow elements in all (query and accumulator) are held as
    // scalars, one SSA value per element, which a GPU thread keeps in
    // registers; longer rows are private buffers (local memory on a GPU).
    bool inRegisters = dim + vDim <= kMaxRegisterRow;
    double queryScale = softcap > 0 ? scale : scale * log2e;
    // Rounded (the precision policy's format for Q, K, V and P): the query
    // row is rounded as stored and the scale applied to each product, as
    // the tensor-core kernel scales its f32 accumulators.
    auto readQuery = [&](Value d) -> Value {
      Value x = extendTo(
          b, loc,
          tensor::ExtractOp::create(b, loc, q, ValueRange{bIdx, hIdx, iIdx, d}),
          f32);
      if (roundTo)
        return roundThrough(b, loc, x, roundTo);
      return arith::MulFOp::create(b, loc, x,
                                   floatConst(b, loc, f32, queryScale));
    };
    Value queryRow;
    SmallVector<Value> queryElements;
    if (inRegisters) {
      for (int64_t d = 0; d < dim; ++d)
        queryElements.push_back(readQuery(indexConst(b, loc, d)));
    } else {
      // Every element is written: the row starts empty.
      queryRow = forLoop(
          zero, indexConst(b, loc, dim),
          tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{dim}, f32)
              .getResult(),
          [&](Value d, ValueRange args) -> SmallVector<Value> {
            return {tensor::InsertOp::create(b, loc, readQuery(d), args[0], d)};
          })[0];
    }

    // The keys this query may see: the causal and window limits and the
    // row's valid length bound the loop. Query i sits at position
    // pos = i + offset (or len[b] - Sq + i).
    auto toIndex = [&](Value v) -> Value {
      return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
    };
    Value pos = arith::AddIOp::create(b, loc, iIdx, indexConst(b, loc, offset));
    Value upper = indexConst(b, loc, kvLen), lower = zero;
    Value len;
    if (lens) {
      len = toIndex(tensor::ExtractOp::create(b, loc, lens, ValueRange{bIdx}));
      pos = arith::AddIOp::create(
          b, loc, iIdx,
          arith::SubIOp::create(b, loc, len, indexConst(b, loc, qLen)));
      upper = arith::MinSIOp::create(b, loc, upper, len);
    }
    if (causal)
      upper = arith::MinSIOp::create(b, loc, upper,
                                     arith::AddIOp::create(b, loc, pos, one));
    if (right >= 0)
      upper = arith::MinSIOp::create(
          b, loc, upper,
          arith::AddIOp::create(b, loc, pos, indexConst(b, loc, right + 1)));
    if (left >= 0)
      lower = arith::MaxSIOp::create(
          b, loc, zero,
          arith::SubIOp::create(b, loc, pos, indexConst(b, loc, left)));
    // A row with no allowed key has upper <= lower: the loop runs 0 times.

    // Mask indices: numpy broadcast of the mask onto (b, h, i, j).
    auto maskIndices = [&](Value j) {
      auto type = cast<RankedTensorType>(mask.getType());
      SmallVector<Value> all{bIdx, hIdx, iIdx, j};
      SmallVector<Value> indices;
      int64_t skip = 4 - type.getRank();
      for (int64_t d = 0; d < type.getRank(); ++d)
        indices.push_back(type.getDimSize(d) == 1 ? zero : all[skip + d]);
      return indices;
    };
    bool maskIsBool =
        mask &&
        cast<RankedTensorType>(mask.getType()).getElementType().isInteger(1);

    Value negInfValue = floatConst(b, loc, f32, negInf);
    Value zeroF = floatConst(b, loc, f32, 0.0);
    SmallVector<Value> inits{negInfValue, zeroF};
    if (inRegisters)
      inits.append(vDim, zeroF);
    else
      inits.push_back(forLoop(
          zero, indexConst(b, loc, vDim),
          tensor::EmptyOp::create(b, loc, rowType.getShape(), f32).getResult(),
          [&](Value d, ValueRange args) -> SmallVector<Value> {
            return {tensor::InsertOp::create(b, loc, zeroF, args[0], d)};
          })[0]);
    auto readKey = [&](Value j, Value d) -> Value {
      return roundThrough(
          b, loc,
          extendTo(b, loc,
                   tensor::ExtractOp::create(b, loc, k,
                                             ValueRange{bIdx, kvHead, j, d}),
                   f32),
          roundTo);
    };
    auto readValue = [&](Value j, Value d) -> Value {
      return roundThrough(
          b, loc,
          extendTo(b, loc,
                   tensor::ExtractOp::create(b, loc, v,
                                             ValueRange{bIdx, kvHead, j, d}),
                   f32),
          roundTo);
    };
    // The score of key j, in log2 units: scale (and log2(e)) applied,
    // softcap, mask.
    auto score = [&](Value j) -> Value {
      Value t;
      if (inRegisters) {
        t = zeroF;
        for (int64_t d = 0; d < dim; ++d)
          t = math::FmaOp::create(b, loc, queryElements[d],
                                  readKey(j, indexConst(b, loc, d)), t);
      } else {
        t = forLoop(
            zero, indexConst(b, loc, dim), zeroF,
            [&](Value d, ValueRange sum) -> SmallVector<Value> {
              Value x =
                  tensor::ExtractOp::create(b, loc, queryRow, ValueRange{d});
              return {math::FmaOp::create(b, loc, x, readKey(j, d), sum[0])};
            })[0];
      }
      if (roundTo)
        t = arith::MulFOp::create(b, loc, t,
                                  floatConst(b, loc, f32, queryScale));
      if (softcap > 0) {
        Value cap = floatConst(b, loc, f32, softcap);
        t = arith::MulFOp::create(
            b, loc, floatConst(b, loc, f32, softcap * log2e),
            math::TanhOp::create(b, loc,
                                 arith::DivFOp::create(b, loc, t, cap)));
      }
      if (mask) {
        Value bias = tensor::ExtractOp::create(b, loc, mask, maskIndices(j));
        if (maskIsBool)
          t = arith::SelectOp::create(b, loc, bias, t, negInfValue);
        else
          t = addBiasLog2(b, loc, extendTo(b, loc, bias, f32), t);
      }
      return t;
    };
    // The shift of a running maximum: 0 while every score so far is -inf,
    // so that exp2 gives 0, not NaN.
    auto shiftOf = [&](Value max) -> Value {
      Value allMasked = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                              max, negInfValue);
      return arith::SelectOp::create(b, loc, allMasked, zeroF, max);
    };
    // acc * correction + p * v_j, element by element.
    auto accumulate = [&](ValueRange acc, Value correction, Value p,
                          Value j) -> SmallVector<Value> {
      auto update = [&](Value old, Value d) -> Value {
        if (correction)
          old = arith::MulFOp::create(b, loc, old, correction);
        return math::FmaOp::create(b, loc, p, readValue(j, d), old);
      };
      if (inRegisters) {
        SmallVector<Value> results;
        for (int64_t d = 0; d < vDim; ++d)
          results.push_back(update(acc[d], indexConst(b, loc, d)));
        return results;
      }
      return forLoop(
          zero, indexConst(b, loc, vDim), acc[0],
          [&](Value d, ValueRange a) -> SmallVector<Value> {
            Value old = tensor::ExtractOp::create(b, loc, a[0], d);
            return {tensor::InsertOp::create(b, loc, update(old, d), a[0], d)};
          });
    };
    // acc * correction, element by element.
    auto rescale = [&](ValueRange acc, Value correction) -> SmallVector<Value> {
      if (inRegisters)
        return llvm::map_to_vector(acc, [&](Value x) -> Value {
          return arith::MulFOp::create(b, loc, x, correction);
        });
      return forLoop(zero, indexConst(b, loc, vDim), acc[0],
                     [&](Value d, ValueRange a) -> SmallVector<Value> {
                       Value x = tensor::ExtractOp::create(b, loc, a[0], d);
                       x = arith::MulFOp::create(b, loc, x, correction);
                       return {tensor::InsertOp::create(b, loc, x, a[0], d)};
                     });
    };

    ValueRange state;
    if (!roundTo) {
      // One key at a time.
      state =
          forLoop(lower, upper, inits,
                  [&](Value j, ValueRange args) -> SmallVector<Value> {
                    Value m = args[0], l = args[1];
                    Value t = score(j);
                    Value next = arith::MaximumFOp::create(b, loc, m, t);
                    Value shift = shiftOf(next);
                    Value correction = math::Exp2Op::create(
                        b, loc, arith::SubFOp::create(b, loc, m, shift));
                    Value p = math::Exp2Op::create(
                        b, loc, arith::SubFOp::create(b, loc, t, shift));
                    SmallVector<Value> results{
                        next, math::FmaOp::create(b, loc, l, correction, p)};
                    llvm::append_range(results, accumulate(args.drop_front(2),
                                                           correction, p, j));
                    return results;
                  });
    } else {
      // Rounded: tiles of kAttentionKeyTile keys from key 0, as the
      // tensor-core kernel steps. The tile's scores first (its maximum),
      // then the rescale, then each p = exp2(t - shift), summed in f32 and
      // multiplied with V rounded.
      Value tileSize = indexConst(b, loc, kAttentionKeyTile);
      Value firstTile = arith::MulIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, lower, tileSize), tileSize);
      auto tileType = RankedTensorType::get({kAttentionKeyTile}, f32);
      state =
          scf::ForOp::create(
              b, loc, firstTile, upper, tileSize, inits,
              [&](OpBuilder &, Location, Value j0, ValueRange args) {
                Value begin = arith::MaxSIOp::create(b, loc, j0, lower);
                Value end = arith::MinSIOp::create(
                    b, loc, arith::AddIOp::create(b, loc, j0, tileSize), upper);
                ValueRange scores = forLoop(
                    begin, end,
                    {tensor::EmptyOp::create(b, loc, tileType.getShape(), f32)
                         .getResult(),
                     negInfValue},
                    [&](Value j, ValueRange a) -> SmallVector<Value> {
                      Value t = score(j);
                      Value slot = arith::SubIOp::create(b, loc, j, j0);
                      return {tensor::InsertOp::create(b, loc, t, a[0], slot),
                              arith::MaximumFOp::create(b, loc, a[1], t)};
                    });
                Value m = args[0];
                Value next = arith::MaximumFOp::create(b, loc, m, scores[1]);
                Value shift = shiftOf(next);
                Value correction = math::Exp2Op::create(
                    b, loc, arith::SubFOp::create(b, loc, m, shift));
                SmallVector<Value> carried{
                    arith::MulFOp::create(b, loc, args[1], correction)};
                llvm::append_range(carried,
                                   rescale(args.drop_front(2), correction));
                ValueRange summed = forLoop(
                    begin, end, carried,
                    [&](Value j, ValueRange a) -> SmallVector<Value> {
                      Value slot = arith::SubIOp::create(b, loc, j, j0);
                      Value t = tensor::ExtractOp::create(b, loc, scores[0],
                                                          ValueRange{slot});
                      Value p = math::Exp2Op::create(
                          b, loc, arith::SubFOp::create(b, loc, t, shift));
                      SmallVector<Value> results{
                          arith::AddFOp::create(b, loc, a[0], p)};
                      llvm::append_range(
                          results,
                          accumulate(a.drop_front(),
                                     /*correction=*/Value(),
                                     roundThrough(b, loc, p, roundTo), j));
                      return results;
                    });
                SmallVector<Value> results{next};
                llvm::append_range(results, summed);
                scf::YieldOp::create(b, loc, results);
              })
              .getResults();
    }

    // acc / l; a row that saw no allowed key (l = 0) is 0.
    Value sum = state[1];
    Value empty =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum, zeroF);
    Value inverse = arith::SelectOp::create(
        b, loc, empty, zeroF,
        arith::DivFOp::create(b, loc, floatConst(b, loc, f32, 1.0), sum));
    Value out;
    if (inRegisters) {
      SmallVector<Value> elements;
      for (int64_t d = 0; d < vDim; ++d)
        elements.push_back(truncateTo(
            b, loc, arith::MulFOp::create(b, loc, state[2 + d], inverse),
            element));
      out = tensor::FromElementsOp::create(b, loc, outRowType, elements);
    } else {
      // An f32 result is scaled in place in the accumulator row; a 16-bit
      // one is rounded into a row of its own.
      bool inPlace = element.isF32();
      Value row = state[2];
      Value init =
          inPlace
              ? row
              : tensor::EmptyOp::create(b, loc, outRowType.getShape(), element)
                    .getResult();
      out = forLoop(zero, indexConst(b, loc, vDim), init,
                    [&](Value d, ValueRange a) -> SmallVector<Value> {
                      Value x = tensor::ExtractOp::create(
                          b, loc, inPlace ? a[0] : row, d);
                      x = arith::MulFOp::create(b, loc, x, inverse);
                      return {tensor::InsertOp::create(
                          b, loc, truncateTo(b, loc, x, element), a[0], d)};
                    })[0];
    }
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    SmallVector<OpFoldResult> offsets{bIdx, hIdx, iIdx, b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes{b.getIndexAttr(1), b.getIndexAttr(1),
                                    b.getIndexAttr(1), b.getIndexAttr(vDim)};
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    tensor::ParallelInsertSliceOp::create(
        b, loc, out, forall.getRegionIterArgs()[0], offsets, sizes, strides);
    rewriter.setInsertionPointAfter(forall);
    // Nothing reads the scores (isOnlineSoftmaxForm): an empty placeholder.
    Value qk = createEmpty(rewriter, loc,
                           cast<RankedTensorType>(op.getQk().getType()));
    rewriter.replaceOp(op, {forall.getResult(0), qk});
    return success();
  }
};

struct AttentionLowering : OpConversionPattern<AttentionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AttentionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    Value q = adaptor.getQuery(), k = adaptor.getKey(), v = adaptor.getValue();
    auto qType = cast<RankedTensorType>(q.getType());
    auto kType = cast<RankedTensorType>(k.getType());
    auto vType = cast<RankedTensorType>(v.getType());
    Type element = qType.getElementType();
    Type acc = getAccumulatorType(element);
    int64_t batch = qType.getDimSize(0), heads = qType.getDimSize(1),
            qLen = qType.getDimSize(2), kvLen = kType.getDimSize(2),
            vDim = vType.getDimSize(3);
    int64_t groups = heads / kType.getDimSize(1);
    double negInf = -std::numeric_limits<double>::infinity();
    auto scoreType = RankedTensorType::get({batch, heads, qLen, kvLen}, acc);
    auto rowType = RankedTensorType::get({batch, heads, qLen}, acc);
    AffineMap id4 = rewriter.getMultiDimIdentityMap(4);
    AffineMap row4 = selectDims(ctx, 4, {0, 1, 2});

    // scores[b, h, i, j] = sum_d q'[b, h, i, d] * k'[b, h / g, j, d], with
    // q' and k' scaled by sqrt(scale) in the element type (as ONNX does).
    Type softmaxType = op.getSoftmaxType().value_or(element);
    if (getAccumulatorType(softmaxType) != acc)
      softmaxType = acc;
    double scale = op.getScale().convertToDouble();
    double rootScale = roundConstant(std::sqrt(scale), element);
    SmallVector<utils::IteratorType> contractIters = parallelIterators(4);
    contractIters.push_back(utils::IteratorType::reduction);
    Value raw =
        linalg::GenericOp::create(
            rewriter, loc, scoreType, ValueRange{q, k},
            createFilled(rewriter, loc, scoreType,
                         rewriter.getFloatAttr(acc, 0.0)),
            ArrayRef<AffineMap>{selectDims(ctx, 5, {0, 1, 2, 4}),
                                groupedMap(ctx, 5, {0, 1, 3, 4}, groups),
                                selectDims(ctx, 5, {0, 1, 2, 3})},
            contractIters,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value root = floatConst(b, l, acc, rootScale);
              Value qs = roundTo(b, l,
                                 arith::MulFOp::create(
                                     b, l, extendTo(b, l, args[0], acc), root),
                                 element);
              Value ks = roundTo(b, l,
                                 arith::MulFOp::create(
                                     b, l, extendTo(b, l, args[1], acc), root),
                                 element);
              Value p = arith::MulFOp::create(b, l, qs, ks);
              linalg::YieldOp::create(
                  b, l, arith::AddFOp::create(b, l, args[2], p).getResult());
            })
            .getResult(0);

    // logits = softcap(scale * scores) + bias; the bias (mask, causal and
    // window limits, padding) is kept to detect fully masked rows. The
    // capped scores are a third result when qk_matmul_output_mode 0/1 asks
    // for them.
    Value mask = adaptor.getMask(), lens = adaptor.getNonpadKvSeqlen();
    bool wantQk = !op.getQk().use_empty();
    int64_t mode = op.getQkMatmulOutputMode();
    bool wantCapped = wantQk && mode <= 1;
    SmallVector<Value> inputs{raw};
    SmallVector<AffineMap> maps{id4};
    if (mask) {
      inputs.push_back(mask);
      maps.push_back(getBroadcastMap(cast<RankedTensorType>(mask.getType()),
                                     scoreType.getShape(), ctx));
    }
    if (lens) {
      inputs.push_back(lens);
      maps.push_back(selectDims(ctx, 4, {0}));
    }
    SmallVector<Type> outTypes{scoreType, scoreType};
    SmallVector<Value> outs{createEmpty(rewriter, loc, scoreType),
                            createEmpty(rewriter, loc, scoreType)};
    if (wantCapped) {
      outTypes.push_back(scoreType);
      outs.push_back(createEmpty(rewriter, loc, scoreType));
    }
    maps.append(outs.size(), id4);
    double softcap = op.getSoftcap().convertToDouble();
    bool causal = op.getIsCausal();
    int64_t offset = op.getQueryOffset(), left = op.getLeftWindow(),
            right = op.getRightWindow();
    bool maskIsBool =
        mask &&
        cast<RankedTensorType>(mask.getType()).getElementType().isInteger(1);
    auto logitsOp = linalg::GenericOp::create(
        rewriter, loc, outTypes, inputs, outs, maps, parallelIterators(4),
        [&](OpBuilder &b, Location l, ValueRange args) {
          unsigned next = 1;
          Value s = roundTo(b, l, args[0], element);
          if (softcap > 0) {
            Value cap = floatConst(b, l, acc, softcap);
            s = arith::MulFOp::create(
                b, l, cap,
                math::TanhOp::create(b, l,
                                     arith::DivFOp::create(b, l, s, cap)));
            s = roundTo(b, l, s, element);
          }
          Value zero = floatConst(b, l, acc, 0.0);
          Value minusInf = floatConst(b, l, acc, negInf);
          Value bias = zero;
          if (mask) {
            Value m = args[next++];
            bias = maskIsBool ? arith::SelectOp::create(b, l, m, zero, minusInf)
                                    .getResult()
                              : extendTo(b, l, m, acc);
          }
          // Query i sits at position i + offset among the keys.
          Value i = linalg::IndexOp::create(b, l, 2);
          Value j = linalg::IndexOp::create(b, l, 3);
          auto toI64 = [&](Value index) -> Value {
            return arith::IndexCastOp::create(b, l, b.getI64Type(), index);
          };
          auto i64 = [&](int64_t c) -> Value {
            return arith::ConstantOp::create(b, l, b.getI64IntegerAttr(c));
          };
          Value j64 = toI64(j), len;
          Value pos = arith::AddIOp::create(b, l, toI64(i), i64(offset));
          if (lens) {
            len = args[next++];
            pos = arith::AddIOp::create(
                b, l, toI64(i), arith::SubIOp::create(b, l, len, i64(qLen)));
          }
          auto addLimit = [&](arith::CmpIPredicate pred, Value lhs, Value rhs) {
            Value ok = arith::CmpIOp::create(b, l, pred, lhs, rhs);
            bias = arith::AddFOp::create(
                b, l, bias, arith::SelectOp::create(b, l, ok, zero, minusInf));
          };
          if (causal)
            addLimit(arith::CmpIPredicate::sle, j64, pos);
          if (left >= 0)
            addLimit(arith::CmpIPredicate::sle,
                     arith::SubIOp::create(b, l, pos, j64), i64(left));
          if (right >= 0)
            addLimit(arith::CmpIPredicate::sle,
                     arith::SubIOp::create(b, l, j64, pos), i64(right));
          if (lens)
            addLimit(arith::CmpIPredicate::slt, j64, len);
          SmallVector<Value> results{
              roundTo(b, l, arith::AddFOp::create(b, l, s, bias), softmaxType),
              bias};
          if (wantCapped)
            results.push_back(s);
          linalg::YieldOp::create(b, l, results);
        });
    Value logits = logitsOp.getResult(0), bias = logitsOp.getResult(1);

    // Row maxima of the logits and of the bias (-inf: fully masked row).
    SmallVector<utils::IteratorType> rowIters = parallelIterators(3);
    rowIters.push_back(utils::IteratorType::reduction);
    Value negInfRow = createFilled(rewriter, loc, rowType,
                                   rewriter.getFloatAttr(acc, negInf));
    auto maxOp = linalg::GenericOp::create(
        rewriter, loc, TypeRange{rowType, rowType}, ValueRange{logits, bias},
        ValueRange{negInfRow, negInfRow},
        ArrayRef<AffineMap>{id4, id4, row4, row4}, rowIters,
        [&](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(
              b, l,
              ValueRange{arith::MaximumFOp::create(b, l, args[2], args[0]),
                         arith::MaximumFOp::create(b, l, args[3], args[1])});
        });
    Value rowMax = maxOp.getResult(0), biasMax = maxOp.getResult(1);
    // exp(x - max), with a max of -inf (all logits -inf) taken as 0.
    auto shiftedExp = [&](OpBuilder &b, Location l, Value x, Value m) {
      Value isNegInf = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, m,
                                             floatConst(b, l, acc, negInf));
      Value safe = arith::SelectOp::create(b, l, isNegInf,
                                           floatConst(b, l, acc, 0.0), m);
      return roundTo(
          b, l, math::ExpOp::create(b, l, arith::SubFOp::create(b, l, x, safe)),
          softmaxType);
    };
    Value sums =
        linalg::GenericOp::create(
            rewriter, loc, rowType, ValueRange{logits, rowMax},
            createFilled(rewriter, loc, rowType,
                         rewriter.getFloatAttr(acc, 0.0)),
            ArrayRef<AffineMap>{id4, row4, row4}, rowIters,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value e = shiftedExp(b, l, args[0], args[1]);
              linalg::YieldOp::create(
                  b, l, arith::AddFOp::create(b, l, args[2], e).getResult());
            })
            .getResult(0);
    // Probabilities in the element type (ONNX casts them back before the PV
    // product); fully masked rows are zero.
    auto probType = RankedTensorType::get(scoreType.getShape(), element);
    Value probs =
        linalg::GenericOp::create(
            rewriter, loc, probType, ValueRange{logits, rowMax, sums, biasMax},
            createEmpty(rewriter, loc, probType),
            ArrayRef<AffineMap>{id4, row4, row4, row4, id4},
            parallelIterators(4),
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value zero = floatConst(b, l, acc, 0.0);
              Value e = shiftedExp(b, l, args[0], args[1]);
              Value rounded = roundTo(b, l, args[2], softmaxType);
              Value sumIsZero = arith::CmpFOp::create(
                  b, l, arith::CmpFPredicate::OEQ, rounded, zero);
              Value sum = arith::SelectOp::create(
                  b, l, sumIsZero, floatConst(b, l, acc, 1.0), rounded);
              Value p = roundTo(b, l, arith::DivFOp::create(b, l, e, sum),
                                softmaxType);
              Value masked =
                  arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                        args[3], floatConst(b, l, acc, negInf));
              p = arith::SelectOp::create(b, l, masked, zero, p);
              linalg::YieldOp::create(b, l, truncateTo(b, l, p, element));
            })
            .getResult(0);

    // result[b, h, i, e] = sum_j p[b, h, i, j] * v[b, h / g, j, e].
    auto outAccType = RankedTensorType::get({batch, heads, qLen, vDim}, acc);
    Value out =
        linalg::GenericOp::create(
            rewriter, loc, outAccType, ValueRange{probs, v},
            createFilled(rewriter, loc, outAccType,
                         rewriter.getFloatAttr(acc, 0.0)),
            ArrayRef<AffineMap>{selectDims(ctx, 5, {0, 1, 2, 4}),
                                groupedMap(ctx, 5, {0, 1, 4, 3}, groups),
                                selectDims(ctx, 5, {0, 1, 2, 3})},
            contractIters,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value p =
                  arith::MulFOp::create(b, l, extendTo(b, l, args[0], acc),
                                        extendTo(b, l, args[1], acc));
              linalg::YieldOp::create(
                  b, l, arith::AddFOp::create(b, l, args[2], p).getResult());
            })
            .getResult(0);
    auto toElement = [&](Value t) -> Value {
      auto type = cast<RankedTensorType>(t.getType());
      if (type.getElementType() == element)
        return t;
      return buildElementwise(
          rewriter, loc, RankedTensorType::get(type.getShape(), element), t,
          [&](OpBuilder &b, Location l, ValueRange args) {
            return truncateTo(b, l, args[0], element);
          });
    };
    Value qk;
    if (!wantQk)
      qk = createEmpty(rewriter, loc, probType);
    else if (mode <= 1)
      qk = toElement(logitsOp.getResult(2));
    else if (mode == 2)
      qk = toElement(logits);
    else
      qk = probs;
    rewriter.replaceOp(op, {toElement(out), qk});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// RMSNorm
//===----------------------------------------------------------------------===//

struct RMSNormLowering : OpConversionPattern<RMSNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RMSNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    int64_t rank = type.getRank(), axis = op.getAxis();
    Type element = type.getElementType();
    Type stash = op.getStashType() == 1 ? rewriter.getF32Type() : element;
    Type acc = getAccumulatorType(stash);
    int64_t count = 1;
    SmallVector<unsigned> rowDims;
    for (int64_t d = 0; d < rank; ++d) {
      if (d < axis)
        rowDims.push_back(d);
      else
        count *= type.getDimSize(d);
    }
    auto rowType = RankedTensorType::get(type.getShape().take_front(axis), acc);
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    AffineMap rowMap = selectDims(ctx, rank, rowDims);
    SmallVector<utils::IteratorType> iters = parallelIterators(rank);
    for (int64_t d = axis; d < rank; ++d)
      iters[d] = utils::IteratorType::reduction;
    Value squares =
        linalg::GenericOp::create(
            rewriter, loc, rowType, input,
            createFilled(rewriter, loc, rowType,
                         rewriter.getFloatAttr(acc, 0.0)),
            ArrayRef<AffineMap>{identity, rowMap}, iters,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value x = extendTo(b, l, args[0], acc);
              Value sq = arith::MulFOp::create(b, l, x, x);
              linalg::YieldOp::create(
                  b, l, arith::AddFOp::create(b, l, args[1], sq).getResult());
            })
            .getResult(0);
    double epsilon = op.getEpsilon().convertToDouble();
    Value invRms = buildElementwise(
        rewriter, loc, rowType, squares,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value mean = arith::DivFOp::create(b, l, args[0],
                                             floatConst(b, l, acc, count));
          Value sum =
              arith::AddFOp::create(b, l, mean, floatConst(b, l, acc, epsilon));
          // 1 / sqrt rather than math.rsqrt, which has no CPU libm symbol.
          return arith::DivFOp::create(b, l, floatConst(b, l, acc, 1.0),
                                       math::SqrtOp::create(b, l, sum));
        });
    Value scale = adaptor.getScale();
    Value y =
        linalg::GenericOp::create(
            rewriter, loc, type, ValueRange{input, invRms, scale},
            createEmpty(rewriter, loc, type),
            ArrayRef<AffineMap>{
                identity, rowMap,
                getBroadcastMap(cast<RankedTensorType>(scale.getType()),
                                type.getShape(), ctx),
                identity},
            parallelIterators(rank),
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value r = arith::MulFOp::create(
                  b, l, extendTo(b, l, args[0], acc), args[1]);
              r = arith::MulFOp::create(b, l, r, extendTo(b, l, args[2], acc));
              linalg::YieldOp::create(b, l, truncateTo(b, l, r, element));
            })
            .getResult(0);
    rewriter.replaceOp(op, y);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Gelu
//===----------------------------------------------------------------------===//

struct GeluLowering : OpConversionPattern<GeluOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GeluOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    bool tanhApprox = op.getApproximate() == "tanh";
    auto type = cast<RankedTensorType>(adaptor.getInput().getType());
    Value y = buildElementwise(
        rewriter, op.getLoc(), type, adaptor.getInput(),
        [&](OpBuilder &b, Location l, ValueRange args) {
          return computeInAccumulatorType(b, l, args, [&](ValueRange xs) {
            Value x = xs[0];
            Type t = x.getType();
            if (tanhApprox) {
              // 0.5 x (1 + tanh(u)) is x sigmoid(2 u) = x / (1 + exp(-2 u)),
              // u = sqrt(2 / pi) (x + 0.044715 x^3): no cancellation in
              // 1 + tanh(u) for negative u (at u = -5 the f32 sum keeps 3
              // digits), and on the GPU one ex2 instead of tanh's rational
              // polynomial (ridge-exp-to-ex2-approx). -2 u is
              // x (c1 + c2 x^2), its constants folded.
              double c1 = -2.0 * std::sqrt(2.0 / M_PI);
              double c2 = c1 * 0.044715;
              Value square = arith::MulFOp::create(b, l, x, x);
              Value factor = arith::AddFOp::create(
                  b, l, floatConst(b, l, t, c1),
                  arith::MulFOp::create(b, l, floatConst(b, l, t, c2), square));
              Value exponent = math::ExpOp::create(
                  b, l, arith::MulFOp::create(b, l, x, factor));
              return arith::DivFOp::create(
                         b, l, x,
                         arith::AddFOp::create(b, l, floatConst(b, l, t, 1.0),
                                               exponent))
                  .getResult();
            }
            Value inner = math::ErfOp::create(
                b, l,
                arith::MulFOp::create(b, l, x, floatConst(b, l, t, M_SQRT1_2)));
            Value onePlus =
                arith::AddFOp::create(b, l, floatConst(b, l, t, 1.0), inner);
            Value half =
                arith::MulFOp::create(b, l, floatConst(b, l, t, 0.5), x);
            return arith::MulFOp::create(b, l, half, onePlus).getResult();
          });
        });
    rewriter.replaceOp(op, y);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// RotaryEmbedding
//===----------------------------------------------------------------------===//

struct RotaryEmbeddingLowering : OpConversionPattern<RotaryEmbeddingOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RotaryEmbeddingOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    Value cosCache = adaptor.getCosCache(), sinCache = adaptor.getSinCache();
    Value positions = adaptor.getPositionIds();
    auto type = cast<RankedTensorType>(input.getType());
    Type element = type.getElementType();
    Type acc = getAccumulatorType(element);
    int64_t dim = op.getRotaryEmbeddingDim(), half = dim / 2;
    bool interleaved = op.getInterleaved();
    int64_t cacheRows =
        cast<RankedTensorType>(cosCache.getType()).getDimSize(0);
    AffineMap identity = rewriter.getMultiDimIdentityMap(4);
    // Each output element reads its pair partner and the cache entry with
    // tensor.extract; features past the rotary dims are copied.
    Value y =
        linalg::GenericOp::create(
            rewriter, loc, type, input, createEmpty(rewriter, loc, type),
            ArrayRef<AffineMap>{identity, identity}, parallelIterators(4),
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value bi = linalg::IndexOp::create(b, l, 0);
              Value hi = linalg::IndexOp::create(b, l, 1);
              Value si = linalg::IndexOp::create(b, l, 2);
              Value d = linalg::IndexOp::create(b, l, 3);
              Value rotated = arith::CmpIOp::create(
                  b, l, arith::CmpIPredicate::ult, d, indexConst(b, l, dim));
              // Clamped so that the discarded lanes read in bounds.
              Value dd =
                  arith::MinUIOp::create(b, l, d, indexConst(b, l, dim - 1));
              Value first, partner, kIdx;
              if (interleaved) {
                kIdx = arith::DivUIOp::create(b, l, dd, indexConst(b, l, 2));
                Value parity =
                    arith::RemUIOp::create(b, l, dd, indexConst(b, l, 2));
                first = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                              parity, indexConst(b, l, 0));
                partner = arith::SelectOp::create(
                    b, l, first,
                    arith::AddIOp::create(b, l, dd, indexConst(b, l, 1)),
                    arith::SubIOp::create(b, l, dd, indexConst(b, l, 1)));
              } else {
                first = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult,
                                              dd, indexConst(b, l, half));
                kIdx = arith::SelectOp::create(
                    b, l, first, dd,
                    arith::SubIOp::create(b, l, dd, indexConst(b, l, half)));
                partner = arith::SelectOp::create(
                    b, l, first,
                    arith::AddIOp::create(b, l, dd, indexConst(b, l, half)),
                    kIdx);
              }
              Value x = extendTo(b, l, args[0], acc);
              Value xp =
                  extendTo(b, l,
                           tensor::ExtractOp::create(
                               b, l, input, ValueRange{bi, hi, si, partner}),
                           acc);
              SmallVector<Value> cacheIdx;
              if (positions) {
                Value p = tensor::ExtractOp::create(b, l, positions,
                                                    ValueRange{bi, si});
                p = arith::IndexCastOp::create(b, l, b.getIndexType(), p);
                // Clamp to the table so a bad position cannot read out of
                // bounds.
                p = arith::MaxSIOp::create(b, l, p, indexConst(b, l, 0));
                p = arith::MinSIOp::create(b, l, p,
                                           indexConst(b, l, cacheRows - 1));
                cacheIdx = {p, kIdx};
              } else {
                cacheIdx = {bi, si, kIdx};
              }
              Value c = extendTo(
                  b, l, tensor::ExtractOp::create(b, l, cosCache, cacheIdx),
                  acc);
              Value s = extendTo(
                  b, l, tensor::ExtractOp::create(b, l, sinCache, cacheIdx),
                  acc);
              Value x1 = arith::SelectOp::create(b, l, first, x, xp);
              Value x2 = arith::SelectOp::create(b, l, first, xp, x);
              Value real = arith::SubFOp::create(
                  b, l, arith::MulFOp::create(b, l, c, x1),
                  arith::MulFOp::create(b, l, s, x2));
              Value imag = arith::AddFOp::create(
                  b, l, arith::MulFOp::create(b, l, s, x1),
                  arith::MulFOp::create(b, l, c, x2));
              Value r = arith::SelectOp::create(b, l, first, real, imag);
              r = arith::SelectOp::create(b, l, rotated, r, x);
              linalg::YieldOp::create(b, l, truncateTo(b, l, r, element));
            })
            .getResult(0);
    rewriter.replaceOp(op, y);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// LinearAttention
//===----------------------------------------------------------------------===//

/// An scf.for over the time steps carrying the f32 state and the output;
/// each step is a few small linalg.generic ops that read the step's
/// q/k/v/decay/beta entries with tensor.extract.
struct LinearAttentionLowering : OpConversionPattern<LinearAttentionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LinearAttentionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    Value q = adaptor.getQuery(), k = adaptor.getKey(), v = adaptor.getValue();
    Value decay = adaptor.getDecay(), beta = adaptor.getBeta();
    auto qType = cast<RankedTensorType>(q.getType());
    auto kType = cast<RankedTensorType>(k.getType());
    auto vType = cast<RankedTensorType>(v.getType());
    auto stateType = cast<RankedTensorType>(adaptor.getState().getType());
    Type element = qType.getElementType();
    Type acc = getAccumulatorType(element);
    int64_t batch = qType.getDimSize(0), qHeads = qType.getDimSize(1),
            steps = qType.getDimSize(2), kvHeads = kType.getDimSize(1),
            dv = vType.getDimSize(3);
    int64_t groups = qHeads / kvHeads;
    bool perKeyDecay =
        decay && cast<RankedTensorType>(decay.getType()).getDimSize(3) != 1;
    bool perHeadBeta =
        beta && cast<RankedTensorType>(beta.getType()).getDimSize(1) != 1;
    auto stateAccType = RankedTensorType::get(stateType.getShape(), acc);
    auto outAccType = RankedTensorType::get({batch, qHeads, steps, dv}, acc);
    auto rowType = RankedTensorType::get({batch, kvHeads, dv}, acc);
    auto stepType = RankedTensorType::get({batch, qHeads, dv}, acc);
    AffineMap id4 = rewriter.getMultiDimIdentityMap(4);
    AffineMap id3 = rewriter.getMultiDimIdentityMap(3);

    Value state0 =
        buildElementwise(rewriter, loc, stateAccType, adaptor.getState(),
                         [&](OpBuilder &b, Location l, ValueRange args) {
                           return extendTo(b, l, args[0], acc);
                         });
    Value out0 = createEmpty(rewriter, loc, outAccType);
    auto read = [&](OpBuilder &b, Location l, Value tensor,
                    ArrayRef<Value> idx) -> Value {
      return extendTo(b, l, tensor::ExtractOp::create(b, l, tensor, idx), acc);
    };
    auto index = [](OpBuilder &b, Location l, unsigned d) -> Value {
      return linalg::IndexOp::create(b, l, d);
    };
    SmallVector<utils::IteratorType> reduceLast = parallelIterators(3);
    reduceLast.push_back(utils::IteratorType::reduction);

    auto loop = scf::ForOp::create(
        rewriter, loc, indexConst(rewriter, loc, 0),
        indexConst(rewriter, loc, steps), indexConst(rewriter, loc, 1),
        ValueRange{state0, out0},
        [&](OpBuilder &b, Location l, Value t, ValueRange iters) {
          Value st = iters[0];
          Value zeroIdx = indexConst(b, l, 0);
          // Gating: S *= exp(decay_t).
          if (decay)
            st = linalg::GenericOp::create(
                     b, l, stateAccType, ValueRange{}, st,
                     ArrayRef<AffineMap>{id4}, parallelIterators(4),
                     [&](OpBuilder &nb, Location nl, ValueRange args) {
                       Value g =
                           read(nb, nl, decay,
                                {index(nb, nl, 0), index(nb, nl, 1), t,
                                 perKeyDecay ? index(nb, nl, 2) : zeroIdx});
                       linalg::YieldOp::create(
                           nb, nl,
                           arith::MulFOp::create(nb, nl, args[0],
                                                 math::ExpOp::create(nb, nl, g))
                               .getResult());
                     })
                     .getResult(0);
          // The value written: v_t, or beta_t * (v_t - S^T k_t).
          Value vt;
          if (beta) {
            Value retrieved =
                linalg::GenericOp::create(
                    b, l, rowType, st,
                    createFilled(b, l, rowType, b.getFloatAttr(acc, 0.0)),
                    ArrayRef<AffineMap>{selectDims(ctx, 4, {0, 1, 3, 2}),
                                        selectDims(ctx, 4, {0, 1, 2})},
                    reduceLast,
                    [&](OpBuilder &nb, Location nl, ValueRange args) {
                      Value kd = read(nb, nl, k,
                                      {index(nb, nl, 0), index(nb, nl, 1), t,
                                       index(nb, nl, 3)});
                      Value p = arith::MulFOp::create(nb, nl, args[0], kd);
                      linalg::YieldOp::create(
                          nb, nl,
                          arith::AddFOp::create(nb, nl, args[1], p)
                              .getResult());
                    })
                    .getResult(0);
            vt =
                linalg::GenericOp::create(
                    b, l, rowType, retrieved, createEmpty(b, l, rowType),
                    ArrayRef<AffineMap>{id3, id3}, parallelIterators(3),
                    [&](OpBuilder &nb, Location nl, ValueRange args) {
                      Value bi = index(nb, nl, 0), hi = index(nb, nl, 1);
                      Value bt =
                          read(nb, nl, beta,
                               {bi, perHeadBeta ? hi : zeroIdx, t, zeroIdx});
                      Value vm = read(nb, nl, v, {bi, hi, t, index(nb, nl, 2)});
                      linalg::YieldOp::create(
                          nb, nl,
                          arith::MulFOp::create(
                              nb, nl, bt,
                              arith::SubFOp::create(nb, nl, vm, args[0]))
                              .getResult());
                    })
                    .getResult(0);
          }
          // S += k_t (outer) v_t. The state updates write into the loop's
          // state in place, as one-shot bufferization needs for iter_args.
          SmallVector<Value> inputs;
          SmallVector<AffineMap> maps;
          if (vt) {
            inputs.push_back(vt);
            maps.push_back(selectDims(ctx, 4, {0, 1, 3}));
          }
          maps.push_back(id4);
          st = linalg::GenericOp::create(
                   b, l, stateAccType, inputs, st, maps, parallelIterators(4),
                   [&](OpBuilder &nb, Location nl, ValueRange args) {
                     Value bi = index(nb, nl, 0), hi = index(nb, nl, 1);
                     Value kd = read(nb, nl, k, {bi, hi, t, index(nb, nl, 2)});
                     Value vm =
                         vt ? args[0]
                            : read(nb, nl, v, {bi, hi, t, index(nb, nl, 3)});
                     Value p = arith::MulFOp::create(nb, nl, kd, vm);
                     linalg::YieldOp::create(
                         nb, nl,
                         arith::AddFOp::create(nb, nl, args.back(), p)
                             .getResult());
                   })
                   .getResult(0);
          // o_t[b, h, m] = sum_d q_t[b, h, d] * S[b, h / g, d, m], computed
          // in the output's time-t slice (extract/insert pair: in place, no
          // copy after bufferization).
          SmallVector<OpFoldResult> offsets{
              b.getIndexAttr(0), b.getIndexAttr(0), t, b.getIndexAttr(0)};
          SmallVector<OpFoldResult> sizes{
              b.getIndexAttr(batch), b.getIndexAttr(qHeads), b.getIndexAttr(1),
              b.getIndexAttr(dv)};
          SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
          Value slice = tensor::ExtractSliceOp::create(b, l, stepType, iters[1],
                                                       offsets, sizes, strides);
          Value zero = arith::ConstantOp::create(b, l, b.getFloatAttr(acc, 0));
          slice = linalg::FillOp::create(b, l, zero, slice).getResult(0);
          Value ot =
              linalg::GenericOp::create(
                  b, l, stepType, st, slice,
                  ArrayRef<AffineMap>{groupedMap(ctx, 4, {0, 1, 3, 2}, groups),
                                      selectDims(ctx, 4, {0, 1, 2})},
                  reduceLast,
                  [&](OpBuilder &nb, Location nl, ValueRange args) {
                    Value qd = read(nb, nl, q,
                                    {index(nb, nl, 0), index(nb, nl, 1), t,
                                     index(nb, nl, 3)});
                    Value p = arith::MulFOp::create(nb, nl, qd, args[0]);
                    linalg::YieldOp::create(
                        nb, nl,
                        arith::AddFOp::create(nb, nl, args[1], p).getResult());
                  })
                  .getResult(0);
          Value out = tensor::InsertSliceOp::create(b, l, ot, iters[1], offsets,
                                                    sizes, strides);
          scf::YieldOp::create(b, l, ValueRange{st, out});
        });

    double scale = op.getScale().convertToDouble();
    Value result = buildElementwise(
        rewriter, loc, RankedTensorType::get(outAccType.getShape(), element),
        loop.getResult(1), [&](OpBuilder &b, Location l, ValueRange args) {
          return truncateTo(b, l,
                            arith::MulFOp::create(b, l, args[0],
                                                  floatConst(b, l, acc, scale)),
                            element);
        });
    Type stateElement = stateType.getElementType();
    Value present = buildElementwise(
        rewriter, loc, stateType, loop.getResult(0),
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          if (stateElement == acc)
            return args[0];
          if (cast<FloatType>(stateElement).getWidth() <
              cast<FloatType>(acc).getWidth())
            return truncateTo(b, l, args[0], stateElement);
          return extendTo(b, l, args[0], stateElement);
        });
    rewriter.replaceOp(op, {result, present});
    return success();
  }
};

} // namespace

void mlir::ridge::linalg_lowering::populateTransformerToLinalgPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<OnlineAttentionLowering, AttentionLowering, RMSNormLowering,
               GeluLowering, RotaryEmbeddingLowering, LinearAttentionLowering>(
      converter, patterns.getContext());
}
