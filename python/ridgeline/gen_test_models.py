#!/usr/bin/python3
"""Generate Ridgeline's small ONNX test models and their reference data.

Usage (from the repository root)::

    /usr/bin/python3 python/ridgeline/gen_test_models.py test/models

The single argument is the output directory. The script needs only onnx
(tested with 1.12) and numpy (tested with 1.24); reference outputs are
computed with numpy alone (onnx 1.12 has no onnx.reference module).

Layout (the ONNX backend-test layout)::

    <out>/<model>/model.onnx
    <out>/<model>/test_data_set_0/input_K.pb     # TensorProto, named after
    <out>/<model>/test_data_set_0/output_K.pb    # the K-th graph input/output

plus malformed fixtures under <out>/bad/ (see make_bad_fixtures()).

All models use opset 17 (default domain) and IR version 8. Every tensor is
written by onnx.numpy_helper.from_array, so tensor payloads are in raw_data
(little-endian). Random data comes from np.random.RandomState with fixed
seeds (its stream is frozen by NumPy's compatibility policy), so re-running
produces byte-identical files.

Float references are computed in float64 and rounded to the output dtype once
at the end. After writing, the script reloads every file, runs
onnx.checker.check_model(full_check=True) on each model (the bad ones are
expected to fail, except bad/unsupported.onnx which is valid ONNX that the
compiler does not support), recomputes each reference a second, independent
way (explicit loops, float32 arithmetic) and prints a summary. It exits
non-zero if any of those checks fails.
"""

import argparse
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8
PRODUCER = "ridgeline-gen_test_models"

F32 = TensorProto.FLOAT

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def make_model(graph):
    return helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        ir_version=IR_VERSION,
        producer_name=PRODUCER,
        producer_version="1",
    )


def vi(name, elem_type, shape):
    return helper.make_tensor_value_info(name, elem_type, shape)


def init(arr, name):
    return numpy_helper.from_array(arr, name=name)


def node(op, inputs, outputs, name, **attrs):
    return helper.make_node(op, inputs, outputs, name=name, **attrs)


def const_node(name, out, arr):
    return node("Constant", [], [out], name,
                value=numpy_helper.from_array(arr, name=out))


def randn(rs, shape, std=1.0):
    return (rs.standard_normal(shape) * std).astype(np.float32)


def softmax64(x, axis=-1):
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_loop32(x):
    """Softmax over the last axis with explicit Python loops, float32."""
    x = np.asarray(x, dtype=np.float32)
    out = np.empty_like(x)
    flat_in = x.reshape(-1, x.shape[-1])
    flat_out = out.reshape(-1, x.shape[-1])
    for r in range(flat_in.shape[0]):
        row = flat_in[r]
        m = row[0]
        for v in row:
            m = max(m, v)
        exps = [np.float32(math.exp(float(v - m))) for v in row]
        s = np.float32(0)
        for e in exps:
            s = np.float32(s + e)
        for c, e in enumerate(exps):
            flat_out[r, c] = e / s
    return out


def matmul_loop(a, b):
    """2-D matmul with explicit loops (float32 accumulate)."""
    a = np.asarray(a, np.float32)
    b = np.asarray(b, np.float32)
    n, k = a.shape
    k2, m = b.shape
    assert k == k2
    out = np.zeros((n, m), np.float32)
    for i in range(n):
        for j in range(m):
            acc = np.float32(0)
            for p in range(k):
                acc = np.float32(acc + a[i, p] * b[p, j])
            out[i, j] = acc
    return out


def write_tensor(path, arr, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(arr, name=name).SerializeToString())


def write_bytes(path, data):
    with open(path, "wb") as f:
        f.write(data)


def clear_pb(dirpath):
    """Remove stale input_*.pb / output_*.pb so the directory holds exactly
    what this run writes."""
    if not os.path.isdir(dirpath):
        return
    for fn in os.listdir(dirpath):
        if (fn.startswith("input_") or fn.startswith("output_")) and \
                fn.endswith(".pb"):
            os.remove(os.path.join(dirpath, fn))


class Case:
    """A model plus one test data set, with an independent reference check."""

    def __init__(self, name, model, inputs, outputs, check):
        self.name = name
        self.model = model
        self.inputs = inputs      # list of np arrays, graph-input order
        self.outputs = outputs    # list of np arrays, graph-output order
        self.check = check        # callable(inputs) -> list of np arrays


# ---------------------------------------------------------------------------
# 1. mlp_small
# ---------------------------------------------------------------------------


def mlp_weights():
    rs = np.random.RandomState(1001)
    w1 = randn(rs, (64, 128), 0.1)
    b1 = randn(rs, (128,), 0.1)
    w2 = randn(rs, (128, 32), 0.1)
    b2 = randn(rs, (32,), 0.1)
    x = randn(rs, (4, 64), 1.0)
    return x, w1, b1, w2, b2


def mlp_ref(x, w1, b1, w2, b2):
    d = np.float64
    h = x.astype(d) @ w1.astype(d) + b1.astype(d)
    h = np.maximum(h, 0.0)
    h = h @ w2.astype(d) + b2.astype(d)
    return softmax64(np.tanh(h)).astype(np.float32)


