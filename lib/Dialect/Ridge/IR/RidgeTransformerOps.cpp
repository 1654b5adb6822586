//===- RidgeTransformerOps.cpp - ridge Transformer ops
//---------------------------===//
//
// Type inference, verifiers, folders and costs of the ops declared in
// RidgeTransformerOps.td.
//
//===----------------------------------------------------------------------===//

#include "RidgeOpsCommon.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::detail;

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *ctx,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto q = cast<RankedTensorType>(adaptor.getQuery().getType());
  auto k = cast<RankedTensorType>(adaptor.getKey().getType());
  auto v = cast<RankedTensorType>(adaptor.getValue().getType());
  if (q.getRank() != 4 || k.getRank() != 4 || v.getRank() != 4)
    return inferenceError(loc, "query, key and value must be rank 4");
  Type element = q.getElementType();
  results.push_back(RankedTensorType::get(
      {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2), v.getDimSize(3)},
      element));
  results.push_back(RankedTensorType::get(
      {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2), k.getDimSize(2)},
      element));
  return success();
}

LogicalResult AttentionOp::verify() {
  auto q = getQuery().getType(), k = getKey().getType(),
       v = getValue().getType();
  if (q.getRank() != 4 || k.getRank() != 4 || v.getRank() != 4)
    return emitOpError("query, key and value must be rank 4");
  if (k.getElementType() != q.getElementType() ||
      v.getElementType() != q.getElementType())
    return emitOpError("query, key and value element types differ");
  int64_t batch = q.getDimSize(0), qHeads = q.getDimSize(1),
          kvHeads = k.getDimSize(1);
  if (k.getDimSize(0) != batch || v.getDimSize(0) != batch)
    return emitOpError("batch sizes of query, key and value differ");
  if (v.getDimSize(1) != kvHeads || v.getDimSize(2) != k.getDimSize(2))
    return emitOpError("key and value differ in heads or sequence length");
  if (k.getDimSize(3) != q.getDimSize(3))
    return emitOpError("query head size ")
           << q.getDimSize(3) << " differs from the key's " << k.getDimSize(3);
  if (kvHeads <= 0 || qHeads % kvHeads != 0)
    return emitOpError("key/value heads (")
           << kvHeads << ") must divide query heads (" << qHeads << ")";
  SmallVector<int64_t> scores{batch, qHeads, q.getDimSize(2), k.getDimSize(2)};
  if (Value mask = getMask()) {
    auto maskType = cast<RankedTensorType>(mask.getType());
    Type me = maskType.getElementType();
    if (!me.isInteger(1) && me != q.getElementType())
      return emitOpError("mask must be i1 or of the query's element type, got ")
             << me;
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes(scores, maskType.getShape());
    if (maskType.getRank() > 4 || failed(shape) ||
        ArrayRef<int64_t>(*shape) != ArrayRef<int64_t>(scores))
      return emitOpError("mask ")
             << maskType << " does not broadcast to the scores' shape";
  }
  if (Value lens = getNonpadKvSeqlen()) {
    auto type = cast<RankedTensorType>(lens.getType());
    if (type.getRank() != 1 || type.getDimSize(0) != batch)
      return emitOpError("nonpad_kv_seqlen must be [") << batch << "]";
  }
  if (getSoftcap().isNegative())
    return emitOpError("softcap must be >= 0");
  // I64Attr getters return uint64_t; the sizes are signed.
  if (static_cast<int64_t>(getLeftWindow()) < -1 ||
      static_cast<int64_t>(getRightWindow()) < -1)
    return emitOpError("window sizes must be -1 or non-negative");
  if (std::optional<Type> t = getSoftmaxType(); t && !isa<FloatType>(*t))
    return emitOpError("softmax_type must be a float type, got ") << *t;
  if (getQkMatmulOutputMode() > 3)
    return emitOpError("qk_matmul_output_mode must be 0..3, got ")
           << getQkMatmulOutputMode();
  return success();
}

