//===- RidgeTransformerOps.td - ridge Transformer ops -----------------*- tablegen -*-===//
//
// transformer building blocks (attention, RMS normalization, rotary embeddings, gated activations).
// Included from RidgeOps.td, which defines Ridge_Op and the op base classes.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGE_TRANSFORMER_OPS
#define RIDGE_TRANSFORMER_OPS

def Ridge_AttentionOp : Ridge_Op<"attention", [AttrSizedOperandSegments,
    InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Ridge_FusionOpInterface, ["getFusionRole"]>,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface,
                              ["getFlops", "isContraction"]>]> {
  let summary = "Scaled dot-product attention (ONNX Attention-23/24)";
  let description = [{
    One recognizable attention op, so that later passes can replace the
    reference computation by a fused (online-softmax) kernel. Operands are
    4-D: `query` [B, Hq, Sq, D], `key` [B, Hkv, Skv, D], `value`
    [B, Hkv, Skv, Dv]; Hkv divides Hq (grouped-query attention: query head h
    reads key/value head h / (Hq / Hkv)). The importer turns ONNX's 3-D
    layout into this one and concatenates past_key/past_value outside the op
    (present_key/present_value are those concatenations).

    For each (b, h, i, j):
      s = softcap(scale * q[b,h,i,:] . k[b,h/g,j,:])
      bias = mask + causal + padding
      p = softmax_j(s + bias)
      result[b,h,i,:] = sum_j p * v[b,h/g,j,:]
    where softcap(x) = softcap * tanh(x / softcap) when `softcap` > 0.
    `mask` broadcasts (numpy rules) to [B, Hq, Sq, Skv]; an i1 mask allows
    (true) or forbids (false, bias -inf) a key, a float mask (same element
    type as `query`) is added. Query i sits at position p = i + offset among
    the keys, with offset = `query_offset` (the past length), or
    nonpad_kv_seqlen[b] - Sq when `nonpad_kv_seqlen` (i64 [B]) is given.
    `is_causal` forbids keys j > p; `left_window` / `right_window` (when
    >= 0) forbid keys j < p - left_window / j > p + right_window (ONNX
    Attention-25 sliding windows). `nonpad_kv_seqlen` also forbids keys
    j >= nonpad_kv_seqlen[b]. A query row whose bias is -inf
    everywhere yields zero probabilities (and a zero result).

    Arithmetic happens in f32 (f64 for f64 inputs). As in ONNX's definition,
    the scale is applied as sqrt(scale) (in the element type) to both q and
    k, the scores are rounded to the element type, and the softmax rounds
    its intermediate values to `softmax_type` (ONNX softmax_precision;
    absent: the element type), so that f16 models match ONNX's results.

    The second result exposes the scores as selected by
    `qk_matmul_output_mode`: 0 and 1 the (soft-capped) scaled scores, 2 the
    scores plus bias, 3 the probabilities. Lowerings compute it only when it
    has uses.

    FLOPs: 2*B*Hq*Sq*Skv*(D + Dv) for the two contractions plus about 6 per
    score (scale, bias, max, exp, sum, divide); in the online softmax form,
    whose key loop stops at each row's causal and window limits, only the
    keys a row may see count.
  }];
  let arguments = (ins Ridge_FloatTensor:$query, Ridge_FloatTensor:$key,
                       Ridge_FloatTensor:$value,
                       Optional<Ridge_Tensor>:$mask,
                       Optional<RankedTensorOf<[I64]>>:$nonpad_kv_seqlen,
                       F32Attr:$scale,
                       DefaultValuedAttr<BoolAttr, "false">:$is_causal,
                       DefaultValuedAttr<I64Attr, "0">:$query_offset,
                       DefaultValuedAttr<I64Attr, "-1">:$left_window,
                       DefaultValuedAttr<I64Attr, "-1">:$right_window,
                       DefaultValuedAttr<F32Attr, "0.0">:$softcap,
                       DefaultValuedAttr<I64Attr, "0">:$qk_matmul_output_mode,
                       OptionalAttr<TypeAttr>:$softmax_type);
  let results = (outs Ridge_FloatTensor:$result, Ridge_FloatTensor:$qk);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`nonpad` `(` $nonpad_kv_seqlen^ `:` type($nonpad_kv_seqlen) `)`)?
    attr-dict `:` type($query) `,` type($key) `,` type($value) `->`
    type($result) `,` type($qk)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether the op can be computed with an online softmax, one pass over
    /// the keys per query row, never storing its scores: nothing reads `qk`,
    /// the shapes are static, and Q, K and V are f32 or all one of f16 and
    /// bf16 (multiplied as stored, P rounded to their format), with a
    /// softmax in f32 or in that format.
    bool isOnlineSoftmaxForm();
  }];
}

