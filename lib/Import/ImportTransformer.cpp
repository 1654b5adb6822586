//===- ImportTransformer.cpp - transformer building blocks ---------------===//
//
// ONNX node handlers: transformer building blocks (attention, RMS
// normalization, rotary embeddings, gated activations). Attention, RMS
// normalization, rotary embeddings, Gelu and LinearAttention become single
// ridge ops that fusion can match; Swish, SwiGLU, LpNormalization,
// GroupNormalization and CausalConvWithState are expanded into existing
// ridge ops (ONNX defines them as functions).
//
//===----------------------------------------------------------------------===//

#include "ImporterInternal.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::onnx_import;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Required operand `i` as a float tensor.
static FailureOr<Value> requireFloatOperand(NodeContext &n, unsigned i) {
  FailureOr<Value> v = requireOperand(n, i);
  if (failed(v))
    return failure();
  if (!isa<FloatType>(typeOf(*v).getElementType())) {
    n.emitError() << "expects a floating-point input " << i << ", got "
                  << v->getType();
    return failure();
  }
  return v;
}

/// `axis` made non-negative for rank `rank`; failure (reported) if out of
/// range.
static FailureOr<int64_t> normalizeAxis(NodeContext &n, int64_t axis,
                                        int64_t rank) {
  int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= rank) {
    n.emitError() << "axis " << axis << " out of range for rank " << rank;
    return failure();
  }
  return normalized;
}

/// A constant of `type` whose elements all hold `value`.
static Value splatConstant(NodeContext &n, RankedTensorType type,
                           double value) {
  Type element = type.getElementType();
  Attribute attr =
      isa<FloatType>(element)
          ? Attribute(FloatAttr::get(element, value))
          : Attribute(IntegerAttr::get(element, static_cast<int64_t>(value)));
  return ConstantOp::create(n.builder, n.loc,
                            DenseElementsAttr::get(type, attr));
}

static Value scalarConstant(NodeContext &n, Type element, double value) {
  return splatConstant(n, RankedTensorType::get({}, element), value);
}

static Value transpose(NodeContext &n, Value v, ArrayRef<int64_t> perm) {
  return TransposeOp::create(n.builder, n.loc, v,
                             n.builder.getDenseI64ArrayAttr(perm));
}

template <typename OpTy> static Value binary(NodeContext &n, Value a, Value b) {
  return OpTy::create(n.builder, n.loc, a, b);
}

