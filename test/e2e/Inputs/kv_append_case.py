"""Writes a KV-cache decode step in the ONNX backend-test layout: one ONNX
Attention (opset 23) over 4-D Q [1, H, L, D] and the new K, V [1, Hkv, L, D]
with past_key/past_value [1, Hkv, P, D], whose outputs are Y and
present_key/present_value (the concatenations), and the float64 NumPy
reference (query row i at position P + i; causal: it sees keys up to it).

  kv_append_case.py BENCH_DIR OUT_DIR HEADS KV_HEADS Q_LEN PAST DIM
                    causal|full [float32|float16] [bool_mask|softcap]

bool_mask: a boolean attn_mask input [1, 1, Q_LEN, PAST + Q_LEN] (the
last input; about a third of the keys forbidden, the last key of each row
allowed). softcap: the scores soft-capped at 2 (2 tanh(s / 2)).

The model is bench/attention.py's make_kv_append_model (the GPU bundle's
decode-step rows).
"""
import os
import sys

import numpy as np
from onnx import numpy_helper


def main(bench, out, heads, kv_heads, q_len, past, dim, mode,
         dtype="float32", mask=""):
    sys.path.insert(0, bench)
    import attention
    heads, kv_heads, q_len, past, dim = (int(heads), int(kv_heads),
                                         int(q_len), int(past), int(dim))
    causal = mode == "causal"
    shapes = {"q": (1, heads, q_len, dim), "k": (1, kv_heads, q_len, dim),
              "v": (1, kv_heads, q_len, dim),
              "past_key": (1, kv_heads, past, dim),
              "past_value": (1, kv_heads, past, dim)}
    data = os.path.join(out, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    bool_mask = mask == "bool_mask"
    softcap = 2.0 if mask == "softcap" else 0.0
    attention.make_kv_append_model(os.path.join(out, "model.onnx"), heads,
                                   kv_heads, q_len, past, dim, causal, dtype,
                                   bool_mask, softcap)

    rng = np.random.default_rng(5)
    t = {n: rng.standard_normal(s).astype(dtype).astype(np.float64)
         for n, s in shapes.items()}
    for i, n in enumerate(shapes):
        with open(os.path.join(data, "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(t[n].astype(dtype), n)
                    .SerializeToString())
    allowed = np.ones((q_len, past + q_len), bool)
    if bool_mask:
        allowed = rng.random((q_len, past + q_len)) > 0.3
        allowed[:, -1] = True
        with open(os.path.join(data, "input_%d.pb" % len(shapes)), "wb") as f:
            f.write(numpy_helper.from_array(allowed.reshape(
                1, 1, q_len, past + q_len), "mask").SerializeToString())
    keys = np.concatenate([t["past_key"], t["k"]], axis=2)
    values = np.concatenate([t["past_value"], t["v"]], axis=2)
    group = heads // kv_heads
    y = np.zeros((1, heads, q_len, dim))
    for h in range(heads):
        scores = t["q"][0, h] @ keys[0, h // group].T / np.sqrt(dim)
        if softcap > 0:
            scores = softcap * np.tanh(scores / softcap)
        scores = np.where(allowed, scores, -np.inf)
        if causal:
            for i in range(q_len):
                scores[i, past + i + 1:] = -np.inf
        p = np.exp(scores - scores.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        y[0, h] = p @ values[0, h // group]
    for i, (n, value) in enumerate((("y", y), ("present_key", keys),
                                    ("present_value", values))):
        with open(os.path.join(data, "output_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(value.astype(dtype), n)
                    .SerializeToString())


if __name__ == "__main__":
    main(*sys.argv[1:])