// FLOPs: |scores| * (2 * (D + Dv) + 6): the QK^T and PV multiply-adds plus
// about 6 per score (scale, bias, max, exp, sum, divide). |scores| is
// B * Hq * Sq * Skv for the reference computation, which scores every key;
// the online form's key loop stops at the causal and window limits of each
// row (TransformerToLinalg), so there only the keys a row may see count (a
// causal square attention: about half). Masks and nonpad lengths are data
// and are not used to discount. Bytes: default (query, key, value, mask,
// nonpad_kv_seqlen and the result; the score matrix only when `qk` has
// uses, so a fused attention never writes it).
int64_t AttentionOp::getFlops() {
  auto q = getQuery().getType(), v = getValue().getType();
  int64_t scores = getNumElements(getQk().getType());
  if (scores < 0 || !q.hasStaticShape() || !v.hasStaticShape())
    return -1;
  // The I64Attr getters return uint64_t: read them signed.
  auto offset = static_cast<int64_t>(getQueryOffset());
  auto left = static_cast<int64_t>(getLeftWindow());
  auto right = static_cast<int64_t>(getRightWindow());
  bool limited = getIsCausal() || left >= 0 || right >= 0;
  if (limited && isOnlineSoftmaxForm() && !getNonpadKvSeqlen()) {
    int64_t queryLen = q.getDimSize(2);
    int64_t keyLen = getKey().getType().getDimSize(2);
    int64_t rows = q.getDimSize(0) * q.getDimSize(1);
    int64_t visible = 0;
    for (int64_t i = 0; i < queryLen; ++i) {
      int64_t pos = i + offset;
      int64_t upper = keyLen, lower = 0;
      if (getIsCausal())
        upper = std::min(upper, pos + 1);
      if (right >= 0)
        upper = std::min(upper, pos + right + 1);
      if (left >= 0)
        lower = std::max<int64_t>(0, pos - left);
      visible += std::max<int64_t>(0, upper - lower);
    }
    scores = rows * visible;
  }
  return scores * (2 * (q.getDimSize(3) + v.getDimSize(3)) + 6);
}

bool AttentionOp::isContraction() { return true; }

bool AttentionOp::isOnlineSoftmaxForm() {
  if (!getQk().use_empty())
    return false;
  for (Value operand : getOperation()->getOperands())
    if (!cast<RankedTensorType>(operand.getType()).hasStaticShape())
      return false;
  // f32, or one 16-bit format for Q, K and V (a bf16/f16 model): the
  // online form multiplies them as stored and rounds P to their format
  // (where the exported chain's Softmax stores P), keeping the scores in
  // f32 where the chain rounds them too.
  Type element = getQuery().getType().getElementType();
  if (!(element.isF32() || element.isF16() || element.isBF16()) ||
      getKey().getType().getElementType() != element ||
      getValue().getType().getElementType() != element)
    return false;
  Type softmax = getSoftmaxType().value_or(element);
  return softmax.isF32() || softmax == element;
}

// An attention computed online is a kernel that reads its operands one
// element at a time; one that stores its scores runs the reference
// computation, several loop nests, on its own.
FusionRole AttentionOp::getFusionRole() {
  return isOnlineSoftmaxForm() ? FusionRole::Attention : FusionRole::Opaque;
}

//===----------------------------------------------------------------------===//
// RMSNormOp
//===----------------------------------------------------------------------===//

