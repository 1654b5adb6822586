"""Writes an attention test case in the ONNX backend-test layout: the model
bench/attention.py writes (GPT-2's chain, Q, K, V [1, H, L, D] inputs),
random inputs and the float64 NumPy reference of softmax(Q K^T / sqrt(D)
[+ causal mask]) V.

  attention_case.py BENCH_DIR OUT_DIR HEADS Q_LEN KV_LEN DIM causal|full
                    [float32|float16|bfloat16]

In float16/bfloat16 the model's inputs, chain and output are in that type;
the reference is computed in float64 from the rounded inputs and stored
rounded.
"""
import os
import sys

import numpy as np


def main(bench, out, heads, q_len, kv_len, dim, mode, dtype="float32"):
    sys.path.insert(0, bench)
    import attention
    heads, q_len, kv_len, dim = int(heads), int(q_len), int(kv_len), int(dim)
    causal = mode == "causal"
    data = os.path.join(out, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    attention.make_model(os.path.join(out, "model.onnx"), heads, q_len,
                         kv_len, dim, causal, dtype)

    def rounded(values):
        if dtype == "bfloat16":
            return attention.bf16_values(attention.bf16_bits(values))
        return values.astype(dtype).astype(np.float32)

    rng = np.random.default_rng(7)
    tensors = {}
    for i, (name, length) in enumerate((("q", q_len), ("k", kv_len),
                                        ("v", kv_len))):
        tensors[name] = rounded(rng.standard_normal(
            (1, heads, length, dim)).astype(np.float32))
        with open(os.path.join(data, "input_%d.pb" % i), "wb") as f:
            f.write(attention.make_tensor(name, tensors[name], dtype)
                    .SerializeToString())
    q, k, v = (tensors[n].astype(np.float64) for n in "qkv")
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dim)
    if causal:
        # Query i sits at position kv_len - q_len + i (a cache before it).
        allowed = (np.arange(kv_len)[None, :] <=
                   np.arange(q_len)[:, None] + kv_len - q_len)
        # The model's Where fill: a row that sees no key (more queries
        # than keys) is then uniform over all keys, as the exported Softmax
        # makes it, not NaN.
        scores = np.where(allowed, scores, np.finfo(np.float32).min)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    o = (p / p.sum(-1, keepdims=True)) @ v
    with open(os.path.join(data, "output_0.pb"), "wb") as f:
        f.write(attention.make_tensor("o", o.astype(np.float32), dtype)
                .SerializeToString())


if __name__ == "__main__":
    main(*sys.argv[1:])