def build_mlp_small():
    x, w1, b1, w2, b2 = mlp_weights()
    nodes = [
        node("Gemm", ["x", "W1", "b1"], ["fc1_out"], "fc1/Gemm",
             alpha=1.0, beta=1.0, transA=0, transB=0),
        node("Relu", ["fc1_out"], ["relu1_out"], "fc1/Relu"),
        node("MatMul", ["relu1_out", "W2"], ["fc2_mm"], "fc2/MatMul"),
        node("Add", ["fc2_mm", "b2"], ["fc2_out"], "fc2/Add"),
        node("Tanh", ["fc2_out"], ["tanh_out"], "fc2/Tanh"),
        node("Softmax", ["tanh_out"], ["probs"], "head/Softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "mlp_small",
        [vi("x", F32, [4, 64])],
        [vi("probs", F32, [4, 32])],
        initializer=[init(w1, "W1"), init(b1, "b1"), init(w2, "W2"),
                     init(b2, "b2")])
    model = make_model(graph)

    def check(ins):
        (xx,) = ins
        h = matmul_loop(xx, w1)
        h = np.maximum(h + b1, np.float32(0))
        h = np.tanh(matmul_loop(h, w2) + b2)
        return [softmax_loop32(h)]

    return Case("mlp_small", model, [x], [mlp_ref(x, w1, b1, w2, b2)], check)


# ---------------------------------------------------------------------------
# 2. attention_block
# ---------------------------------------------------------------------------


def build_attention_block():
    rs = np.random.RandomState(2002)
    S, D, H, HD = 16, 32, 4, 8
    std = 1.0 / math.sqrt(D)
    wq = randn(rs, (D, D), std)
    wk = randn(rs, (D, D), std)
    wv = randn(rs, (D, D), std)
    x = randn(rs, (1, S, D), 1.0)
    scale = np.array(math.sqrt(HD), dtype=np.float32)  # 0-d scalar
    heads_shape = np.array([1, S, H, HD], dtype=np.int64)
    out_shape = np.array([1, S, D], dtype=np.int64)

    nodes = [
        node("MatMul", ["x", "Wq"], ["q"], "q_proj/MatMul"),
        node("MatMul", ["x", "Wk"], ["k"], "k_proj/MatMul"),
        node("MatMul", ["x", "Wv"], ["v"], "v_proj/MatMul"),
        node("Reshape", ["q", "heads_shape"], ["q_heads"], "q_split/Reshape"),
        node("Reshape", ["k", "heads_shape"], ["k_heads"], "k_split/Reshape"),
        node("Reshape", ["v", "heads_shape"], ["v_heads"], "v_split/Reshape"),
        node("Transpose", ["q_heads"], ["q_t"], "q_split/Transpose",
             perm=[0, 2, 1, 3]),
        node("Transpose", ["k_heads"], ["k_t"], "k_split/Transpose",
             perm=[0, 2, 3, 1]),
        node("Transpose", ["v_heads"], ["v_t"], "v_split/Transpose",
             perm=[0, 2, 1, 3]),
        node("MatMul", ["q_t", "k_t"], ["scores"], "attn/scores/MatMul"),
        const_node("attn/scale/Constant", "scale", scale),
        node("Div", ["scores", "scale"], ["scores_scaled"], "attn/scale/Div"),
        node("Softmax", ["scores_scaled"], ["attn_weights"], "attn/Softmax",
             axis=-1),
        node("MatMul", ["attn_weights", "v_t"], ["ctx"], "attn/ctx/MatMul"),
        node("Transpose", ["ctx"], ["ctx_t"], "merge/Transpose",
             perm=[0, 2, 1, 3]),
        node("Reshape", ["ctx_t", "out_shape"], ["ctx_merged"],
             "merge/Reshape"),
        node("Add", ["ctx_merged", "x"], ["y"], "residual/Add"),
    ]
    graph = helper.make_graph(
        nodes, "attention_block",
        [vi("x", F32, [1, S, D])],
        [vi("y", F32, [1, S, D])],
        initializer=[init(wq, "Wq"), init(wk, "Wk"), init(wv, "Wv"),
                     init(heads_shape, "heads_shape"),
                     init(out_shape, "out_shape")])
    model = make_model(graph)

    d = np.float64
    xd = x.astype(d)
    q = (xd @ wq.astype(d)).reshape(1, S, H, HD).transpose(0, 2, 1, 3)
    kT = (xd @ wk.astype(d)).reshape(1, S, H, HD).transpose(0, 2, 3, 1)
    v = (xd @ wv.astype(d)).reshape(1, S, H, HD).transpose(0, 2, 1, 3)
    p = softmax64((q @ kT) / d(scale))
    ctx = (p @ v).transpose(0, 2, 1, 3).reshape(1, S, D)
    y = (ctx + xd).astype(np.float32)

    def check(ins):
        (xx,) = ins
        x2 = xx[0]                                   # [S, D]
        q2, k2, v2 = (matmul_loop(x2, w) for w in (wq, wk, wv))
        out = np.zeros((S, D), np.float32)
        for h in range(H):
            sl = slice(h * HD, (h + 1) * HD)
            s = matmul_loop(q2[:, sl], np.ascontiguousarray(k2[:, sl].T))
            s = s / scale
            pr = softmax_loop32(s)
            out[:, sl] = matmul_loop(pr, v2[:, sl])
        return [(out + x2)[None]]

    return Case("attention_block", model, [x], [y], check)


# ---------------------------------------------------------------------------
# 3. pointwise_mix
# ---------------------------------------------------------------------------


def build_pointwise_mix():
    rs = np.random.RandomState(3003)
    a = randn(rs, (2, 3, 4))
    b = randn(rs, (4,))
    c = randn(rs, (3, 1))
    nodes = [
        node("Add", ["a", "b"], ["ab"], "num/Add"),
        node("Mul", ["ab", "c"], ["abc"], "num/Mul"),
        node("Sub", ["abc", "a"], ["num"], "num/Sub"),
        node("Exp", ["b"], ["exp_b"], "den/Exp"),
        const_node("den/one/Constant", "one", np.array(1.0, np.float32)),
        node("Add", ["exp_b", "one"], ["den"], "den/Add"),
        node("Div", ["num", "den"], ["ratio"], "out/Div"),
        node("Relu", ["ratio"], ["y"], "out/Relu"),
        node("Cast", ["y"], ["y16"], "out/Cast", to=TensorProto.FLOAT16),
    ]
    graph = helper.make_graph(
        nodes, "pointwise_mix",
        [vi("a", F32, [2, 3, 4]), vi("b", F32, [4]), vi("c", F32, [3, 1])],
        [vi("y", F32, [2, 3, 4]), vi("y16", TensorProto.FLOAT16, [2, 3, 4])])
    model = make_model(graph)

    d = np.float64
    ad, bd, cd = a.astype(d), b.astype(d), c.astype(d)
    y = np.maximum(((ad + bd) * cd - ad) / (np.exp(bd) + 1.0), 0.0)
    y = y.astype(np.float32)
    y16 = y.astype(np.float16)

    def check(ins):
        aa, bb, cc = ins
        out = np.zeros((2, 3, 4), np.float32)
        for i in range(2):
            for j in range(3):
                for k in range(4):
                    n = np.float32(np.float32(aa[i, j, k] + bb[k]) * cc[j, 0])
                    n = np.float32(n - aa[i, j, k])
                    dd = np.float32(np.float32(math.exp(float(bb[k]))) + 1)
                    r = np.float32(n / dd)
                    out[i, j, k] = r if r > 0 else np.float32(0)
        return [out, out.astype(np.float16)]

    return Case("pointwise_mix", model, [a, b, c], [y, y16], check)


# ---------------------------------------------------------------------------
# 4. cast_int
# ---------------------------------------------------------------------------


def build_cast_int():
    # Negatives, fractions (incl. |x| < 1 so truncation != floor), -0.0 and
    # 0.0 (both must cast to False), and exact integers.
    x = np.array([-3.75, -1.5, -0.25, -0.0, 0.0, 0.5, 2.999, 7.0],
                 dtype=np.float32)
    nodes = [
        node("Cast", ["x"], ["i"], "to_i32/Cast", to=TensorProto.INT32),
        node("Cast", ["x"], ["x_i64"], "to_i64/Cast", to=TensorProto.INT64),
        node("Cast", ["x_i64"], ["f"], "i64_to_f32/Cast", to=TensorProto.FLOAT),
        node("Cast", ["x"], ["b"], "to_bool/Cast", to=TensorProto.BOOL),
    ]
    graph = helper.make_graph(
        nodes, "cast_int",
        [vi("x", F32, [8])],
        [vi("i", TensorProto.INT32, [8]), vi("f", F32, [8]),
         vi("b", TensorProto.BOOL, [8])])
    model = make_model(graph)

    i = np.trunc(x).astype(np.int32)
    f = np.trunc(x.astype(np.float64)).astype(np.int64).astype(np.float32)
    b = x != 0

    def check(ins):
        (xx,) = ins
        ii = np.array([int(math.trunc(float(v))) for v in xx], np.int32)
        ff = np.array([float(int(float(v))) for v in xx], np.float32)
        bb = np.array([bool(float(v)) for v in xx], np.bool_)
        return [ii, ff, bb]

    return Case("cast_int", model, [x], [i, f, b], check)


# ---------------------------------------------------------------------------
# 5. gemm_variants
# ---------------------------------------------------------------------------


def build_gemm_variants():
    rs = np.random.RandomState(5005)
    a = randn(rs, (3, 5))
    B = randn(rs, (4, 5))
    C = randn(rs, (4,))
    at = randn(rs, (5, 3))
    B2 = randn(rs, (5, 4))
    nodes = [
        node("Gemm", ["a", "B", "C"], ["y"], "gemm_tb/Gemm",
             alpha=0.5, beta=2.0, transB=1),
        node("Gemm", ["at", "B2"], ["z"], "gemm_ta/Gemm", transA=1),
    ]
    graph = helper.make_graph(
        nodes, "gemm_variants",
        [vi("a", F32, [3, 5]), vi("at", F32, [5, 3])],
        [vi("y", F32, [3, 4]), vi("z", F32, [3, 4])],
        initializer=[init(B, "B"), init(C, "C"), init(B2, "B2")])
    model = make_model(graph)

    d = np.float64
    y = (0.5 * (a.astype(d) @ B.astype(d).T) + 2.0 * C.astype(d))
    z = at.astype(d).T @ B2.astype(d)

    def check(ins):
        aa, aatt = ins
        yy = np.zeros((3, 4), np.float32)
        zz = np.zeros((3, 4), np.float32)
        for i in range(3):
            for j in range(4):
                s = np.float32(0)
                for k in range(5):
                    s = np.float32(s + aa[i, k] * B[j, k])
                yy[i, j] = np.float32(0.5) * s + np.float32(2.0) * C[j]
                s = np.float32(0)
                for k in range(5):
                    s = np.float32(s + aatt[k, i] * B2[k, j])
                zz[i, j] = s
        return [yy, zz]

    return Case("gemm_variants", model, [a, at],
                [y.astype(np.float32), z.astype(np.float32)], check)


# ---------------------------------------------------------------------------
# 6. matmul_bcast
# ---------------------------------------------------------------------------


def build_matmul_bcast():
    rs = np.random.RandomState(6006)
    a = randn(rs, (2, 1, 3, 4))
    b = randn(rs, (5, 4, 6))
    v = randn(rs, (4,))
    b2 = randn(rs, (4, 6))
    nodes = [
        node("MatMul", ["a", "b"], ["y"], "bcast/MatMul"),
        node("MatMul", ["v", "b2"], ["w"], "vec/MatMul"),
    ]
    graph = helper.make_graph(
        nodes, "matmul_bcast",
        [vi("a", F32, [2, 1, 3, 4]), vi("b", F32, [5, 4, 6]),
         vi("v", F32, [4])],
        [vi("y", F32, [2, 5, 3, 6]), vi("w", F32, [6])],
        initializer=[init(b2, "b2")])
    model = make_model(graph)

    d = np.float64
    y = np.matmul(a.astype(d), b.astype(d)).astype(np.float32)
    w = np.matmul(v.astype(d), b2.astype(d)).astype(np.float32)

    def check(ins):
        aa, bb, vv = ins
        yy = np.zeros((2, 5, 3, 6), np.float32)
        for i in range(2):
            for j in range(5):
                yy[i, j] = matmul_loop(aa[i, 0], bb[j])
        ww = matmul_loop(vv[None, :], b2)[0]
        return [yy, ww]

    return Case("matmul_bcast", model, [a, b, v], [y, w], check)


# ---------------------------------------------------------------------------
# 6b. matmul_compute_bound
# ---------------------------------------------------------------------------


def build_matmul_compute_bound():
    """A 128x256x256 MatMul (+ bias, Relu): 32 FLOP/B, compute-bound on the
    fp32 roofline of every built-in GPU, so a --precision=bf16 build rounds
    its operands (docs/precision.md). The reference is float64."""
    rs = np.random.RandomState(6106)
    x = randn(rs, (128, 256))
    w = randn(rs, (256, 256), 1.0 / 16)
    b = randn(rs, (256,), 0.1)
    nodes = [
        node("MatMul", ["x", "W"], ["mm"], "fc/MatMul"),
        node("Add", ["mm", "b"], ["biased"], "fc/Add"),
        node("Relu", ["biased"], ["y"], "fc/Relu"),
    ]
    graph = helper.make_graph(
        nodes, "matmul_compute_bound",
        [vi("x", F32, [128, 256])],
        [vi("y", F32, [128, 256])],
        initializer=[init(w, "W"), init(b, "b")])
    model = make_model(graph)

    d = np.float64
    y = np.maximum(x.astype(d) @ w.astype(d) + b.astype(d), 0.0)

    def check(ins):
        (xx,) = ins
        # float32 accumulation over k in order, vectorized over the outputs.
        acc = np.zeros((128, 256), np.float32)
        for p in range(256):
            acc = (acc + np.outer(xx[:, p], w[p, :]).astype(np.float32)
                   ).astype(np.float32)
        return [np.maximum(acc + b, np.float32(0))]

    return Case("matmul_compute_bound", model, [x], [y.astype(np.float32)],
                check)


# ---------------------------------------------------------------------------
# 7. int_elementwise_int32 / int_elementwise_int64
# ---------------------------------------------------------------------------

# Each integer elementwise op of opset 17 on one integer type, one output per
# op. a holds negatives, zero and values near the type's range (Mul and the
# int64 -> int32 Cast wrap); b is a non-zero divisor of either sign, so that
# Div (which truncates toward zero) differs from floor division and Mod
# (fmod=0, the divisor's sign) differs from fmod (fmod=1, the dividend's
# sign). BitShift is defined on unsigned types only: it shifts u, of the
# unsigned type of the same width, by s. (The Bitwise* ops need opset 18,
# which onnx 1.12 lacks; test/Conversion covers their lowering.)
INT_A = [-7, -6, -5, -1, 0, 1, 3, 5, 7, 100]
INT_B = [2, -4, 3, -3, 5, -1, -2, 5, 7, -9, 3, -7]
INT_E = [0, 1, 2, 3, 4, 5, 3, 2, 1, 0, 2, 3]
INT_COMPARES = [("Equal", "equal"), ("Less", "less"),
                ("LessOrEqual", "less_equal"), ("Greater", "greater"),
                ("GreaterOrEqual", "greater_equal")]


def wrap_int(v, bits, signed=True):
    """v reduced to a `bits`-wide two's-complement (or unsigned) integer."""
    v &= (1 << bits) - 1
    if signed and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def trunc_div(x, y):
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def build_int_elementwise(elem, bits):
    sdt = np.int32 if bits == 32 else np.int64
    udt = np.uint32 if bits == 32 else np.uint64
    uelem = TensorProto.UINT32 if bits == 32 else TensorProto.UINT64
    # Cast goes to the other width: int32 -> int64 widens, int64 -> int32
    # wraps.
    other, odt, obits = ((TensorProto.INT64, np.int64, 64) if bits == 32 else
                         (TensorProto.INT32, np.int32, 32))
    big = 2000000000 if bits == 32 else 4000000000000000000
    name = "int_elementwise_int%d" % bits
    shape = [2, 6]
    a = np.array(INT_A + [-big, big], sdt).reshape(shape)
    b = np.array(INT_B, sdt).reshape(shape)
    e = np.array(INT_E, sdt).reshape(shape)
    umax = (1 << bits) - 1
    u = np.array([0, 1, 2, 3, 255, 1024, umax, 1 << (bits - 1), 7, 12345,
                  1, 5], udt).reshape(shape)
    s = np.array([0, 1, 2, 3, 4, 5, bits - 1, bits - 1, 8, 16, bits - 2, 2],
                 udt).reshape(shape)

    unary = [("Abs", "abs"), ("Neg", "neg"), ("Sign", "sign"),
             ("Relu", "relu")]
    binary = [("Add", "add"), ("Sub", "sub"), ("Mul", "mul"), ("Div", "div"),
              ("Max", "max"), ("Min", "min")]
    nodes = []
    outs = []
    for op, out in unary:
        nodes.append(node(op, ["a"], [out], out + "/" + op))
        outs.append(vi(out, elem, shape))
    for op, out in binary:
        nodes.append(node(op, ["a", "b"], [out], out + "/" + op))
        outs.append(vi(out, elem, shape))
    nodes += [
        node("Mod", ["a", "b"], ["mod"], "mod/Mod"),
        node("Mod", ["a", "b"], ["fmod"], "fmod/Mod", fmod=1),
        node("Pow", ["b", "e"], ["pow"], "pow/Pow"),
        node("Clip", ["a", "lo", "hi"], ["clip"], "clip/Clip"),
    ]
    outs += [vi(n, elem, shape) for n in ("mod", "fmod", "pow", "clip")]
    for op, out in INT_COMPARES:
        nodes.append(node(op, ["a", "b"], [out], out + "/" + op))
        outs.append(vi(out, TensorProto.BOOL, shape))
    nodes += [
        node("Where", ["less", "a", "b"], ["where"], "where/Where"),
        node("Cast", ["a"], ["cast_int"], "cast_int/Cast", to=other),
        node("Cast", ["a"], ["cast_float"], "cast_float/Cast", to=F32),
        node("BitShift", ["u", "s"], ["shl"], "shl/BitShift", direction="LEFT"),
        node("BitShift", ["u", "s"], ["shr"], "shr/BitShift",
             direction="RIGHT"),
    ]
    outs += [vi("where", elem, shape), vi("cast_int", other, shape),
             vi("cast_float", F32, shape), vi("shl", uelem, shape),
             vi("shr", uelem, shape)]
    lo, hi = -5, 50
    graph = helper.make_graph(
        nodes, name,
        [vi("a", elem, shape), vi("b", elem, shape), vi("e", elem, shape),
         vi("u", uelem, shape), vi("s", uelem, shape)],
        outs,
        initializer=[init(np.array(lo, sdt), "lo"),
                     init(np.array(hi, sdt), "hi")])
    model = make_model(graph)

    # numpy references (integer arrays wrap around like the compiled code).
    refs = {
        "abs": np.abs(a), "neg": np.negative(a), "sign": np.sign(a),
        "relu": np.maximum(a, 0).astype(sdt), "add": a + b, "sub": a - b,
        "mul": a * b,
        "div": (np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))).astype(sdt),
        "max": np.maximum(a, b), "min": np.minimum(a, b),
        "mod": np.mod(a, b), "fmod": np.fmod(a, b), "pow": np.power(b, e),
        "clip": np.clip(a, lo, hi).astype(sdt),
        "equal": a == b, "less": a < b, "less_equal": a <= b,
        "greater": a > b, "greater_equal": a >= b,
        "where": np.where(a < b, a, b), "cast_int": a.astype(odt),
        "cast_float": a.astype(np.float32),
        "shl": np.left_shift(u, s), "shr": np.right_shift(u, s),
    }
    outputs = [refs[o.name] for o in outs]

    def check(ins):
        # Python integers, wrapped to the type after each op.
        aa, bb, ee, uu, ss = [[int(v) for v in t.flatten()] for t in ins]

        def w(v):
            return wrap_int(v, bits)

        def sign(v):
            return (v > 0) - (v < 0)

        cols = {
            "abs": [w(abs(x)) for x in aa], "neg": [w(-x) for x in aa],
            "sign": [sign(x) for x in aa], "relu": [max(x, 0) for x in aa],
            "add": [w(x + y) for x, y in zip(aa, bb)],
            "sub": [w(x - y) for x, y in zip(aa, bb)],
            "mul": [w(x * y) for x, y in zip(aa, bb)],
            "div": [w(trunc_div(x, y)) for x, y in zip(aa, bb)],
            "max": [max(x, y) for x, y in zip(aa, bb)],
            "min": [min(x, y) for x, y in zip(aa, bb)],
            "mod": [x % y for x, y in zip(aa, bb)],
            "fmod": [x - y * trunc_div(x, y) for x, y in zip(aa, bb)],
            "pow": [w(y ** k) for y, k in zip(bb, ee)],
            "clip": [min(max(x, lo), hi) for x in aa],
            "equal": [x == y for x, y in zip(aa, bb)],
            "less": [x < y for x, y in zip(aa, bb)],
            "less_equal": [x <= y for x, y in zip(aa, bb)],
            "greater": [x > y for x, y in zip(aa, bb)],
            "greater_equal": [x >= y for x, y in zip(aa, bb)],
            "where": [x if x < y else y for x, y in zip(aa, bb)],
            "cast_int": [wrap_int(x, obits) for x in aa],
            "cast_float": [float(x) for x in aa],
            "shl": [wrap_int(x << k, bits, False) for x, k in zip(uu, ss)],
            "shr": [x >> k for x, k in zip(uu, ss)],
        }
        return [np.array(cols[o.name], refs[o.name].dtype).reshape(shape)
                for o in outs]

    return Case(name, model, [a, b, e, u, s], outputs, check)