static Value createReduce(NodeContext &n, Value input, ReduceKind kind,
                          ArrayRef<int64_t> axes) {
  return ReduceOp::create(n.builder, n.loc, input, kind,
                          n.builder.getDenseI64ArrayAttr(axes), true);
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// [B, S, H * D] -> [B, H, S, D].
static FailureOr<Value> splitHeads(NodeContext &n, Value v, int64_t heads,
                                   StringRef what) {
  auto type = typeOf(v);
  int64_t hidden = type.getDimSize(2);
  if (heads <= 0 || hidden % heads != 0) {
    n.emitError() << what << " hidden size " << hidden
                  << " is not a multiple of the head count " << heads;
    return failure();
  }
  Value r = reshapeTo(
      n, v, {type.getDimSize(0), type.getDimSize(1), heads, hidden / heads});
  return transpose(n, r, {0, 2, 1, 3});
}

static LogicalResult importAttention(NodeContext &n) {
  FailureOr<Value> q = requireFloatOperand(n, 0);
  FailureOr<Value> k = requireFloatOperand(n, 1);
  FailureOr<Value> v = requireFloatOperand(n, 2);
  if (failed(q) || failed(k) || failed(v))
    return failure();
  int64_t rank = typeOf(*q).getRank();
  if (rank != 3 && rank != 4)
    return n.emitError() << "expects 3-D or 4-D Q/K/V, got rank " << rank;
  if (typeOf(*k).getRank() != rank || typeOf(*v).getRank() != rank)
    return n.emitError() << "Q, K and V must have the same rank";
  Type element = typeOf(*q).getElementType();
  if (typeOf(*k).getElementType() != element ||
      typeOf(*v).getElementType() != element)
    return n.emitError() << "Q, K and V element types differ";
  if (rank == 3) {
    if (!n.attr("q_num_heads") || !n.attr("kv_num_heads"))
      return n.emitError()
             << "3-D inputs need the q_num_heads and kv_num_heads attributes";
    int64_t qHeads = n.attrInt("q_num_heads", 0);
    int64_t kvHeads = n.attrInt("kv_num_heads", 0);
    q = splitHeads(n, *q, qHeads, "Q");
    if (failed(q))
      return failure();
    k = splitHeads(n, *k, kvHeads, "K");
    if (failed(k))
      return failure();
    v = splitHeads(n, *v, kvHeads, "V");
    if (failed(v))
      return failure();
  }

  // The KV cache: present = concat(past, new) along the sequence.
  Value pastKey = n.operand(4), pastValue = n.operand(5);
  Value nonpad = n.operand(6);
  if (!pastKey != !pastValue)
    return n.emitError() << "past_key and past_value must be given together";
  if (nonpad && pastKey)
    return n.emitError()
           << "nonpad_kv_seqlen cannot be combined with past_key/past_value";
  int64_t pastLength = 0;
  if (pastKey) {
    for (auto [past, cur, what] :
         {std::tuple<Value, Value, StringRef>{pastKey, *k, "past_key"},
          {pastValue, *v, "past_value"}}) {
      auto pt = typeOf(past), ct = typeOf(cur);
      if (pt.getRank() != 4 || pt.getElementType() != element ||
          pt.getDimSize(0) != ct.getDimSize(0) ||
          pt.getDimSize(1) != ct.getDimSize(1) ||
          pt.getDimSize(3) != ct.getDimSize(3))
        return n.emitError() << what << " " << pt
                             << " does not match the new keys/values " << ct;
    }
    pastLength = typeOf(pastKey).getDimSize(2);
    k = ConcatOp::create(n.builder, n.loc, ValueRange{pastKey, *k},
                         n.builder.getI64IntegerAttr(2))
            .getResult();
    v = ConcatOp::create(n.builder, n.loc, ValueRange{pastValue, *v},
                         n.builder.getI64IntegerAttr(2))
            .getResult();
  }
  auto qType = typeOf(*q), kType = typeOf(*k), vType = typeOf(*v);
  int64_t batch = qType.getDimSize(0), qHeads = qType.getDimSize(1),
          kvHeads = kType.getDimSize(1), kvLength = kType.getDimSize(2);
  if (kType.getDimSize(0) != batch || vType.getDimSize(0) != batch ||
      vType.getDimSize(1) != kvHeads || vType.getDimSize(2) != kvLength)
    return n.emitError() << "inconsistent Q/K/V shapes " << qType << ", "
                         << kType << ", " << vType;
  if (kType.getDimSize(3) != qType.getDimSize(3))
    return n.emitError() << "Q head size " << qType.getDimSize(3)
                         << " differs from K head size " << kType.getDimSize(3);
  if (kvHeads <= 0 || qHeads % kvHeads != 0)
    return n.emitError() << "kv heads (" << kvHeads << ") must divide q heads ("
                         << qHeads << ")";

  // The mask may cover fewer keys than the (cache-extended) sequence; the
  // missing ones are masked out.
  Value mask = n.operand(3);
  if (mask) {
    auto maskType = typeOf(mask);
    Type me = maskType.getElementType();
    if (!me.isInteger(1) && !isa<FloatType>(me))
      return n.emitError() << "attn_mask must be bool or float, got " << me;
    if (isa<FloatType>(me) && me != element)
      mask = CastOp::create(n.builder, n.loc,
                            RankedTensorType::get(maskType.getShape(), element),
                            mask);
    maskType = typeOf(mask);
    if (maskType.getRank() < 1 || maskType.getRank() > 4)
      return n.emitError() << "attn_mask rank must be 1..4, got "
                           << maskType.getRank();
    int64_t keys = maskType.getShape().back();
    if (keys > kvLength)
      return n.emitError() << "attn_mask covers " << keys << " keys, more than "
                           << kvLength;
    if (keys < kvLength) {
      SmallVector<int64_t> padShape(maskType.getShape());
      padShape.back() = kvLength - keys;
      auto padType = RankedTensorType::get(padShape, maskType.getElementType());
      Value pad = splatConstant(
          n, padType, maskType.getElementType().isInteger(1) ? 0.0 : -INFINITY);
      mask =
          ConcatOp::create(n.builder, n.loc, ValueRange{mask, pad},
                           n.builder.getI64IntegerAttr(maskType.getRank() - 1))
              .getResult();
    }
    SmallVector<int64_t> scores{batch, qHeads, qType.getDimSize(2), kvLength};
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes(scores, typeOf(mask).getShape());
    if (failed(shape) || ArrayRef<int64_t>(*shape) != ArrayRef(scores))
      return n.emitError() << "attn_mask " << maskType
                           << " does not broadcast to the scores' shape";
  }
  if (nonpad) {
    auto t = typeOf(nonpad);
    if (!t.getElementType().isInteger(64) || t.getRank() != 1 ||
        t.getDimSize(0) != batch)
      return n.emitError() << "nonpad_kv_seqlen must be int64 [" << batch
                           << "], got " << t;
  }

  double scale = n.attr("scale") ? n.attrFloat("scale", 1.0f)
                                 : 1.0 / std::sqrt(qType.getDimSize(3));
  double softcap = n.attrFloat("softcap", 0.0f);
  if (softcap < 0)
    return n.emitError() << "softcap must be >= 0, got " << softcap;
  int64_t mode = n.attrInt("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3)
    return n.emitError() << "unsupported qk_matmul_output_mode " << mode;
  int64_t left = n.attrInt("left_window_size", -1),
          right = n.attrInt("right_window_size", -1);
  if (left < -1 || right < -1)
    return n.emitError() << "window sizes must be -1 or non-negative";

  TypeAttr softmaxType;
  if (const auto *a = n.attr("softmax_precision")) {
    Type t = getElementType(n.builder.getContext(), a->i());
    if (!t || !isa<FloatType>(t))
      return n.emitError() << "softmax_precision " << a->i()
                           << " is not a supported float type";
    softmaxType = TypeAttr::get(t);
  }
  auto op = AttentionOp::create(
      n.builder, n.loc, *q, *k, *v, mask, nonpad, APFloat(float(scale)),
      n.attrInt("is_causal", 0) != 0, pastLength, left, right,
      APFloat(float(softcap)), mode, softmaxType);
  Value result = op.getResult();
  if (rank == 3) {
    auto type = typeOf(result);
    result = reshapeTo(
        n, transpose(n, result, {0, 2, 1, 3}),
        {batch, type.getDimSize(2), type.getDimSize(1) * type.getDimSize(3)});
  }
  n.setResult(0, result);
  if (n.getNumResults() > 1)
    n.setResult(1, *k);
  if (n.getNumResults() > 2)
    n.setResult(2, *v);
  if (n.getNumResults() > 3)
    n.setResult(3, op.getQk());
  return success();
}

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

static LogicalResult importRMSNormalization(NodeContext &n) {
  FailureOr<Value> input = requireFloatOperand(n, 0);
  FailureOr<Value> scale = requireFloatOperand(n, 1);
  if (failed(input) || failed(scale))
    return failure();
  auto type = typeOf(*input);
  if (type.getRank() == 0)
    return n.emitError() << "expects an input of rank >= 1";
  FailureOr<int64_t> axis =
      normalizeAxis(n, n.attrInt("axis", -1), type.getRank());
  if (failed(axis))
    return failure();
  auto scaleType = typeOf(*scale);
  ArrayRef<int64_t> normalized = type.getShape().drop_front(*axis);
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(normalized, scaleType.getShape());
  if (scaleType.getElementType() != type.getElementType())
    return n.emitError() << "scale element type " << scaleType.getElementType()
                         << " differs from the input's";
  if (failed(shape) || ArrayRef<int64_t>(*shape) != normalized)
    return n.emitError() << "scale " << scaleType
                         << " does not broadcast to the normalized shape";
  n.setResult(0, RMSNormOp::create(n.builder, n.loc, *input, *scale, *axis,
                                   APFloat(n.attrFloat("epsilon", 1e-5f)),
                                   n.attrInt("stash_type", 1)));
  return success();
}

static LogicalResult importLpNormalization(NodeContext &n) {
  FailureOr<Value> input = requireFloatOperand(n, 0);
  if (failed(input))
    return failure();
  auto type = typeOf(*input);
  if (type.getRank() == 0)
    return n.emitError() << "expects an input of rank >= 1";
  FailureOr<int64_t> axis =
      normalizeAxis(n, n.attrInt("axis", -1), type.getRank());
  if (failed(axis))
    return failure();
  int64_t p = n.attrInt("p", 2);
  Value norm;
  if (p == 1) {
    norm = createReduce(n, AbsOp::create(n.builder, n.loc, *input),
                        ReduceKind::Sum, {*axis});
  } else if (p == 2) {
    norm = SqrtOp::create(n.builder, n.loc,
                          createReduce(n, binary<MulOp>(n, *input, *input),
                                       ReduceKind::Sum, {*axis}));
  } else {
    return n.emitError() << "p must be 1 or 2, got " << p;
  }
  // A zero norm yields 0 rather than 0 / 0 (as the ONNX reference does).
  Type element = type.getElementType();
  Value zero = scalarConstant(n, element, 0.0);
  Value isZero = binary<EqualOp>(n, norm, zero);
  n.setResult(0, SelectOp::create(n.builder, n.loc, isZero, zero,
                                  binary<DivOp>(n, *input, norm)));
  return success();
}

/// GroupNormalization-18 (scale/bias per group) and -21 (per channel):
/// normalizes [N, G, C/G * spatial] with ridge.layer_norm, then applies the
/// per-channel scale and bias.
static LogicalResult importGroupNormalization(NodeContext &n) {
  FailureOr<Value> input = requireFloatOperand(n, 0);
  FailureOr<Value> scale = requireFloatOperand(n, 1);
  FailureOr<Value> bias = requireFloatOperand(n, 2);
  if (failed(input) || failed(scale) || failed(bias))
    return failure();
  auto type = typeOf(*input);
  Type element = type.getElementType();
  int64_t rank = type.getRank();
  if (rank < 2)
    return n.emitError() << "expects an input of rank >= 2";
  int64_t groups = n.attrInt("num_groups", 0);
  int64_t channels = type.getDimSize(1);
  if (groups <= 0 || channels % groups != 0)
    return n.emitError() << "num_groups " << groups
                         << " must be positive and divide the channels "
                         << channels;
  int64_t perGroup = type.getNumElements() / type.getDimSize(0) / groups;
  Value grouped = reshapeTo(n, *input, {type.getDimSize(0), groups, perGroup});
  Value ones = splatConstant(n, RankedTensorType::get({1}, element), 1.0);
  auto norm = LayerNormOp::create(n.builder, n.loc, grouped, ones, Value(), 2,
                                  APFloat(n.attrFloat("epsilon", 1e-5f)),
                                  n.attrInt("stash_type", 1));
  Value y = reshapeTo(n, norm.getResult(), type.getShape());
  bool perChannel = n.opset >= 21;
  SmallVector<int64_t> paramShape{perChannel ? channels : groups};
  SmallVector<Value> params;
  for (Value param : {*scale, *bias}) {
    auto pt = typeOf(param);
    if (pt.getElementType() != element || pt.getShape() != ArrayRef(paramShape))
      return n.emitError() << "scale/bias must be " << element << " ["
                           << paramShape[0] << "], got " << pt;
    if (!perChannel) {
      // Per-group parameters repeat over the channels of their group.
      param = reshapeTo(n, param, {groups, 1});
      Value zeros = splatConstant(
          n, RankedTensorType::get({groups, channels / groups}, element), 0.0);
      param = reshapeTo(n, binary<AddOp>(n, param, zeros), {channels});
    }
    SmallVector<int64_t> shape{channels};
    shape.append(rank - 2, 1);
    params.push_back(reshapeTo(n, param, shape));
  }
  n.setResult(0, binary<AddOp>(n, binary<MulOp>(n, y, params[0]), params[1]));
  return success();
}

//===----------------------------------------------------------------------===//
// Activations and rotary embeddings
//===----------------------------------------------------------------------===//

static LogicalResult importGelu(NodeContext &n) {
  FailureOr<Value> input = requireFloatOperand(n, 0);
  if (failed(input))
    return failure();
  std::string approximate = n.attrString("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return n.emitError() << "unsupported approximate '" << approximate << "'";
  n.setResult(0, GeluOp::create(n.builder, n.loc, *input,
                                n.builder.getStringAttr(approximate)));
  return success();
}

/// x * sigmoid(alpha * x).
static Value swish(NodeContext &n, Value x, float alpha) {
  Type element = typeOf(x).getElementType();
  Value arg = alpha == 1.0f
                  ? x
                  : binary<MulOp>(n, x, scalarConstant(n, element, alpha));
  return binary<MulOp>(n, x, SigmoidOp::create(n.builder, n.loc, arg));
}

static LogicalResult importSwish(NodeContext &n) {
  FailureOr<Value> input = requireFloatOperand(n, 0);
  if (failed(input))
    return failure();
  n.setResult(0, swish(n, *input, n.attrFloat("alpha", 1.0f)));
  return success();
}

static LogicalResult importSwiGLU(NodeContext &n) {
  FailureOr<Value> a = requireFloatOperand(n, 0);
  FailureOr<Value> b = requireFloatOperand(n, 1);
  if (failed(a) || failed(b))
    return failure();
  if (a->getType() != b->getType())
    return n.emitError() << "A and B must have identical types, got "
                         << a->getType() << " and " << b->getType();
  n.setResult(0,
              binary<MulOp>(n, swish(n, *a, n.attrFloat("alpha", 1.0f)), *b));
  return success();
}

static LogicalResult importRotaryEmbedding(NodeContext &n) {
  FailureOr<Value> input = requireFloatOperand(n, 0);
  FailureOr<Value> cosCache = requireFloatOperand(n, 1);
  FailureOr<Value> sinCache = requireFloatOperand(n, 2);
  if (failed(input) || failed(cosCache) || failed(sinCache))
    return failure();
  Value positions = n.operand(3);
  auto type = typeOf(*input);
  Value x = *input;
  int64_t numHeads = n.attrInt("num_heads", 0);
  if (type.getRank() == 3) {
    if (numHeads <= 0)
      return n.emitError() << "3-D input needs a positive num_heads";
    FailureOr<Value> split = splitHeads(n, x, numHeads, "input");
    if (failed(split))
      return failure();
    x = *split;
  } else if (type.getRank() != 4) {
    return n.emitError() << "expects a 3-D or 4-D input, got rank "
                         << type.getRank();
  }
  auto xType = typeOf(x);
  int64_t headSize = xType.getDimSize(3);
  int64_t dim = n.attrInt("rotary_embedding_dim", 0);
  if (dim == 0)
    dim = headSize;
  if (dim < 0 || dim % 2 != 0 || dim > headSize)
    return n.emitError() << "rotary_embedding_dim " << dim
                         << " must be even and <= the head size " << headSize;
  auto cosType = typeOf(*cosCache);
  if (cosType != typeOf(*sinCache) ||
      cosType.getElementType() != xType.getElementType() ||
      cosType.getShape().back() != dim / 2)
    return n.emitError() << "cos/sin caches " << cosType << ", "
                         << sinCache->getType()
                         << " must match and end in rotary_embedding_dim / 2";
  if (positions) {
    auto pt = typeOf(positions);
    if (!isa<IntegerType>(pt.getElementType()) ||
        pt.getShape() !=
            ArrayRef<int64_t>{xType.getDimSize(0), xType.getDimSize(2)} ||
        cosType.getRank() != 2)
      return n.emitError() << "position_ids " << pt
                           << " must be integer [batch, sequence] with rank-2 "
                              "caches";
  } else if (cosType.getShape() != ArrayRef<int64_t>{xType.getDimSize(0),
                                                     xType.getDimSize(2),
                                                     dim / 2}) {
    return n.emitError() << "without position_ids the caches must be [batch, "
                            "sequence, rotary_embedding_dim / 2], got "
                         << cosType;
  }
  Value y = RotaryEmbeddingOp::create(n.builder, n.loc, xType, x, *cosCache,
                                      *sinCache, positions, dim,
                                      n.attrInt("interleaved", 0) != 0);
  if (type.getRank() == 3)
    y = reshapeTo(n, transpose(n, y, {0, 2, 1, 3}), type.getShape());
  n.setResult(0, y);
  return success();
}

//===----------------------------------------------------------------------===//
// LinearAttention
//===----------------------------------------------------------------------===//

static LogicalResult importLinearAttention(NodeContext &n) {
  FailureOr<Value> q = requireFloatOperand(n, 0);
  FailureOr<Value> k = requireFloatOperand(n, 1);
  FailureOr<Value> v = requireFloatOperand(n, 2);
  if (failed(q) || failed(k) || failed(v))
    return failure();
  Value past = n.operand(3), decay = n.operand(4), beta = n.operand(5);
  std::string rule = n.attrString("update_rule", "gated_delta");
  bool gating = rule == "gated" || rule == "gated_delta";
  bool delta = rule == "delta" || rule == "gated_delta";
  if (!gating && !delta && rule != "linear")
    return n.emitError() << "unsupported update_rule '" << rule << "'";
  if (gating != bool(decay))
    return n.emitError() << "update_rule '" << rule
                         << (gating ? "' requires" : "' forbids")
                         << " the decay input";
  if (delta != bool(beta))
    return n.emitError() << "update_rule '" << rule
                         << (delta ? "' requires" : "' forbids")
                         << " the beta input";
  int64_t qHeads = n.attrInt("q_num_heads", 0),
          kvHeads = n.attrInt("kv_num_heads", 0);
  if (qHeads <= 0 || kvHeads <= 0 || qHeads % kvHeads != 0)
    return n.emitError() << "q_num_heads (" << qHeads
                         << ") must be a positive multiple of kv_num_heads ("
                         << kvHeads << ")";
  for (Value x : {*q, *k, *v})
    if (typeOf(x).getRank() != 3)
      return n.emitError() << "query, key and value must be rank 3";
  auto qType3 = typeOf(*q);
  Type element = qType3.getElementType();
  if (typeOf(*k).getElementType() != element ||
      typeOf(*v).getElementType() != element)
    return n.emitError() << "query, key and value element types differ";
  int64_t batch = qType3.getDimSize(0), steps = qType3.getDimSize(1);
  for (Value x : {*k, *v})
    if (typeOf(x).getDimSize(0) != batch || typeOf(x).getDimSize(1) != steps)
      return n.emitError() << "query, key and value differ in batch or length";
  q = splitHeads(n, *q, qHeads, "query");
  if (failed(q))
    return failure();
  k = splitHeads(n, *k, kvHeads, "key");
  if (failed(k))
    return failure();
  v = splitHeads(n, *v, kvHeads, "value");
  if (failed(v))
    return failure();
  int64_t dk = typeOf(*q).getDimSize(3), dv = typeOf(*v).getDimSize(3);
  if (typeOf(*k).getDimSize(3) != dk)
    return n.emitError() << "query and key head sizes differ";
  auto stateType = RankedTensorType::get({batch, kvHeads, dk, dv}, element);
  if (past) {
    auto t = typeOf(past);
    if (t.getShape() != stateType.getShape() ||
        !isa<FloatType>(t.getElementType()))
      return n.emitError() << "past_state " << t << " must be float [" << batch
                           << ", " << kvHeads << ", " << dk << ", " << dv
                           << "]";
  } else {
    past = splatConstant(n, stateType, 0.0);
  }
  // decay [B, T, Hkv] or [B, T, Hkv * Dk] -> [B, Hkv, T, 1 or Dk].
  if (decay) {
    auto t = typeOf(decay);
    if (t.getRank() != 3 || t.getDimSize(0) != batch ||
        t.getDimSize(1) != steps || t.getElementType() != element ||
        (t.getDimSize(2) != kvHeads && t.getDimSize(2) != kvHeads * dk))
      return n.emitError() << "decay " << t
                           << " must be [batch, length, kv_num_heads or "
                              "kv_num_heads * head_size]";
    int64_t last = t.getDimSize(2) == kvHeads * dk ? dk : 1;
    decay = transpose(n, reshapeTo(n, decay, {batch, steps, kvHeads, last}),
                      {0, 2, 1, 3});
  }
  // beta [B, T, Hkv or 1] -> [B, Hkv or 1, T, 1].
  if (beta) {
    auto t = typeOf(beta);
    if (t.getRank() != 3 || t.getDimSize(0) != batch ||
        t.getDimSize(1) != steps || t.getElementType() != element ||
        (t.getDimSize(2) != kvHeads && t.getDimSize(2) != 1))
      return n.emitError() << "beta " << t
                           << " must be [batch, length, kv_num_heads or 1]";
    beta = transpose(n, reshapeTo(n, beta, {batch, steps, t.getDimSize(2), 1}),
                     {0, 2, 1, 3});
  }
  float scale = n.attrFloat("scale", 0.0f);
  if (scale == 0.0f)
    scale = 1.0 / std::sqrt(double(dk));
  auto op = LinearAttentionOp::create(n.builder, n.loc, *q, *k, *v, past, decay,
                                      beta, APFloat(scale));
  n.setResult(0, reshapeTo(n, transpose(n, op.getResult(), {0, 2, 1, 3}),
                           {batch, steps, qHeads * dv}));
  if (n.getNumResults() > 1)
    n.setResult(1, op.getPresentState());
  return success();
}

//===----------------------------------------------------------------------===//
// CausalConvWithState
//===----------------------------------------------------------------------===//

/// A depthwise causal 1-D convolution over [past_state, input] (ONNX
/// CausalConvWithState-27): ridge.concat, a grouped ridge.conv, an optional
/// SiLU, and the last k - 1 padded positions as the new state.
static LogicalResult importCausalConvWithState(NodeContext &n) {
  FailureOr<Value> input = requireFloatOperand(n, 0);
  FailureOr<Value> weight = requireFloatOperand(n, 1);
  if (failed(input) || failed(weight))
    return failure();
  Value bias = n.operand(2), past = n.operand(3);
  auto type = typeOf(*input), wType = typeOf(*weight);
  Type element = type.getElementType();
  if (type.getRank() != 3)
    return n.emitError() << "input must be rank 3 [batch, channels, length]";
  int64_t batch = type.getDimSize(0), channels = type.getDimSize(1),
          length = type.getDimSize(2);
  if (wType.getRank() != 3 || wType.getDimSize(0) != channels ||
      wType.getDimSize(1) != 1 || wType.getElementType() != element)
    return n.emitError() << "weight " << wType << " must be [" << channels
                         << ", 1, k] of the input's element type";
  int64_t k = wType.getDimSize(2);
  if (k < 1)
    return n.emitError() << "kernel size must be >= 1";
  if (bias && (typeOf(bias).getShape() != ArrayRef<int64_t>{channels} ||
               typeOf(bias).getElementType() != element))
    return n.emitError() << "bias " << typeOf(bias) << " must be [" << channels
                         << "]";
  std::string activation = n.attrString("activation", "none");
  if (activation != "none" && activation != "silu" && activation != "swish")
    return n.emitError() << "unsupported activation '" << activation << "'";
  auto stateType = RankedTensorType::get({batch, channels, k - 1}, element);
  if (past && typeOf(past) != stateType)
    return n.emitError() << "past_state " << typeOf(past) << " must be "
                         << stateType;

  Value padded = *input;
  if (k > 1) {
    if (!past)
      past = splatConstant(n, stateType, 0.0);
    padded = ConcatOp::create(n.builder, n.loc, ValueRange{past, *input},
                              n.builder.getI64IntegerAttr(2))
                 .getResult();
  }
  Value y = ConvOp::create(n.builder, n.loc, type, padded, *weight, bias,
                           n.builder.getDenseI64ArrayAttr({1}),
                           n.builder.getDenseI64ArrayAttr({0, 0}),
                           n.builder.getDenseI64ArrayAttr({1}),
                           n.builder.getI64IntegerAttr(channels))
                .getResult();
  if (activation != "none")
    y = swish(n, y, 1.0f);
  n.setResult(0, y);
  if (n.getNumResults() > 1) {
    Value present =
        k > 1 ? SliceOp::create(
                    n.builder, n.loc, padded,
                    n.builder.getDenseI64ArrayAttr({0, 0, length}),
                    n.builder.getDenseI64ArrayAttr({batch, channels, k - 1}),
                    n.builder.getDenseI64ArrayAttr({1, 1, 1}))
                    .getResult()
              : splatConstant(n, stateType, 0.0);
    n.setResult(1, present);
  }
  return success();
}

void mlir::ridge::onnx_import::registerTransformerHandlers(
    OnnxHandlerTable &table) {
  table.add("Attention", 23, importAttention);
  table.add("RMSNormalization", 23, importRMSNormalization);
  table.add("RotaryEmbedding", 23, importRotaryEmbedding);
  table.add("Gelu", 20, importGelu);
  table.add("LpNormalization", 1, importLpNormalization);
  table.add("GroupNormalization", 18, importGroupNormalization);
  table.add("Swish", 24, importSwish);
  table.add("SwiGLU", 28, importSwiGLU);
  table.add("CausalConvWithState", 27, importCausalConvWithState);
  table.add("LinearAttention", 27, importLinearAttention);
}