LogicalResult RMSNormOp::inferReturnTypes(MLIRContext *ctx,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  results.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult RMSNormOp::verify() {
  auto type = getInput().getType();
  int64_t rank = type.getRank(), axis = getAxis();
  if (axis < 0 || axis >= rank)
    return emitOpError("axis ") << axis << " out of range for rank " << rank;
  auto scaleType = getScale().getType();
  if (scaleType.getElementType() != type.getElementType())
    return emitOpError("scale element type differs from the input");
  ArrayRef<int64_t> normalized = type.getShape().drop_front(axis);
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(normalized, scaleType.getShape());
  if (failed(shape) || ArrayRef<int64_t>(*shape) != normalized)
    return emitOpError("scale ")
           << scaleType << " does not broadcast to the normalized shape";
  return success();
}

// FLOPs: 4 * |x| + 3 * rows for rows of N = prod(shape[axis:]): square N,
// sum N - 1, mean divide 1, epsilon add 1, sqrt 1, reciprocal 1, normalize
// N, scale N, i.e. 4N + 3 per row. Bytes: default (x + scale + out).
int64_t RMSNormOp::getFlops() {
  int64_t elements = getNumElements(getType());
  if (elements < 0)
    return -1;
  int64_t rowSize = 1;
  for (int64_t size : getType().getShape().drop_front(getAxis()))
    rowSize *= size;
  int64_t rows = rowSize == 0 ? 0 : elements / rowSize;
  return 4 * elements + 3 * rows;
}

// Fusion: always a row reduction over the dims from `axis`.
FusionRole RMSNormOp::getFusionRole() { return FusionRole::Reduction; }

FailureOr<int64_t> RMSNormOp::getReductionRows() {
  return getRowsOfTrailingDims(getInput(), getAxis());
}

//===----------------------------------------------------------------------===//
// GeluOp
//===----------------------------------------------------------------------===//

LogicalResult GeluOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError("approximate must be \"none\" or \"tanh\", got \"")
           << getApproximate() << "\"";
  return success();
}

// FLOPs: 8 * |x|, about 5 (erf form) to 9 (tanh form) per element.
// Bytes: default (|in| + |out|).
int64_t GeluOp::getFlops() {
  int64_t elements = getNumElements(getType());
  return elements < 0 ? -1 : 8 * elements;
}

//===----------------------------------------------------------------------===//
// RotaryEmbeddingOp
//===----------------------------------------------------------------------===//

LogicalResult RotaryEmbeddingOp::verify() {
  auto type = getInput().getType();
  if (type.getRank() != 4)
    return emitOpError("input must be rank 4 [B, H, S, D], got ") << type;
  int64_t batch = type.getDimSize(0), seq = type.getDimSize(2),
          headSize = type.getDimSize(3), dim = getRotaryEmbeddingDim();
  if (dim <= 0 || dim % 2 != 0 || dim > headSize)
    return emitOpError("rotary_embedding_dim ")
           << dim << " must be even, positive and <= head size " << headSize;
  auto cosType = getCosCache().getType(), sinType = getSinCache().getType();
  if (cosType != sinType)
    return emitOpError("cos_cache and sin_cache types differ");
  if (cosType.getElementType() != type.getElementType())
    return emitOpError("cache element type differs from the input");
  if (cosType.getShape().back() != dim / 2)
    return emitOpError("cache last dimension must be rotary_embedding_dim / 2 "
                       "= ")
           << dim / 2;
  if (Value positions = getPositionIds()) {
    auto posType = cast<RankedTensorType>(positions.getType());
    if (posType.getShape() != ArrayRef<int64_t>{batch, seq})
      return emitOpError("position_ids must be [")
             << batch << ", " << seq << "]";
    if (cosType.getRank() != 2)
      return emitOpError("with position_ids the caches must be rank 2");
  } else if (cosType.getShape() != ArrayRef<int64_t>{batch, seq, dim / 2}) {
    return emitOpError("without position_ids the caches must be [")
           << batch << ", " << seq << ", " << dim / 2 << "]";
  }
  return success();
}

// FLOPs: 3 * B * H * S * R, two multiplies and an add per rotated element;
// the D - R pass-through features cost nothing.
int64_t RotaryEmbeddingOp::getFlops() {
  int64_t elements = getNumElements(getType());
  int64_t headSize = getType().getDimSize(3);
  if (elements < 0)
    return -1;
  if (headSize == 0)
    return 0;
  return 3 * (elements / headSize) *
         static_cast<int64_t>(getRotaryEmbeddingDim());
}

// Bytes: default (input, both caches, position_ids, out), except that a
// [P, R/2] cache indexed by `position_ids` is read only at the B * S
// positions used: min(|cache|, B * S * R/2) elements of each cache.
int64_t RotaryEmbeddingOp::getMinBytes() {
  int64_t total = sumOperandAndResultBytes(getOperation());
  Value positions = getPositionIds();
  if (total < 0 || !positions)
    return total;
  RankedTensorType cache = getCosCache().getType();
  int64_t used = getNumElements(positions.getType()) * cache.getShape().back();
  int64_t unread = std::max<int64_t>(cache.getNumElements() - used, 0);
  return total - 2 * unread * getElementByteWidth(cache.getElementType());
}