def build_int_elementwise_int32():
    return build_int_elementwise(TensorProto.INT32, 32)


def build_int_elementwise_int64():
    return build_int_elementwise(TensorProto.INT64, 64)


# ---------------------------------------------------------------------------
# bad fixtures
# ---------------------------------------------------------------------------


def make_gather_empty_axis(bad):
    """gather_empty_axis.onnx (found by ridge-fuzz-import): a Gather from the
    shape of a scalar, an empty axis that no index is in range of. The
    importer must report it, not fold it by reading past the empty shape."""
    g = helper.make_graph(
        [node("Shape", ["x"], ["s"], "dim/Shape"),
         node("Gather", ["s", "zero"], ["y"], "dim/Gather", axis=0)],
        "gather_empty_axis", [vi("x", F32, [])],
        [vi("y", TensorProto.INT64, [])],
        initializer=[init(np.array(0, dtype=np.int64), "zero")])
    p = os.path.join(bad, "gather_empty_axis.onnx")
    write_bytes(p, make_model(g).SerializeToString())
    return p


def make_rnn_state_rank(bad):
    """rnn_state_rank.onnx (found by ridge-fuzz-import): a batch-major
    (layout=1) RNN whose initial_h has rank 2. The importer must report it
    before transposing the state, not abort in type inference."""
    g = helper.make_graph(
        [node("RNN", ["x", "w", "r", "", "", "h0"], ["y"], "cell/RNN",
              hidden_size=2, layout=1)],
        "rnn_state_rank",
        [vi("x", F32, [1, 3, 4]), vi("w", F32, [1, 2, 4]),
         vi("r", F32, [1, 2, 2]), vi("h0", F32, [1, 2])],
        [vi("y", F32, [1, 3, 1, 2])])
    p = os.path.join(bad, "rnn_state_rank.onnx")
    write_bytes(p, make_model(g).SerializeToString())
    return p


