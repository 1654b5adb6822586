#!/usr/bin/env python3
"""Generate exporter-style ONNX fixtures with numpy (float64) references.

The graphs follow what PyTorch's exporter writes for common building blocks
that the shared models do not cover, so the importer is tried on the general
case rather than on a handful of files:

  kv_cache_gqa       one decode step with past/present key-value tensors,
                     grouped-query attention (Unsqueeze/Expand/Reshape to
                     repeat KV heads) and a relative-position bias gathered
                     from a table
  conv1d_audio       Conv1d front end, GroupNorm exported as
                     Reshape -> InstanceNormalization -> Reshape -> Mul/Add,
                     erf GELU, dilated depthwise Conv1d
  mobile_se_block    1x1 conv + BatchNorm + HardSwish, strided depthwise 3x3
                     conv, squeeze-and-excitation (GlobalAveragePool, 1x1
                     convs, HardSigmoid), MaxPool, nearest Resize x2
  float16_mlp        a float16 model: LayerNorm, MatMul, tanh-GELU, Softmax
  dynamic_shapes     dynamic [batch, seq] input with the runtime shape
                     arithmetic exporters emit (Shape, Gather, Unsqueeze,
                     Concat, Range, ConstantOfShape, Expand, Equal, Where),
                     a causal mask, and unfolded constant subgraphs
                     (Transpose/Cast/Mul of initializers); two data sets
                     with different shapes
  gpt_kv_cache       2-layer GPT-2 (d_model 128, 4 heads, vocab 512) with a
                     KV cache and symbolic batch/seq/past dims: fused QKV
                     Split, past/present Concat, positions and a causal mask
                     built from Shape(past_key_0), tanh-GELU in pointwise ops,
                     tied lm_head; data set 0 = prefill of 16 tokens with an
                     empty past, data set 1 = one decode step on that past
  llama_kv_decode    one LLaMA attention step with a KV cache: RMSNorm,
                     rotary embeddings of the query and the new key
                     (rotate_half, constant tables), past/present Concat,
                     GQA repeat_kv (4 query heads over 2 key heads, head
                     dimension 32), output projection and residual

Usage: /usr/bin/python3 python/ridgeline/gen_exporter_models.py test/models/exporter
"""

import argparse
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_test_models import (F32, clear_pb, init, make_model, node,  # noqa: E402
                             randn, vi, write_bytes, write_tensor)

F16 = TensorProto.FLOAT16
I64 = TensorProto.INT64
D = np.float64


def const(name, arr):
    return node("Constant", [], [name], name + "/Constant",
                value=numpy_helper.from_array(np.asarray(arr), name=name))


def i64(values):
    return np.asarray(values, dtype=np.int64)


# ---------------------------------------------------------------------------
# numpy references (float64)
# ---------------------------------------------------------------------------