def Ridge_RMSNormOp : Ridge_Op<"rms_norm", [
    InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Ridge_FusionOpInterface,
                              ["getFusionRole", "getReductionRows"]>,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "RMS normalization over the trailing dims (ONNX RMSNormalization-23)";
  let description = [{
    y = x / sqrt(mean(x^2) + epsilon) * scale, the mean taken over the
    dimensions from `axis` (non-negative) to the end. `scale` broadcasts
    (numpy rules) to the normalized shape. The statistics are computed in the
    `stash_type` precision (1 = f32; otherwise the input's type, never below
    f32). FLOPs: 4 per element plus 3 per row (mean divide, epsilon add,
    sqrt and reciprocal, less the first add of the sum).
  }];
  let arguments = (ins Ridge_FloatTensor:$input, Ridge_FloatTensor:$scale,
                       I64Attr:$axis,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon,
                       DefaultValuedAttr<I64Attr, "1">:$stash_type);
  let results = (outs Ridge_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Ridge_GeluOp : Ridge_Op<"gelu", [SameOperandsAndResultType,
    Ridge_ElementwiseFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Gaussian error linear unit (ONNX Gelu-20)";
  let description = [{
    `approximate` = "none": 0.5 * x * (1 + erf(x / sqrt(2)));
    "tanh": 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).
    Kept as one op so that fusion can match it. FLOPs: 8 per element.
  }];
  let arguments = (ins Ridge_FloatTensor:$input,
                       DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let results = (outs Ridge_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Ridge_RotaryEmbeddingOp : Ridge_Op<"rotary_embedding", [
    AllTypesMatch<["input", "result"]>,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface,
                              ["getFlops", "getMinBytes"]>]> {
  let summary = "Rotary positional embedding (ONNX RotaryEmbedding-23)";
  let description = [{
    `input` is [B, H, S, D] (the importer transposes ONNX's other layouts).
    The first `rotary_embedding_dim` (R, even, <= D) features of each head
    are rotated in pairs by the angles whose cosines/sines are `cos_cache`
    and `sin_cache` (last dim R/2); the remaining features pass through.
    Without `position_ids` the caches are [B, S, R/2]; with `position_ids`
    (integer [B, S]) they are [P, R/2] tables indexed by position. Pairs are
    (k, k + R/2) or, with `interleaved`, (2k, 2k + 1):
      x1' = cos * x1 - sin * x2,  x2' = sin * x1 + cos * x2.
    FLOPs: 3 per rotated element (B * H * S * R); pass-through features
    are free. Bytes: input, caches, positions and result, but a position
    table is charged only for the B * S rows read.
  }];
  let arguments = (ins Ridge_FloatTensor:$input, Ridge_FloatTensor:$cos_cache,
                       Ridge_FloatTensor:$sin_cache,
                       Optional<Ridge_IntegerTensor>:$position_ids,
                       I64Attr:$rotary_embedding_dim,
                       DefaultValuedAttr<BoolAttr, "false">:$interleaved);
  let results = (outs Ridge_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $cos_cache `,` $sin_cache (`positions` `(` $position_ids^ `:`
    type($position_ids) `)`)? attr-dict `:` type($input) `,` type($cos_cache)
    `,` type($sin_cache)
  }];
  let hasVerifier = 1;
}

def Ridge_LinearAttentionOp : Ridge_Op<"linear_attention", [
    AttrSizedOperandSegments, InferTypeOpAdaptor,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Recurrent linear attention (ONNX LinearAttention-27)";
  let description = [{
    A state S [B, Hkv, Dk, Dv] (initially `state`) is updated per time step
    t of `query` [B, Hq, T, Dk], `key` [B, Hkv, T, Dk], `value`
    [B, Hkv, T, Dv] (Hkv divides Hq):
      with `decay` [B, Hkv, T, Dk or 1]:  S *= exp(decay_t)  (gating)
      with `beta` [B, Hkv or 1, T, 1]:    v_t = beta_t * (v_t - S^T k_t)
                                           (delta rule)
      S += k_t (outer) v_t
      result_t[b, h] = scale * q_t[b, h] . S[b, h / (Hq / Hkv)]
    The second result is the final state. Arithmetic happens in f32 (f64
    for f64 inputs). FLOPs: B*T*Dk*Dv*(2*Hq + c*Hkv) with c = 2 (the
    update), plus 1 with `decay` and 2 with `beta`.
  }];
  let arguments = (ins Ridge_FloatTensor:$query, Ridge_FloatTensor:$key,
                       Ridge_FloatTensor:$value, Ridge_FloatTensor:$state,
                       Optional<Ridge_FloatTensor>:$decay,
                       Optional<Ridge_FloatTensor>:$beta, F32Attr:$scale);
  let results = (outs Ridge_FloatTensor:$result,
                      Ridge_FloatTensor:$present_state);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $state
    (`decay` `(` $decay^ `:` type($decay) `)`)?
    (`beta` `(` $beta^ `:` type($beta) `)`)?
    attr-dict `:` type($query) `,` type($key) `,` type($value) `,`
    type($state) `->` type($result) `,` type($present_state)
  }];
  let hasVerifier = 1;
}

#endif // RIDGE_TRANSFORMER_OPS