def make_rnn_huge_hidden(bad):
    """rnn_huge_hidden.onnx (found by ridge-fuzz-import): an RNN whose
    hidden_size is INT64_MAX. Checking its weight shapes multiplied it past
    int64_t; it is an error instead."""
    g = helper.make_graph(
        [node("RNN", ["x", "w", "r"], ["y"], "cell/RNN",
              hidden_size=2**63 - 1)],
        "rnn_huge_hidden",
        [vi("x", F32, [1, 1, 4]), vi("w", F32, [1, 2, 4]),
         vi("r", F32, [1, 2, 2])],
        [vi("y", F32, [1, 1, 1, 2])])
    p = os.path.join(bad, "rnn_huge_hidden.onnx")
    write_bytes(p, make_model(g).SerializeToString())
    return p


def make_constant_no_output(bad):
    """constant_no_output.onnx (found by ridge-fuzz-import): a Constant node
    without outputs next to an Identity. The importer read its first output
    name out of bounds; the node is now an error naming it (Constant has one
    output)."""
    c = helper.make_node("Constant", [], [], "orphan/Constant",
                         value=numpy_helper.from_array(
                             np.array([1.0], dtype=np.float32)))
    g = helper.make_graph(
        [c, node("Identity", ["x"], ["y"], "pass/Identity")],
        "constant_no_output", [vi("x", F32, [2])], [vi("y", F32, [2])])
    p = os.path.join(bad, "constant_no_output.onnx")
    write_bytes(p, make_model(g).SerializeToString())
    return p