def conv_ref(x, w, b=None, stride=None, pad=None, dilation=None, group=1):
    """N-D convolution, NC... layout, pads = begin + end."""
    x = x.astype(D)
    w = w.astype(D)
    nsp = x.ndim - 2
    stride = stride or [1] * nsp
    dilation = dilation or [1] * nsp
    pad = pad or [0] * (2 * nsp)
    x = np.pad(x, [(0, 0), (0, 0)] + [(pad[i], pad[i + nsp])
                                      for i in range(nsp)])
    n, c = x.shape[:2]
    oc, icg = w.shape[:2]
    k = w.shape[2:]
    out_sp = [(x.shape[2 + i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1
              for i in range(nsp)]
    ocg = oc // group
    y = np.zeros([n, oc] + out_sp, D)
    for g in range(group):
        xg = x[:, g * icg:(g + 1) * icg]
        wg = w[g * ocg:(g + 1) * ocg]
        for idx in np.ndindex(*k):
            sl = tuple(slice(idx[i] * dilation[i],
                             idx[i] * dilation[i] + stride[i] * (out_sp[i] - 1) + 1,
                             stride[i]) for i in range(nsp))
            patch = xg[(slice(None), slice(None)) + sl]  # n, icg, out...
            wk = wg[(slice(None), slice(None)) + idx]  # ocg, icg
            y[:, g * ocg:(g + 1) * ocg] += np.einsum("ni...,oi->no...", patch, wk)
    if b is not None:
        y += b.astype(D).reshape([1, oc] + [1] * nsp)
    return y


def batchnorm_ref(x, scale, bias, mean, var, eps):
    shape = [1, -1] + [1] * (x.ndim - 2)
    return ((x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
            * scale.reshape(shape) + bias.reshape(shape))


def hardsigmoid_ref(x, alpha=0.2, beta=0.5):
    return np.clip(alpha * x + beta, 0, 1)


def gelu_erf_ref(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def gelu_tanh_ref(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def layernorm_ref(x, scale, bias, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * scale + bias


def softmax_ref(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# ---------------------------------------------------------------------------
# fixtures
# ---------------------------------------------------------------------------


def kv_cache_nodes(hq, hkv, past, hd):
    """A decode step's KV cache as exported: present_key/present_value =
    Concat(past, new) of `k_new`/`v_new`, then repeat_kv ([b, hkv, t, d] ->
    [b, hkv, rep, t, d] -> [b, hq, t, d]) into `k_rep`/`v_rep`, and `k_t`,
    k_rep's transpose for the scores."""
    return [
        node("Concat", ["past_key", "k_new"], ["present_key"], "k_cache", axis=2),
        node("Concat", ["past_value", "v_new"], ["present_value"], "v_cache", axis=2),
        const("axis2", i64([2])),
        node("Unsqueeze", ["present_key", "axis2"], ["k_u"], "k_unsqueeze"),
        node("Unsqueeze", ["present_value", "axis2"], ["v_u"], "v_unsqueeze"),
        const("rep_shape", i64([1, hkv, hq // hkv, past + 1, hd])),
        node("Expand", ["k_u", "rep_shape"], ["k_e"], "k_expand"),
        node("Expand", ["v_u", "rep_shape"], ["v_e"], "v_expand"),
        const("heads_shape", i64([1, hq, past + 1, hd])),
        node("Reshape", ["k_e", "heads_shape"], ["k_rep"], "k_repeat"),
        node("Reshape", ["v_e", "heads_shape"], ["v_rep"], "v_repeat"),
        node("Transpose", ["k_rep"], ["k_t"], "k_t", perm=[0, 1, 3, 2]),
    ]


def decode_attention_nodes(query, hq, hd, out, bias_nodes=()):
    """One query token's attention over kv_cache_nodes' keys and values:
    the scores of `query` against k_t scaled by 1/sqrt(hd), `bias_nodes`
    (reading s1, writing s2) if any, the softmax, P V, the heads merged and
    projected by wo into `out`."""
    return [
        node("MatMul", [query, "k_t"], ["s0"], "scores"),
        const("scale", np.asarray(1 / math.sqrt(hd), np.float32)),
        node("Mul", ["s0", "scale"], ["s1"], "scale_scores"),
    ] + list(bias_nodes) + [
        node("Softmax", ["s2" if bias_nodes else "s1"], ["p"], "softmax",
             axis=-1),
        node("MatMul", ["p", "v_rep"], ["o0"], "attend"),
        node("Transpose", ["o0"], ["o1"], "o_transpose", perm=[0, 2, 1, 3]),
        const("o_shape", i64([1, 1, hq * hd])),
        node("Reshape", ["o1", "o_shape"], ["o2"], "o_reshape"),
        node("MatMul", ["o2", "wo"], [out], "o_proj"),
    ]


def kv_decode_io(dm, hkv, past, hd):
    """The graph inputs (x, the past cache) and outputs (y, the present
    cache) of a one-token decode step with a KV cache."""
    cache = [1, hkv, past, hd]
    present = [1, hkv, past + 1, hd]
    return ([vi("x", F32, [1, 1, dm]), vi("past_key", F32, cache),
             vi("past_value", F32, cache)],
            [vi("y", F32, [1, 1, dm]), vi("present_key", F32, present),
             vi("present_value", F32, present)])


def build_kv_cache_gqa():
    rs = np.random.RandomState(2001)
    dm, hq, hkv, hd, past = 32, 4, 2, 8, 5
    wq, wk, wv, wo = (randn(rs, s, 0.2) for s in
                      [(dm, hq * hd), (dm, hkv * hd), (dm, hkv * hd), (hq * hd, dm)])
    buckets = 2 * (past + 1) - 1
    rel_table = randn(rs, (buckets, hq), 0.5)
    # query position `past` against key positions 0..past
    rel_index = i64([[past - j + past for j in range(past + 1)]])
    x = randn(rs, (1, 1, dm))
    past_k = randn(rs, (1, hkv, past, hd))
    past_v = randn(rs, (1, hkv, past, hd))

    nodes = [
        node("MatMul", ["x", "wq"], ["q0"], "q_proj"),
        const("q_shape", i64([1, 1, hq, hd])),
        node("Reshape", ["q0", "q_shape"], ["q1"], "q_reshape"),
        node("Transpose", ["q1"], ["q"], "q_transpose", perm=[0, 2, 1, 3]),
        node("MatMul", ["x", "wk"], ["k0"], "k_proj"),
        const("kv_shape", i64([1, 1, hkv, hd])),
        node("Reshape", ["k0", "kv_shape"], ["k1"], "k_reshape"),
        node("Transpose", ["k1"], ["k_new"], "k_transpose", perm=[0, 2, 1, 3]),
        node("MatMul", ["x", "wv"], ["v0"], "v_proj"),
        node("Reshape", ["v0", "kv_shape"], ["v1"], "v_reshape"),
        node("Transpose", ["v1"], ["v_new"], "v_transpose", perm=[0, 2, 1, 3]),
    ] + kv_cache_nodes(hq, hkv, past, hd) + decode_attention_nodes(
        "q", hq, hd, "y", bias_nodes=[
            node("Gather", ["rel_table", "rel_index"], ["bias0"], "rel_bias",
                 axis=0),
            node("Transpose", ["bias0"], ["bias"], "rel_bias_t",
                 perm=[2, 0, 1]),
            node("Add", ["s1", "bias"], ["s2"], "add_bias"),
        ])
    graph = helper.make_graph(
        nodes, "kv_cache_gqa", *kv_decode_io(dm, hkv, past, hd),
        initializer=[init(wq, "wq"), init(wk, "wk"), init(wv, "wv"),
                     init(wo, "wo"), init(rel_table, "rel_table"),
                     init(rel_index, "rel_index")])

    def ref(x, past_k, past_v):
        q = (x.astype(D) @ wq).reshape(1, 1, hq, hd).transpose(0, 2, 1, 3)
        kn = (x.astype(D) @ wk).reshape(1, 1, hkv, hd).transpose(0, 2, 1, 3)
        vn = (x.astype(D) @ wv).reshape(1, 1, hkv, hd).transpose(0, 2, 1, 3)
        pk = np.concatenate([past_k.astype(D), kn], 2)
        pv = np.concatenate([past_v.astype(D), vn], 2)
        kr = np.repeat(pk, hq // hkv, axis=1)
        vr = np.repeat(pv, hq // hkv, axis=1)
        s = q @ kr.transpose(0, 1, 3, 2) / math.sqrt(hd)
        s = s + rel_table.astype(D)[rel_index].transpose(2, 0, 1)
        o = softmax_ref(s) @ vr
        y = o.transpose(0, 2, 1, 3).reshape(1, 1, hq * hd) @ wo
        return [y, pk, pv]

    return "kv_cache_gqa", graph, [[x, past_k, past_v]], ref


def build_conv1d_audio():
    rs = np.random.RandomState(2002)
    cin, c, groups, t = 8, 16, 4, 50
    w1 = randn(rs, (c, cin, 3), 0.3)
    b1 = randn(rs, (c,), 0.1)
    gamma = randn(rs, (c, 1), 0.5) + 1
    beta = randn(rs, (c, 1), 0.1)
    w2 = randn(rs, (c, 1, 3), 0.5)
    b2 = randn(rs, (c,), 0.1)
    x = randn(rs, (1, cin, t))
    eps = 1e-5
    nodes = [
        node("Conv", ["x", "w1", "b1"], ["c1"], "conv1", kernel_shape=[3],
             strides=[2], pads=[1, 1]),
        const("gn_shape", i64([0, groups, -1])),
        node("Reshape", ["c1", "gn_shape"], ["g0"], "gn_reshape"),
        const("gn_scale", np.ones(groups, np.float32)),
        const("gn_bias", np.zeros(groups, np.float32)),
        node("InstanceNormalization", ["g0", "gn_scale", "gn_bias"], ["g1"],
             "gn_instancenorm", epsilon=eps),
        node("Shape", ["c1"], ["c1_shape"], "gn_shape_of"),
        node("Reshape", ["g1", "c1_shape"], ["g2"], "gn_restore"),
        node("Mul", ["g2", "gamma"], ["g3"], "gn_gamma"),
        node("Add", ["g3", "beta"], ["g4"], "gn_beta"),
        const("sqrt2", np.asarray(math.sqrt(2), np.float32)),
        node("Div", ["g4", "sqrt2"], ["e0"], "gelu_div"),
        node("Erf", ["e0"], ["e1"], "gelu_erf"),
        const("one", np.asarray(1, np.float32)),
        node("Add", ["e1", "one"], ["e2"], "gelu_add"),
        node("Mul", ["g4", "e2"], ["e3"], "gelu_mul"),
        const("half", np.asarray(0.5, np.float32)),
        node("Mul", ["e3", "half"], ["e4"], "gelu_half"),
        node("Conv", ["e4", "w2", "b2"], ["c2"], "depthwise", kernel_shape=[3],
             pads=[2, 2], dilations=[2], group=c),
        node("Transpose", ["c2"], ["y"], "to_time_major", perm=[0, 2, 1]),
    ]
    tout = (t + 2 - 3) // 2 + 1
    graph = helper.make_graph(
        nodes, "conv1d_audio", [vi("x", F32, [1, cin, t])],
        [vi("y", F32, [1, tout, c])],
        initializer=[init(w1, "w1"), init(b1, "b1"), init(gamma, "gamma"),
                     init(beta, "beta"), init(w2, "w2"), init(b2, "b2")])

    def ref(x):
        c1 = conv_ref(x, w1, b1, stride=[2], pad=[1, 1])
        g = c1.reshape(1, groups, -1)
        mean = g.mean(-1, keepdims=True)
        var = ((g - mean) ** 2).mean(-1, keepdims=True)
        g = ((g - mean) / np.sqrt(var + eps)).reshape(c1.shape)
        g = g * gamma + beta
        e = gelu_erf_ref(g)
        c2 = conv_ref(e, w2, b2, pad=[2, 2], dilation=[2], group=c)
        return [c2.transpose(0, 2, 1)]

    return "conv1d_audio", graph, [[x]], ref


def build_mobile_se_block():
    rs = np.random.RandomState(2003)
    cin, c, cse, h = 8, 16, 4, 10
    w1 = randn(rs, (c, cin, 1, 1), 0.3)
    bn1 = [randn(rs, (c,), 0.2) + 1, randn(rs, (c,), 0.1),
           randn(rs, (c,), 0.1), np.abs(randn(rs, (c,), 0.5)) + 0.5]
    wd = randn(rs, (c, 1, 3, 3), 0.3)
    bn2 = [randn(rs, (c,), 0.2) + 1, randn(rs, (c,), 0.1),
           randn(rs, (c,), 0.1), np.abs(randn(rs, (c,), 0.5)) + 0.5]
    ws1 = randn(rs, (cse, c, 1, 1), 0.3)
    bs1 = randn(rs, (cse,), 0.1)
    ws2 = randn(rs, (c, cse, 1, 1), 0.3)
    bs2 = randn(rs, (c,), 0.1)
    x = randn(rs, (1, cin, h, h))
    eps = 1e-5
    bn_names = lambda p: [p + "_scale", p + "_bias", p + "_mean", p + "_var"]
    nodes = [
        node("Conv", ["x", "w1"], ["a0"], "expand_conv", kernel_shape=[1, 1]),
        node("BatchNormalization", ["a0"] + bn_names("bn1"), ["a1"], "bn1",
             epsilon=eps),
        node("HardSwish", ["a1"], ["a2"], "hardswish"),
        node("Conv", ["a2", "wd"], ["a3"], "depthwise", kernel_shape=[3, 3],
             strides=[2, 2], pads=[1, 1, 1, 1], group=c),
        node("BatchNormalization", ["a3"] + bn_names("bn2"), ["a4"], "bn2",
             epsilon=eps),
        node("Relu", ["a4"], ["a5"], "relu"),
        node("GlobalAveragePool", ["a5"], ["s0"], "se_pool"),
        node("Conv", ["s0", "ws1", "bs1"], ["s1"], "se_reduce", kernel_shape=[1, 1]),
        node("Relu", ["s1"], ["s2"], "se_relu"),
        node("Conv", ["s2", "ws2", "bs2"], ["s3"], "se_expand", kernel_shape=[1, 1]),
        node("HardSigmoid", ["s3"], ["s4"], "se_gate", alpha=1 / 6, beta=0.5),
        node("Mul", ["a5", "s4"], ["a6"], "se_scale"),
        node("MaxPool", ["a6"], ["a7"], "maxpool", kernel_shape=[2, 2],
             strides=[1, 1], pads=[0, 0, 1, 1]),
        const("roi", np.zeros(0, np.float32)),
        const("scales", np.asarray([1, 1, 2, 2], np.float32)),
        node("Resize", ["a7", "roi", "scales"], ["y"], "upsample", mode="nearest",
             coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
    ]
    inits = [init(w1, "w1"), init(wd, "wd"), init(ws1, "ws1"), init(bs1, "bs1"),
             init(ws2, "ws2"), init(bs2, "bs2")]
    inits += [init(a, n) for a, n in zip(bn1, bn_names("bn1"))]
    inits += [init(a, n) for a, n in zip(bn2, bn_names("bn2"))]
    graph = helper.make_graph(nodes, "mobile_se_block",
                              [vi("x", F32, [1, cin, h, h])],
                              [vi("y", F32, [1, c, h, h])], initializer=inits)

    def ref(x):
        a = batchnorm_ref(conv_ref(x, w1), *[v.astype(D) for v in bn1], eps)
        a = a * hardsigmoid_ref(a, 1 / 6, 0.5)
        a = conv_ref(a, wd, stride=[2, 2], pad=[1, 1, 1, 1], group=c)
        a = np.maximum(batchnorm_ref(a, *[v.astype(D) for v in bn2], eps), 0)
        s = a.mean(axis=(2, 3), keepdims=True)
        s = np.maximum(conv_ref(s, ws1, bs1), 0)
        s = hardsigmoid_ref(conv_ref(s, ws2, bs2), 1 / 6, 0.5)
        a = a * s
        p = np.pad(a, [(0, 0), (0, 0), (0, 1), (0, 1)], constant_values=-np.inf)
        m = np.maximum.reduce([p[:, :, i:i + 5, j:j + 5]
                               for i in range(2) for j in range(2)])
        return [m.repeat(2, axis=2).repeat(2, axis=3)]

    return "mobile_se_block", graph, [[x]], ref


def build_float16_mlp():
    rs = np.random.RandomState(2004)
    n, dm, dh = 4, 32, 64
    x = randn(rs, (n, dm)).astype(np.float16)
    ln_s = (randn(rs, (dm,), 0.1) + 1).astype(np.float16)
    ln_b = randn(rs, (dm,), 0.1).astype(np.float16)
    w1 = randn(rs, (dm, dh), 0.2).astype(np.float16)
    b1 = randn(rs, (dh,), 0.1).astype(np.float16)
    w2 = randn(rs, (dh, dm), 0.2).astype(np.float16)
    c = math.sqrt(2 / math.pi)
    nodes = [
        node("LayerNormalization", ["x", "ln_s", "ln_b"], ["h0"], "ln", axis=-1,
             epsilon=1e-5),
        node("MatMul", ["h0", "w1"], ["h1"], "fc1"),
        node("Add", ["h1", "b1"], ["h2"], "fc1_bias"),
        const("k3", np.asarray(3, np.float16)),
        node("Pow", ["h2", "k3"], ["g0"], "gelu_pow"),
        const("k044", np.asarray(0.044715, np.float16)),
        node("Mul", ["g0", "k044"], ["g1"], "gelu_mul0"),
        node("Add", ["h2", "g1"], ["g2"], "gelu_add0"),
        const("kc", np.asarray(c, np.float16)),
        node("Mul", ["g2", "kc"], ["g3"], "gelu_mul1"),
        node("Tanh", ["g3"], ["g4"], "gelu_tanh"),
        const("k1", np.asarray(1, np.float16)),
        node("Add", ["g4", "k1"], ["g5"], "gelu_add1"),
        node("Mul", ["h2", "g5"], ["g6"], "gelu_mul2"),
        const("kh", np.asarray(0.5, np.float16)),
        node("Mul", ["g6", "kh"], ["g7"], "gelu_half"),
        node("MatMul", ["g7", "w2"], ["h3"], "fc2"),
        node("Softmax", ["h3"], ["y"], "softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "float16_mlp", [vi("x", F16, [n, dm])], [vi("y", F16, [n, dm])],
        initializer=[init(ln_s, "ln_s"), init(ln_b, "ln_b"), init(w1, "w1"),
                     init(b1, "b1"), init(w2, "w2")])

    def ref(x):
        h = layernorm_ref(x.astype(D), ln_s.astype(D), ln_b.astype(D))
        h = gelu_tanh_ref(h @ w1.astype(D) + b1.astype(D))
        return [softmax_ref(h @ w2.astype(D)).astype(np.float16)]

    return "float16_mlp", graph, [[x]], ref


def build_dynamic_shapes():
    rs = np.random.RandomState(2005)
    dm, heads = 16, 4
    hd = dm // heads
    w_t = randn(rs, (dm, dm), 0.3)  # stored transposed, as torch Linear
    mask_value = np.asarray(-1e4, np.float32)
    nodes = [
        # Unfolded constant subgraphs: a transposed weight and a scale built
        # from an int64 constant at run time.
        node("Transpose", ["w_t"], ["w"], "weight_t", perm=[1, 0]),
        const("hd_i", i64(hd)),
        node("Cast", ["hd_i"], ["hd_f"], "hd_cast", to=TensorProto.FLOAT),
        node("Sqrt", ["hd_f"], ["hd_sqrt"], "hd_sqrt"),
        # Runtime shape arithmetic: [b, s, dm] -> [b, s, heads, hd].
        node("Shape", ["x"], ["x_shape"], "shape"),
        const("i0", i64(0)),
        const("i1", i64(1)),
        node("Gather", ["x_shape", "i0"], ["b"], "gather_batch", axis=0),
        node("Gather", ["x_shape", "i1"], ["s"], "gather_seq", axis=0),
        const("ax0", i64([0])),
        node("Unsqueeze", ["b", "ax0"], ["b1"], "unsqueeze_b"),
        node("Unsqueeze", ["s", "ax0"], ["s1"], "unsqueeze_s"),
        const("heads_hd", i64([heads, hd])),
        node("Concat", ["b1", "s1", "heads_hd"], ["split_shape"], "concat_shape",
             axis=0),
        node("MatMul", ["x", "w"], ["p0"], "proj"),
        node("Reshape", ["p0", "split_shape"], ["p1"], "split_heads"),
        node("Transpose", ["p1"], ["q"], "to_heads", perm=[0, 2, 1, 3]),
        node("Transpose", ["q"], ["k_t"], "k_t", perm=[0, 1, 3, 2]),
        node("MatMul", ["q", "k_t"], ["sc0"], "scores"),
        node("Div", ["sc0", "hd_sqrt"], ["sc1"], "scale"),
        # Causal mask: key position > query position is masked.
        const("zero", i64(0)),
        const("step", i64(1)),
        node("Range", ["zero", "s", "step"], ["pos"], "positions"),
        node("Unsqueeze", ["pos", "ax0"], ["pos_row"], "pos_row"),
        const("ax1", i64([1])),
        node("Unsqueeze", ["pos", "ax1"], ["pos_col"], "pos_col"),
        node("Greater", ["pos_row", "pos_col"], ["future"], "future"),
        node("ConstantOfShape", ["split_shape"], ["ones4"], "ones",
             value=numpy_helper.from_array(np.asarray([1], np.int64))),
        node("Shape", ["sc1"], ["sc_shape"], "score_shape"),
        node("Expand", ["future", "sc_shape"], ["future_b"], "mask_expand"),
        const("mask_value", mask_value),
        node("Where", ["future_b", "mask_value", "sc1"], ["sc2"], "apply_mask"),
        node("Softmax", ["sc2"], ["pr"], "softmax", axis=-1),
        node("MatMul", ["pr", "q"], ["o0"], "attend"),
        node("Transpose", ["o0"], ["o1"], "merge_t", perm=[0, 2, 1, 3]),
        node("Shape", ["x"], ["x_shape2"], "shape_again"),
        node("Reshape", ["o1", "x_shape2"], ["o2"], "merge_heads"),
        # ConstantOfShape output only feeds an Equal that folds away.
        node("ReduceSum", ["ones4"], ["count"], "count", keepdims=0),
        node("Equal", ["count", "count"], ["always"], "always"),
        node("Where", ["always", "o2", "x"], ["y"], "select"),
    ]
    graph = helper.make_graph(
        nodes, "dynamic_shapes", [vi("x", F32, ["batch", "seq", dm])],
        [vi("y", F32, ["batch", "seq", dm])], initializer=[init(w_t, "w_t")])

    def ref(x):
        b, s, _ = x.shape
        q = (x.astype(D) @ w_t.astype(D).T).reshape(b, s, heads, hd)
        q = q.transpose(0, 2, 1, 3)
        sc = q @ q.transpose(0, 1, 3, 2) / math.sqrt(hd)
        future = np.arange(s)[None, :] > np.arange(s)[:, None]
        sc = np.where(future, D(mask_value), sc)
        o = softmax_ref(sc) @ q
        return [o.transpose(0, 2, 1, 3).reshape(b, s, dm)]

    data = [[randn(rs, (1, 6, dm))], [randn(rs, (2, 3, dm))]]
    return "dynamic_shapes", graph, data, ref


def build_gpt_kv_cache():
    """A 2-layer GPT-2 with a KV cache, written the way torch.onnx.export
    writes GPT2LMHeadModel with past_key_values (opset 17)."""
    rs = np.random.RandomState(2006)
    layers, dm, heads, vocab, max_pos = 2, 128, 4, 512, 1024
    hd = dm // heads
    dff = 4 * dm
    eps = 1e-5
    std = 0.02

    def ln_params(prefix):
        return {prefix + ".weight": randn(rs, (dm,), std) + 1,
                prefix + ".bias": randn(rs, (dm,), std)}

    w = {"wte": randn(rs, (vocab, dm), std), "wpe": randn(rs, (max_pos, dm), std)}
    for i in range(layers):
        p = "h.%d." % i
        w.update(ln_params(p + "ln_1"))
        w[p + "attn.c_attn.weight"] = randn(rs, (dm, 3 * dm), std)
        w[p + "attn.c_attn.bias"] = randn(rs, (3 * dm,), std)
        w[p + "attn.c_proj.weight"] = randn(rs, (dm, dm), std)
        w[p + "attn.c_proj.bias"] = randn(rs, (dm,), std)
        w.update(ln_params(p + "ln_2"))
        w[p + "mlp.c_fc.weight"] = randn(rs, (dm, dff), std)
        w[p + "mlp.c_fc.bias"] = randn(rs, (dff,), std)
        w[p + "mlp.c_proj.weight"] = randn(rs, (dff, dm), std)
        w[p + "mlp.c_proj.bias"] = randn(rs, (dm,), std)
    w.update(ln_params("ln_f"))
    mask_value = np.finfo(np.float32).min

    nodes = []

    def add(op, inputs, output, name, **attrs):
        nodes.append(node(op, inputs, [output], name, **attrs))
        return output

    def k(name, arr):
        nodes.append(const(name, arr))
        return name

    def dim(x, axis, name):
        """Gather(Shape(x), axis) -> int64 scalar, as torch exports x.size(axis)."""
        add("Shape", [x], name + "_shape", name + "/Shape")
        return add("Gather", [name + "_shape", k(name + "_axis", i64(axis))], name,
                   name + "/Gather", axis=0)

    def unsq0(x, name):
        return add("Unsqueeze", [x, k(name + "_axes", i64([0]))], name,
                   name + "/Unsqueeze")

    def linear(x, prefix, name):
        h = add("MatMul", [x, prefix + ".weight"], name + "_mm", name + "/MatMul")
        return add("Add", [prefix + ".bias", h], name, name + "/Add")

    def layernorm(x, prefix, name):
        return add("LayerNormalization", [x, prefix + ".weight", prefix + ".bias"],
                   name, name + "/LayerNormalization", axis=-1, epsilon=eps)

    def split_heads(x, name):
        """view(b, s, heads, hd).permute(0, 2, 1, 3), shape built at run time."""
        b = unsq0(dim(x, 0, name + "_b"), name + "_b1")
        s = unsq0(dim(x, 1, name + "_s"), name + "_s1")
        shape = add("Concat", [b, s, k(name + "_h", i64([heads])),
                               k(name + "_d", i64([hd]))],
                    name + "_newshape", name + "/Concat", axis=0)
        r = add("Reshape", [x, shape], name + "_r", name + "/Reshape")
        return add("Transpose", [r], name, name + "/Transpose", perm=[0, 2, 1, 3])

    def gelu(x, name):
        """GPT-2's NewGELUActivation, as exported."""
        a = add("Mul", [x, k(name + "_half", np.float32(0.5))], name + "_a",
                name + "/Mul")
        p = add("Pow", [x, k(name + "_three", np.float32(3.0))], name + "_p",
                name + "/Pow")
        p = add("Mul", [p, k(name + "_c1", np.float32(0.044715))], name + "_q",
                name + "/Mul_1")
        p = add("Add", [x, p], name + "_r", name + "/Add")
        p = add("Mul", [p, k(name + "_c2", np.float32(math.sqrt(2 / math.pi)))],
                name + "_s", name + "/Mul_2")
        t = add("Tanh", [p], name + "_t", name + "/Tanh")
        t = add("Add", [t, k(name + "_one", np.float32(1.0))], name + "_u",
                name + "/Add_1")
        return add("Mul", [a, t], name, name + "/Mul_3")

    # Positions past_len .. past_len + seq - 1 from the shape of past_key_0.
    seq = dim("input_ids", 1, "seq_len")
    past = dim("past_key_0", 2, "past_len")
    total = add("Add", [past, seq], "total_len", "total_len/Add")
    one = k("range_step", i64(1))
    pos = add("Range", [past, total, one], "position_range", "position_ids/Range")
    pos_ids = unsq0(pos, "position_ids")
    tok = add("Gather", ["wte", "input_ids"], "inputs_embeds", "wte/Gather")
    pe = add("Gather", ["wpe", pos_ids], "position_embeds", "wpe/Gather")
    h = add("Add", [tok, pe], "hidden_0", "embed/Add")
    # Causal mask [seq, total]: key j is visible from query past + i iff j <= past + i.
    kpos = add("Range", [k("range_start", i64(0)), total, one], "key_positions",
               "causal_mask/Range")
    kpos = unsq0(kpos, "key_positions_row")
    qpos = add("Unsqueeze", [pos, k("qpos_axes", i64([1]))], "query_positions_col",
               "causal_mask/Unsqueeze")
    causal = add("LessOrEqual", ["key_positions_row", qpos], "causal_mask",
                 "causal_mask/LessOrEqual")
    scale = k("attn_scale", np.float32(math.sqrt(hd)))
    masked = k("mask_value", np.float32(mask_value))

    for i in range(layers):
        p = "h.%d." % i
        n = "h.%d" % i
        x = layernorm(h, p + "ln_1", n + "/ln_1")
        qkv = linear(x, p + "attn.c_attn", n + "/attn/c_attn")
        split = k(n + "/attn/split_sizes", i64([dm, dm, dm]))
        nodes.append(node("Split", [qkv, split],
                          [n + "/attn/q0", n + "/attn/k0", n + "/attn/v0"],
                          n + "/attn/Split", axis=2))
        q = split_heads(n + "/attn/q0", n + "/attn/query")
        kk = split_heads(n + "/attn/k0", n + "/attn/key")
        v = split_heads(n + "/attn/v0", n + "/attn/value")
        kk = add("Concat", ["past_key_%d" % i, kk], "present_key_%d" % i,
                 n + "/attn/Concat_key", axis=-2)
        v = add("Concat", ["past_value_%d" % i, v], "present_value_%d" % i,
                n + "/attn/Concat_value", axis=-2)
        kt = add("Transpose", [kk], n + "/attn/key_t", n + "/attn/Transpose_key",
                 perm=[0, 1, 3, 2])
        s = add("MatMul", [q, kt], n + "/attn/scores", n + "/attn/MatMul")
        s = add("Div", [s, scale], n + "/attn/scores_scaled", n + "/attn/Div")
        s = add("Where", [causal, s, masked], n + "/attn/scores_masked",
                n + "/attn/Where")
        pr = add("Softmax", [s], n + "/attn/probs", n + "/attn/Softmax", axis=-1)
        o = add("MatMul", [pr, v], n + "/attn/context", n + "/attn/MatMul_1")
        o = add("Transpose", [o], n + "/attn/context_t", n + "/attn/Transpose",
                perm=[0, 2, 1, 3])
        ob = unsq0(dim(o, 0, n + "/attn/merge_b"), n + "/attn/merge_b1")
        os_ = unsq0(dim(o, 1, n + "/attn/merge_s"), n + "/attn/merge_s1")
        mshape = add("Concat", [ob, os_, k(n + "/attn/merge_d", i64([dm]))],
                     n + "/attn/merge_shape", n + "/attn/Concat_merge", axis=0)
        o = add("Reshape", [o, mshape], n + "/attn/merged", n + "/attn/Reshape_merge")
        o = linear(o, p + "attn.c_proj", n + "/attn/c_proj")
        h = add("Add", [o, h], n + "/residual_attn", n + "/Add")
        x = layernorm(h, p + "ln_2", n + "/ln_2")
        x = linear(x, p + "mlp.c_fc", n + "/mlp/c_fc")
        x = gelu(x, n + "/mlp/act")
        x = linear(x, p + "mlp.c_proj", n + "/mlp/c_proj")
        h = add("Add", [x, h], n + "/residual_mlp", n + "/Add_1")
    h = layernorm(h, "ln_f", "ln_f")
    # Tied lm_head: logits = h @ wte^T.
    wt = add("Transpose", ["wte"], "lm_head.weight_t", "lm_head/Transpose",
             perm=[1, 0])
    add("MatMul", [h, wt], "logits", "lm_head/MatMul")

    kv_in = ["batch", heads, "past", hd]
    kv_out = ["batch", heads, "total", hd]
    inputs = [vi("input_ids", I64, ["batch", "seq"])]
    outputs = [vi("logits", F32, ["batch", "seq", vocab])]
    for i in range(layers):
        inputs += [vi("past_key_%d" % i, F32, kv_in),
                   vi("past_value_%d" % i, F32, kv_in)]
        outputs += [vi("present_key_%d" % i, F32, kv_out),
                    vi("present_value_%d" % i, F32, kv_out)]
    graph = helper.make_graph(nodes, "gpt_kv_cache", inputs, outputs,
                              initializer=[init(a, n) for n, a in w.items()])

    wd = {n: a.astype(D) for n, a in w.items()}

    def ref(ids, *pasts):
        b, s = ids.shape
        pl = pasts[0].shape[2]
        hs = wd["wte"][ids] + wd["wpe"][np.arange(pl, pl + s)][None]
        causal = np.arange(pl + s)[None, :] <= np.arange(pl, pl + s)[:, None]
        presents = []
        for i in range(layers):
            p = "h.%d." % i

            def heads_of(t):
                return t.reshape(b, s, heads, hd).transpose(0, 2, 1, 3)

            x = layernorm_ref(hs, wd[p + "ln_1.weight"], wd[p + "ln_1.bias"], eps)
            qkv = x @ wd[p + "attn.c_attn.weight"] + wd[p + "attn.c_attn.bias"]
            q, kn, vn = (heads_of(t) for t in np.split(qkv, 3, axis=-1))
            kc = np.concatenate([pasts[2 * i].astype(D), kn], 2)
            vc = np.concatenate([pasts[2 * i + 1].astype(D), vn], 2)
            presents += [kc, vc]
            sc = q @ kc.transpose(0, 1, 3, 2) / math.sqrt(hd)
            sc = np.where(causal, sc, D(mask_value))
            o = (softmax_ref(sc) @ vc).transpose(0, 2, 1, 3).reshape(b, s, dm)
            hs = hs + o @ wd[p + "attn.c_proj.weight"] + wd[p + "attn.c_proj.bias"]
            x = layernorm_ref(hs, wd[p + "ln_2.weight"], wd[p + "ln_2.bias"], eps)
            x = gelu_tanh_ref(x @ wd[p + "mlp.c_fc.weight"] + wd[p + "mlp.c_fc.bias"])
            hs = hs + x @ wd[p + "mlp.c_proj.weight"] + wd[p + "mlp.c_proj.bias"]
        hs = layernorm_ref(hs, wd["ln_f.weight"], wd["ln_f.bias"], eps)
        return [hs @ wd["wte"].T] + presents

    # Data set 0: prefill of 16 tokens with an empty past.  Data set 1: one
    # decode step whose past is data set 0's (float32) presents.
    prompt = rs.randint(0, vocab, size=(1, 16)).astype(np.int64)
    empty = [np.zeros((1, heads, 0, hd), np.float32) for _ in range(2 * layers)]
    prefill_presents = [a.astype(np.float32) for a in ref(prompt, *empty)[1:]]
    next_id = rs.randint(0, vocab, size=(1, 1)).astype(np.int64)
    data = [[prompt] + empty, [next_id] + prefill_presents]
    return "gpt_kv_cache", graph, data, ref


def build_llama_kv_decode():
    """One LLaMA decoder attention step with a KV cache as exported for a
    fixed past length: RMSNorm (Pow, ReduceMean, Add, Sqrt, Div, Mul), the
    query/key/value projections, rotary embeddings of the query and the new
    key (x * cos + rotate_half(x) * sin with constant tables for the new
    position), past/present Concat, GQA repeat_kv (Unsqueeze, Expand,
    Reshape), the scaled scores, Softmax, the output projection and the
    residual Add. Head dimension 32, 4 query heads over 2 key heads, 24
    cached positions."""
    rs = np.random.RandomState(2007)
    dm, hq, hkv, hd, past = 128, 4, 2, 32, 24
    eps = 1e-6
    wq, wk, wv, wo = (randn(rs, s, 0.1) for s in
                      [(dm, hq * hd), (dm, hkv * hd), (dm, hkv * hd),
                       (hq * hd, dm)])
    norm_w = (1 + randn(rs, (dm,), 0.1)).astype(np.float32)
    inv_freq = 1.0 / (10000 ** (np.arange(0, hd, 2, dtype=D) / hd))
    angles = past * inv_freq
    cos = np.concatenate([np.cos(angles)] * 2).astype(np.float32).reshape(
        1, 1, 1, hd)
    sin = np.concatenate([np.sin(angles)] * 2).astype(np.float32).reshape(
        1, 1, 1, hd)
    x = randn(rs, (1, 1, dm))
    past_k = randn(rs, (1, hkv, past, hd))
    past_v = randn(rs, (1, hkv, past, hd))

    def rope_nodes(src, dst):
        return [
            node("Mul", [src, "cos"], [dst + "_c"], dst + "/mul_cos"),
            node("Slice", [src, "lo_start", "lo_end", "axis3"], [dst + "_lo"],
                 dst + "/slice_lo"),
            node("Slice", [src, "hi_start", "hi_end", "axis3"], [dst + "_hi"],
                 dst + "/slice_hi"),
            node("Neg", [dst + "_hi"], [dst + "_nhi"], dst + "/neg"),
            node("Concat", [dst + "_nhi", dst + "_lo"], [dst + "_rot"],
                 dst + "/rotate_half", axis=3),
            node("Mul", [dst + "_rot", "sin"], [dst + "_s"], dst + "/mul_sin"),
            node("Add", [dst + "_c", dst + "_s"], [dst], dst + "/add"),
        ]

    nodes = [
        const("two", np.asarray(2, np.float32)),
        node("Pow", ["x", "two"], ["sq"], "norm/pow"),
        node("ReduceMean", ["sq"], ["ms"], "norm/mean", axes=[-1],
             keepdims=1),
        const("eps", np.asarray(eps, np.float32)),
        node("Add", ["ms", "eps"], ["ms_eps"], "norm/add_eps"),
        node("Sqrt", ["ms_eps"], ["rms"], "norm/sqrt"),
        node("Div", ["x", "rms"], ["xn0"], "norm/div"),
        node("Mul", ["xn0", "norm_w"], ["xn"], "norm/mul_weight"),
        node("MatMul", ["xn", "wq"], ["q0"], "q_proj"),
        const("q_shape", i64([1, 1, hq, hd])),
        node("Reshape", ["q0", "q_shape"], ["q1"], "q_reshape"),
        node("Transpose", ["q1"], ["q"], "q_transpose", perm=[0, 2, 1, 3]),
        node("MatMul", ["xn", "wk"], ["k0"], "k_proj"),
        const("kv_shape", i64([1, 1, hkv, hd])),
        node("Reshape", ["k0", "kv_shape"], ["k1"], "k_reshape"),
        node("Transpose", ["k1"], ["k"], "k_transpose", perm=[0, 2, 1, 3]),
        node("MatMul", ["xn", "wv"], ["v0"], "v_proj"),
        node("Reshape", ["v0", "kv_shape"], ["v1"], "v_reshape"),
        node("Transpose", ["v1"], ["v_new"], "v_transpose", perm=[0, 2, 1, 3]),
        const("lo_start", i64([0])), const("lo_end", i64([hd // 2])),
        const("hi_start", i64([hd // 2])), const("hi_end", i64([hd])),
        const("axis3", i64([3])),
    ] + rope_nodes("q", "q_rope") + rope_nodes("k", "k_new") + \
        kv_cache_nodes(hq, hkv, past, hd) + \
        decode_attention_nodes("q_rope", hq, hd, "o3") + [
        node("Add", ["x", "o3"], ["y"], "residual"),
    ]
    graph = helper.make_graph(
        nodes, "llama_kv_decode", *kv_decode_io(dm, hkv, past, hd),
        initializer=[init(wq, "wq"), init(wk, "wk"), init(wv, "wv"),
                     init(wo, "wo"), init(norm_w, "norm_w"),
                     init(cos, "cos"), init(sin, "sin")])

    def rope(t):
        half = hd // 2
        rot = np.concatenate([-t[..., half:], t[..., :half]], axis=-1)
        return t * cos.astype(D) + rot * sin.astype(D)

    def ref(x, past_k, past_v):
        xd = x.astype(D)
        xn = xd / np.sqrt((xd ** 2).mean(-1, keepdims=True) + eps) * norm_w
        q = rope((xn @ wq).reshape(1, 1, hq, hd).transpose(0, 2, 1, 3))
        kn = rope((xn @ wk).reshape(1, 1, hkv, hd).transpose(0, 2, 1, 3))
        vn = (xn @ wv).reshape(1, 1, hkv, hd).transpose(0, 2, 1, 3)
        pk = np.concatenate([past_k.astype(D), kn], 2)
        pv = np.concatenate([past_v.astype(D), vn], 2)
        kr = np.repeat(pk, hq // hkv, axis=1)
        vr = np.repeat(pv, hq // hkv, axis=1)
        o = softmax_ref(q @ kr.transpose(0, 1, 3, 2) / math.sqrt(hd)) @ vr
        y = xd + o.transpose(0, 2, 1, 3).reshape(1, 1, hq * hd) @ wo
        return [y, pk, pv]

    return "llama_kv_decode", graph, [[x, past_k, past_v]], ref


BUILDERS = [build_kv_cache_gqa, build_conv1d_audio, build_mobile_se_block,
            build_float16_mlp, build_dynamic_shapes, build_gpt_kv_cache,
            build_llama_kv_decode]


def main(argv):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", metavar="OUT_DIR",
                        help="folder to write the models into")
    out_dir = parser.parse_args(argv[1:]).out_dir
    for build in BUILDERS:
        name, graph, data_sets, ref = build()
        model = make_model(graph)
        onnx.checker.check_model(model, full_check=True)
        mdir = os.path.join(out_dir, name)
        os.makedirs(mdir, exist_ok=True)
        write_bytes(os.path.join(mdir, "model.onnx"), model.SerializeToString())
        for k, inputs in enumerate(data_sets):
            ddir = os.path.join(mdir, "test_data_set_%d" % k)
            os.makedirs(ddir, exist_ok=True)
            clear_pb(ddir)
            outputs = ref(*inputs)
            for j, (v, arr) in enumerate(zip(graph.input, inputs)):
                write_tensor(os.path.join(ddir, "input_%d.pb" % j), arr, v.name)
            for j, (v, arr) in enumerate(zip(graph.output, outputs)):
                want = np.float16 if v.type.tensor_type.elem_type == F16 else np.float32
                write_tensor(os.path.join(ddir, "output_%d.pb" % j),
                             np.asarray(arr).astype(want), v.name)
        print("%-16s %d nodes, %d data set(s), %d bytes" % (
            name, len(graph.node), len(data_sets),
            os.path.getsize(os.path.join(mdir, "model.onnx"))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