//===----------------------------------------------------------------------===//
// LinearAttentionOp
//===----------------------------------------------------------------------===//

LogicalResult LinearAttentionOp::inferReturnTypes(
    MLIRContext *ctx, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  auto q = cast<RankedTensorType>(adaptor.getQuery().getType());
  auto v = cast<RankedTensorType>(adaptor.getValue().getType());
  if (q.getRank() != 4 || v.getRank() != 4)
    return inferenceError(loc, "query and value must be rank 4");
  results.push_back(RankedTensorType::get(
      {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2), v.getDimSize(3)},
      q.getElementType()));
  results.push_back(adaptor.getState().getType());
  return success();
}

LogicalResult LinearAttentionOp::verify() {
  auto q = getQuery().getType(), k = getKey().getType(),
       v = getValue().getType(), s = getState().getType();
  if (q.getRank() != 4 || k.getRank() != 4 || v.getRank() != 4 ||
      s.getRank() != 4)
    return emitOpError("query, key, value and state must be rank 4");
  if (k.getElementType() != q.getElementType() ||
      v.getElementType() != q.getElementType())
    return emitOpError("query, key and value element types differ");
  int64_t batch = q.getDimSize(0), qHeads = q.getDimSize(1),
          steps = q.getDimSize(2), kvHeads = k.getDimSize(1),
          dk = q.getDimSize(3), dv = v.getDimSize(3);
  if (k.getShape() != ArrayRef<int64_t>{batch, kvHeads, steps, dk} ||
      v.getShape() != ArrayRef<int64_t>{batch, kvHeads, steps, dv})
    return emitOpError("key/value shapes do not match the query");
  if (kvHeads <= 0 || qHeads % kvHeads != 0)
    return emitOpError("key/value heads (")
           << kvHeads << ") must divide query heads (" << qHeads << ")";
  if (s.getShape() != ArrayRef<int64_t>{batch, kvHeads, dk, dv})
    return emitOpError("state must be [")
           << batch << ", " << kvHeads << ", " << dk << ", " << dv << "]";
  if (Value decay = getDecay()) {
    auto t = cast<RankedTensorType>(decay.getType());
    if (t.getRank() != 4 || t.getDimSize(0) != batch ||
        t.getDimSize(1) != kvHeads || t.getDimSize(2) != steps ||
        (t.getDimSize(3) != dk && t.getDimSize(3) != 1))
      return emitOpError("decay must be [B, Hkv, T, Dk or 1], got ") << t;
  }
  if (Value beta = getBeta()) {
    auto t = cast<RankedTensorType>(beta.getType());
    if (t.getRank() != 4 || t.getDimSize(0) != batch ||
        (t.getDimSize(1) != kvHeads && t.getDimSize(1) != 1) ||
        t.getDimSize(2) != steps || t.getDimSize(3) != 1)
      return emitOpError("beta must be [B, Hkv or 1, T, 1], got ") << t;
  }
  return success();
}

// FLOPs: B * T * Dk * Dv * (2 * Hq + c * Hkv), per step a 2 * Dk * Dv
// read-out per query head and, per key/value head, the outer-product update
// (c = 2), plus the decay multiply (c += 1) and the delta-rule read-out
// (c += 2) when `decay` and `beta` are given. Bytes: default (query, key,
// value, state, decay, beta, result, final state).
int64_t LinearAttentionOp::getFlops() {
  auto q = getQuery().getType(), k = getKey().getType(),
       v = getValue().getType();
  if (!q.hasStaticShape() || !k.hasStaticShape() || !v.hasStaticShape())
    return -1;
  int64_t perKvHead = 2 + (getDecay() ? 1 : 0) + (getBeta() ? 2 : 0);
  return q.getDimSize(0) * q.getDimSize(2) * q.getDimSize(3) * v.getDimSize(3) *
         (2 * q.getDimSize(1) + perKvHead * k.getDimSize(1));
}