def make_reduce_extra_input(bad):
    """reduce_extra_input.onnx: a ReduceMean at opset 17 given its axes as a
    second input, as ReduceMean-18 takes them. ReduceMean-13 has one input;
    the importer ignored the second, reduced every axis, and the graph
    compiled to a wrong result (or failed in tiling). Now an error naming
    the node."""
    axes = numpy_helper.from_array(np.array([-1], dtype=np.int64), "axes")
    g = helper.make_graph(
        [helper.make_node("ReduceMean", ["x", "axes"], ["y"], "norm/Mean",
                          keepdims=1)],
        "reduce_extra_input", [vi("x", F32, [2, 4])], [vi("y", F32, [2, 1])],
        initializer=[axes])
    p = os.path.join(bad, "reduce_extra_input.onnx")
    write_bytes(p, make_model(g).SerializeToString())
    return p


def make_window_huge(bad):
    """window_huge.onnx (found by ridge-fuzz-import): a HannWindow of 2^61
    elements. The importer computes windows itself, one element at a time,
    and ran out of memory (24 GB) before the size check of its output; the
    size is now bounded before any element is computed."""
    size = numpy_helper.from_array(np.array(2**61, dtype=np.int64), "size")
    g = helper.make_graph(
        [helper.make_node("HannWindow", ["size"], ["y"], "win/Hann")],
        "window_huge", [], [vi("y", F32, [None])], initializer=[size])
    p = os.path.join(bad, "window_huge.onnx")
    write_bytes(p, make_model(g).SerializeToString())
    return p


