"""Writes a rotary-embedding attention test case in the ONNX backend-test
layout: Q, K, V [1, H, L, D] inputs, LLaMA's RoPE on Q and K as exported
(x * cos + concat(-x[.., D/2:], x[.., :D/2]) * sin with constant
[1, 1, L, D] tables, cat(freqs, freqs)), then causal attention (the chain
of bench/attention.py; queries end the keys: query i is position
KV_LEN - Q_LEN + i), random inputs and the float64 NumPy reference.

  rope_attention_case.py OUT_DIR HEADS Q_LEN KV_LEN DIM
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def tables(positions, dim):
    inv = 1.0 / (10000.0 ** (np.arange(0, dim, 2, dtype=np.float64) / dim))
    freqs = np.outer(positions, inv)
    emb = np.concatenate([freqs, freqs], axis=-1)
    return (np.cos(emb).astype(np.float32)[None, None],
            np.sin(emb).astype(np.float32)[None, None])


def main(out, heads, q_len, kv_len, dim):
    heads, q_len, kv_len, dim = int(heads), int(q_len), int(kv_len), int(dim)
    half = dim // 2
    q_cos, q_sin = tables(np.arange(kv_len - q_len, kv_len), dim)
    k_cos, k_sin = tables(np.arange(kv_len), dim)
    inits = [numpy_helper.from_array(a, n) for a, n in (
        (q_cos, "q_cos"), (q_sin, "q_sin"), (k_cos, "k_cos"),
        (k_sin, "k_sin"))]
    for name, value in (("lo_start", [0]), ("lo_end", [half]),
                        ("hi_start", [half]), ("hi_end", [dim]),
                        ("axes", [3])):
        inits.append(numpy_helper.from_array(np.array(value, np.int64), name))
    nodes = []
    for x in ("q", "k"):
        nodes += [
            helper.make_node("Mul", [x, x + "_cos"], [x + "_c"]),
            helper.make_node("Slice", [x, "lo_start", "lo_end", "axes"],
                             [x + "_lo"]),
            helper.make_node("Slice", [x, "hi_start", "hi_end", "axes"],
                             [x + "_hi"]),
            helper.make_node("Neg", [x + "_hi"], [x + "_nhi"]),
            helper.make_node("Concat", [x + "_nhi", x + "_lo"], [x + "_rot"],
                             axis=-1),
            helper.make_node("Mul", [x + "_rot", x + "_sin"], [x + "_s"]),
            helper.make_node("Add", [x + "_c", x + "_s"], [x + "_r"]),
        ]
    kpos = np.arange(kv_len, dtype=np.int64).reshape(1, kv_len)
    qpos = (np.arange(q_len, dtype=np.int64) + kv_len - q_len).reshape(
        q_len, 1)
    inits += [numpy_helper.from_array(kpos, "kpos"),
              numpy_helper.from_array(qpos, "qpos"),
              numpy_helper.from_array(
                  np.array(np.finfo(np.float32).min, np.float32), "min"),
              numpy_helper.from_array(
                  np.array(1.0 / math.sqrt(dim), np.float32), "scale")]
    nodes += [
        helper.make_node("Transpose", ["k_r"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q_r", "kt"], ["s"]),
        helper.make_node("Mul", ["s", "scale"], ["ss"]),
        helper.make_node("LessOrEqual", ["kpos", "qpos"], ["allow"]),
        helper.make_node("Where", ["allow", "ss", "min"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["o"]),
    ]
    f32 = TensorProto.FLOAT
    graph = helper.make_graph(
        nodes, "rope_attention",
        [helper.make_tensor_value_info("q", f32, [1, heads, q_len, dim]),
         helper.make_tensor_value_info("k", f32, [1, heads, kv_len, dim]),
         helper.make_tensor_value_info("v", f32, [1, heads, kv_len, dim])],
        [helper.make_tensor_value_info("o", f32, [1, heads, q_len, dim])],
        inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))

    rng = np.random.default_rng(11)
    tensors = {}
    for i, (name, length) in enumerate((("q", q_len), ("k", kv_len),
                                        ("v", kv_len))):
        tensors[name] = rng.standard_normal((1, heads, length, dim)).astype(
            np.float32)
        with open(os.path.join(out, "test_data_set_0", "input_%d.pb" % i),
                  "wb") as f:
            f.write(numpy_helper.from_array(tensors[name], name)
                    .SerializeToString())

    def rope(x, cos, sin):
        x = x.astype(np.float64)
        rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
        return x * cos + rotated * sin

    q = rope(tensors["q"], q_cos, q_sin)
    k = rope(tensors["k"], k_cos, k_sin)
    v = tensors["v"].astype(np.float64)
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dim)
    allowed = kpos <= qpos
    scores = np.where(allowed, scores, np.finfo(np.float32).min)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    o = (p / p.sum(-1, keepdims=True)) @ v
    with open(os.path.join(out, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(o.astype(np.float32), "o")
                .SerializeToString())


if __name__ == "__main__":
    main(*sys.argv[1:])