def make_reshape_overflow(bad):
    """reshape_overflow.onnx (found by ridge-fuzz-import): a Reshape to
    [2^61, 8]. The product of the target dims overflowed int64 (undefined
    behaviour) before it was compared with the input's element count."""
    shape = numpy_helper.from_array(np.array([2**61, 8], dtype=np.int64),
                                    "shape")
    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], "flat/Reshape")],
        "reshape_overflow", [vi("x", F32, [2])], [vi("y", F32, [None, 8])],
        initializer=[shape])
    p = os.path.join(bad, "reshape_overflow.onnx")
    write_bytes(p, make_model(g).SerializeToString())
    return p


def make_bad_fixtures(out_dir, mlp_model_path):
    """Write <out>/bad/*. Returns list of (path, expect_checker_ok)."""
    bad = os.path.join(out_dir, "bad")
    os.makedirs(bad, exist_ok=True)
    written = []

    # not_onnx.onnx: plain text.
    p = os.path.join(bad, "not_onnx.onnx")
    write_bytes(p, b"this is not an onnx model\n")
    written.append((p, False))

    # truncated.onnx: first 60% of mlp_small/model.onnx.
    with open(mlp_model_path, "rb") as f:
        full = f.read()
    p = os.path.join(bad, "truncated.onnx")
    write_bytes(p, full[: int(len(full) * 0.6)])
    written.append((p, False))

    # cycle.onnx: A = Add(x, b_out) -> a_out ; B = Relu(a_out) -> b_out.
    nodes = [
        node("Add", ["x", "b_out"], ["a_out"], "A"),
        node("Relu", ["a_out"], ["b_out"], "B"),
    ]
    g = helper.make_graph(nodes, "cycle", [vi("x", F32, [2])],
                          [vi("a_out", F32, [2])])
    p = os.path.join(bad, "cycle.onnx")
    write_bytes(p, make_model(g).SerializeToString())
    written.append((p, False))

    # dangling.onnx: "ghost" is produced by nothing.
    nodes = [
        node("Add", ["x", "ghost"], ["sum"], "haunted/Add"),
        node("Relu", ["sum"], ["y"], "haunted/Relu"),
    ]
    g = helper.make_graph(nodes, "dangling", [vi("x", F32, [2])],
                          [vi("y", F32, [2])])
    p = os.path.join(bad, "dangling.onnx")
    write_bytes(p, make_model(g).SerializeToString())
    written.append((p, False))

    # unsupported.onnx: valid ONNX (passes the checker) with one op Ridgeline
    # does not implement (Det), one outside its scope (Bernoulli: random) and
    # one of a foreign domain; all three are reported in one run.
    nodes = [
        node("Det", ["x"], ["d"], "det1"),
        node("Bernoulli", ["x"], ["b"], "coin1"),
        helper.make_node("FusedGemm", ["x"], ["f"], "fused1",
                         domain="com.microsoft"),
        node("Relu", ["d"], ["y"], "relu1"),
    ]
    g = helper.make_graph(nodes, "unsupported", [vi("x", F32, [2, 3, 3])],
                          [vi("y", F32, [2]), vi("b", F32, [2, 3, 3]),
                           vi("f", F32, [2, 3, 3])])
    m = helper.make_model(
        g, opset_imports=[helper.make_opsetid("", OPSET),
                          helper.make_opsetid("com.microsoft", 1)],
        ir_version=IR_VERSION, producer_name=PRODUCER, producer_version="1")
    p = os.path.join(bad, "unsupported.onnx")
    write_bytes(p, m.SerializeToString())
    written.append((p, True))

    # old_opset.onnx: Add at opset 6 (before multidirectional broadcasting).
    g = helper.make_graph([node("Add", ["x", "x"], ["y"], "add_v6")],
                          "old_opset", [vi("x", F32, [2])],
                          [vi("y", F32, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 6)],
                          ir_version=IR_VERSION, producer_name=PRODUCER,
                          producer_version="1")
    p = os.path.join(bad, "old_opset.onnx")
    write_bytes(p, m.SerializeToString())
    written.append((p, True))

    # type_mismatch.onnx: Add of float and int64 (the checker allows it
    # without shape inference; the importer must name the node).
    g = helper.make_graph([node("Add", ["x", "i"], ["y"], "mixed_add")],
                          "type_mismatch",
                          [vi("x", F32, [2]), vi("i", TensorProto.INT64, [2])],
                          [vi("y", F32, [2])])
    p = os.path.join(bad, "type_mismatch.onnx")
    write_bytes(p, make_model(g).SerializeToString())
    written.append((p, False))

    # string_input.onnx: a string graph input (bfloat16, by contrast, is
    # supported).
    g = helper.make_graph([node("Identity", ["x"], ["y"], "text_identity")],
                          "string_input",
                          [vi("x", TensorProto.STRING, [2])],
                          [vi("y", TensorProto.STRING, [2])])
    p = os.path.join(bad, "string_input.onnx")
    write_bytes(p, make_model(g).SerializeToString())
    written.append((p, True))

    # symbolic_dims.onnx (valid): two inputs share the symbols batch and seq;
    # one more has its own symbol. Not bad input: the importer binds symbols
    # given by one input's --shape for the others.
    g = helper.make_graph(
        [node("Add", ["a", "b"], ["s"], "sum"),
         node("Mul", ["s", "c"], ["y"], "scale")],
        "symbolic_dims",
        [helper.make_tensor_value_info("a", F32, ["batch", "seq"]),
         helper.make_tensor_value_info("b", F32, ["batch", "seq"]),
         helper.make_tensor_value_info("c", F32, ["width"])],
        [helper.make_tensor_value_info("y", F32, ["batch", "seq"])])
    p = os.path.join(bad, "symbolic_dims.onnx")
    write_bytes(p, make_model(g).SerializeToString())
    written.append((p, True))

    # where_broadcast.onnx: a Where whose condition (3) does not broadcast
    # against its operands (2), feeding a chain of nodes: one root cause, so
    # one error, and nothing about the nodes downstream of it.
    nodes = [
        node("Where", ["c", "x", "x"], ["w"], "pick/Where"),
        node("Relu", ["w"], ["r"], "chain/Relu"),
        node("Add", ["r", "x"], ["s"], "chain/Add"),
        node("Mul", ["s", "s"], ["m"], "chain/Mul"),
        node("Tanh", ["m"], ["y"], "chain/Tanh"),
    ]
    g = helper.make_graph(nodes, "where_broadcast",
                          [vi("c", TensorProto.BOOL, [3]), vi("x", F32, [2])],
                          [vi("y", F32, [2])])
    p = os.path.join(bad, "where_broadcast.onnx")
    write_bytes(p, make_model(g).SerializeToString())
    written.append((p, False))

    # independent_errors.onnx: the chain of where_broadcast.onnx plus an
    # unrelated Add of mismatched types with a consumer, and a healthy node
    # that uses both failed values: both root causes are reported, nothing
    # else.
    nodes = [
        node("Where", ["c", "x", "x"], ["w"], "pick/Where"),
        node("Relu", ["w"], ["r"], "chain/Relu"),
        node("Add", ["x", "i"], ["t"], "mixed/Add"),
        node("Neg", ["t"], ["n"], "mixed/Neg"),
        node("Sub", ["r", "n"], ["y"], "join/Sub"),
        node("Abs", ["x"], ["z"], "healthy/Abs"),
    ]
    g = helper.make_graph(nodes, "independent_errors",
                          [vi("c", TensorProto.BOOL, [3]), vi("x", F32, [2]),
                           vi("i", TensorProto.INT64, [2])],
                          [vi("y", F32, [2]), vi("z", F32, [2])])
    p = os.path.join(bad, "independent_errors.onnx")
    write_bytes(p, make_model(g).SerializeToString())
    written.append((p, False))

    # external_offset.onnx / external_length.onnx: initializer 'w' in
    # external data (external.bin, 16 bytes) whose offset is not a number, or
    # whose length is negative.
    write_bytes(os.path.join(bad, "external.bin"), bytes(16))
    for field, offset, length in (("offset", "abc", "16"),
                                  ("length", "0", "-16")):
        w = TensorProto()
        w.name = "w"
        w.data_type = F32
        w.dims.append(4)
        w.data_location = TensorProto.EXTERNAL
        for key, value in (("location", "external.bin"), ("offset", offset),
                           ("length", length)):
            entry = w.external_data.add()
            entry.key = key
            entry.value = value
        g = helper.make_graph([node("Add", ["x", "w"], ["y"], "bias/Add")],
                              "external_" + field, [vi("x", F32, [4])],
                              [vi("y", F32, [4])], initializer=[w])
        p = os.path.join(bad, "external_%s.onnx" % field)
        write_bytes(p, make_model(g).SerializeToString())
        written.append((p, False))

    p = make_gather_empty_axis(bad)
    written.append((p, True))
    p = make_rnn_state_rank(bad)
    written.append((p, False))
    p = make_rnn_huge_hidden(bad)
    written.append((p, True))
    p = make_constant_no_output(bad)
    written.append((p, False))
    p = make_reduce_extra_input(bad)
    written.append((p, False))
    p = make_window_huge(bad)
    written.append((p, True))
    p = make_reshape_overflow(bad)
    written.append((p, True))

    # Test-data dirs meant to be used as `--test-data DIR` with mlp_small.
    x, w1, b1, w2, b2 = mlp_weights()
    probs = mlp_ref(x, w1, b1, w2, b2)

    dwc = os.path.join(bad, "data_wrong_count")
    os.makedirs(dwc, exist_ok=True)
    clear_pb(dwc)
    write_tensor(os.path.join(dwc, "input_0.pb"), x, "x")
    extra = randn(np.random.RandomState(7007), (4, 64))
    write_tensor(os.path.join(dwc, "input_1.pb"), extra, "extra")
    write_tensor(os.path.join(dwc, "output_0.pb"), probs, "probs")

    dws = os.path.join(bad, "data_wrong_shape")
    os.makedirs(dws, exist_ok=True)
    clear_pb(dws)
    x63 = np.ascontiguousarray(x[:, :63])
    write_tensor(os.path.join(dws, "input_0.pb"), x63, "x")
    write_tensor(os.path.join(dws, "output_0.pb"), probs, "probs")

    return written


# ---------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------

BUILDERS = [
    build_mlp_small,
    build_attention_block,
    build_pointwise_mix,
    build_cast_int,
    build_gemm_variants,
    build_matmul_bcast,
    build_matmul_compute_bound,
    build_int_elementwise_int32,
    build_int_elementwise_int64,
]

DTYPE_NAMES = {v: k for k, v in TensorProto.DataType.items()}


def describe(vinfo):
    t = vinfo.type.tensor_type
    dims = [d.dim_value if d.HasField("dim_value") else d.dim_param
            for d in t.shape.dim]
    return "%s %s %s" % (vinfo.name, DTYPE_NAMES[t.elem_type], dims)


def np_dtype(elem_type):
    # helper.tensor_dtype_to_np_dtype exists from onnx 1.13; onnx.mapping
    # (deprecated there) is what 1.12 has.
    if hasattr(helper, "tensor_dtype_to_np_dtype"):
        return helper.tensor_dtype_to_np_dtype(elem_type)
    return onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[elem_type]


def load_tensor(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t


def compare(got, want, what):
    if got.dtype != want.dtype or got.shape != want.shape:
        return "%s: dtype/shape %s%s vs %s%s" % (
            what, got.dtype, got.shape, want.dtype, want.shape)
    if got.dtype.kind == "f":
        tol = 1e-2 if got.dtype == np.float16 else 1e-5
        if not np.allclose(got.astype(np.float64), want.astype(np.float64),
                           rtol=tol, atol=tol):
            err = np.max(np.abs(got.astype(np.float64) -
                                want.astype(np.float64)))
            return "%s: max abs err %g" % (what, err)
        return None
    if not np.array_equal(got, want):
        return "%s: values differ" % what
    return None


def main(argv):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", metavar="OUT_DIR",
                        help="folder to write the models into")
    out_dir = parser.parse_args(argv[1:]).out_dir
    os.makedirs(out_dir, exist_ok=True)
    failures = []

    for build in BUILDERS:
        case = build()
        mdir = os.path.join(out_dir, case.name)
        ddir = os.path.join(mdir, "test_data_set_0")
        os.makedirs(ddir, exist_ok=True)
        clear_pb(ddir)
        mpath = os.path.join(mdir, "model.onnx")
        write_bytes(mpath, case.model.SerializeToString())
        g = case.model.graph
        assert len(g.input) == len(case.inputs)
        assert len(g.output) == len(case.outputs)
        for k, (v, arr) in enumerate(zip(g.input, case.inputs)):
            write_tensor(os.path.join(ddir, "input_%d.pb" % k), arr, v.name)
        for k, (v, arr) in enumerate(zip(g.output, case.outputs)):
            write_tensor(os.path.join(ddir, "output_%d.pb" % k), arr, v.name)

        # --- verify what is on disk ---
        status = []
        m = onnx.load(mpath)
        try:
            onnx.checker.check_model(m, full_check=True)
            status.append("checker ok")
        except Exception as e:  # noqa: BLE001
            failures.append("%s: checker failed: %s" % (case.name, e))
            status.append("CHECKER FAILED")
        names = [n.name for n in m.graph.node]
        if len(set(names)) != len(names) or not all(names):
            failures.append("%s: node names not unique/non-empty" % case.name)
        ins, outs = [], []
        for k, v in enumerate(m.graph.input):
            t = load_tensor(os.path.join(ddir, "input_%d.pb" % k))
            assert t.name == v.name
            ins.append(numpy_helper.to_array(t))
        for k, v in enumerate(m.graph.output):
            t = load_tensor(os.path.join(ddir, "output_%d.pb" % k))
            assert t.name == v.name
            arr = numpy_helper.to_array(t)
            # declared elem type / shape must match the data
            tt = v.type.tensor_type
            want_np = np_dtype(tt.elem_type)
            dims = tuple(d.dim_value for d in tt.shape.dim)
            if arr.dtype != want_np or arr.shape != dims:
                failures.append("%s: output %s data %s%s != declared %s%s" % (
                    case.name, v.name, arr.dtype, arr.shape, want_np, dims))
            outs.append(arr)
        second = case.check(ins)
        for v, got, want in zip(m.graph.output, outs, second):
            err = compare(got, np.asarray(want), "%s/%s" % (case.name, v.name))
            if err:
                failures.append("second-way reference mismatch: " + err)
        status.append("refs cross-checked")

        print("%-16s %s, %d nodes, %d bytes" % (
            case.name, "; ".join(status), len(m.graph.node),
            os.path.getsize(mpath)))
        for v in m.graph.input:
            print("    in : " + describe(v))
        for v in m.graph.output:
            print("    out: " + describe(v))

    bad = make_bad_fixtures(out_dir, os.path.join(out_dir, "mlp_small",
                                                  "model.onnx"))
    print("bad fixtures:")
    for path, expect_ok in bad:
        try:
            onnx.checker.check_model(onnx.load(path), full_check=True)
            ok, msg = True, "checker ok"
        except Exception as e:  # noqa: BLE001
            ok = False
            msg = "checker rejects: %s" % str(e).strip().splitlines()[0][:100]
        flag = "" if ok == expect_ok else "   <-- UNEXPECTED"
        if ok != expect_ok:
            failures.append("%s: checker result %s, expected %s" % (
                path, ok, expect_ok))
        print("    %-28s %s%s" % (os.path.basename(path), msg, flag))
    for d in ("data_wrong_count", "data_wrong_shape"):
        dd = os.path.join(out_dir, "bad", d)
        parts = []
        for fn in sorted(os.listdir(dd)):
            t = load_tensor(os.path.join(dd, fn))
            parts.append("%s(%s %s %s)" % (fn, t.name,
                                           DTYPE_NAMES[t.data_type],
                                           list(t.dims)))
        print("    %-28s %s" % (d + "/", ", ".join(parts)))

    total = 0
    for root, _, files in os.walk(out_dir):
        for fn in files:
            total += os.path.getsize(os.path.join(root, fn))
    print("total size of %s: %d bytes" % (out_dir, total))

    if failures:
        print("FAILURES:")
        for f in failures:
            print("  " + f)
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
