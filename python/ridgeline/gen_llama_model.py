#!/usr/bin/env python3
"""Writes a LLaMA-style decoder as ONNX with its weights as external data.

The graph is what PyTorch exports for a Hugging Face LlamaForCausalLM
prefill at a fixed sequence length: token embedding (Gather), per layer an
RMSNorm computed in f32 (Cast, Pow, ReduceMean, Add, Sqrt, Div, Mul, Cast),
q/k/v projections, rotary embeddings (Slice, Neg, Concat with cos/sin
tables), grouped-query attention (k and v repeated with Unsqueeze, Expand,
Reshape), scaled scores plus a causal mask, Softmax in f32, the output
projection, a SwiGLU MLP (Sigmoid, Mul) and residual Adds; then a final
RMSNorm and the LM head. Weights are fp16 or bf16 in one side file,
OUT/model.weights, each tensor at a 64-byte aligned offset (4096 from
1 MiB up), written a tensor at a time so that generating 1B parameters
needs no more memory than the largest tensor.

  gen_llama_model.py OUT [--preset 1b|tiny] [--layers N] [--hidden D]
                     [--ffn F] [--heads H] [--kv-heads K] [--vocab V]
                     [--seq S] [--dtype fp16|bf16] [--seed N]

Writes OUT/model.onnx and OUT/model.weights, and prints the parameter count
and the weights' size. With --test-data it also writes random token ids as
OUT/test_data_set_0/input_0.pb (the ONNX backend-test layout; reference
outputs come from tools/ort-reference/ort_run.py --out).
"""

import argparse
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

PRESETS = {
    # TinyLlama-1.1B's shape: 22 layers, d 2048, 32 heads over 4 KV heads.
    "1b": dict(layers=22, hidden=2048, ffn=5632, heads=32, kv_heads=4,
               vocab=32000, seq=128),
    # A model that runs in a test: 2 layers, d 64, 4 heads over 2 KV heads.
    "tiny": dict(layers=2, hidden=64, ffn=176, heads=4, kv_heads=2,
                 vocab=256, seq=16),
}
# Offsets of tensors from 1 MiB up are page aligned, smaller ones 64-byte.
PAGE, LINE = 4096, 64


def to_bf16_bits(values):
    """f32 -> bf16 bit patterns (uint16), rounding to nearest even."""
    bits = values.astype(np.float32).view(np.uint32)
    rounding = ((bits >> 16) & 1) + 0x7FFF
    return ((bits + rounding) >> 16).astype(np.uint16)


class Writer:
    """Builds the graph and streams initializers to the side file."""

    def __init__(self, out, dtype, seed):
        self.weights_path = os.path.join(out, "model.weights")
        self.file = open(self.weights_path, "wb")
        self.dtype = dtype
        self.elem = TensorProto.FLOAT16 if dtype == "fp16" else \
            TensorProto.BFLOAT16
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []
        self.params = 0
        self.count = 0

    def close(self):
        self.file.close()

    def _external(self, name, dims, elem, raw):
        offset = self.file.tell()
        pad = (-offset) % (PAGE if len(raw) >= 1 << 20 else LINE)
        if pad:
            self.file.write(bytes(pad))
            offset += pad
        self.file.write(raw)
        t = TensorProto()
        t.name = name
        t.data_type = elem
        t.dims.extend(dims)
        t.data_location = TensorProto.EXTERNAL
        for key, value in (("location", "model.weights"),
                           ("offset", str(offset)), ("length", str(len(raw)))):
            entry = t.external_data.add()
            entry.key = key
            entry.value = value
        self.inits.append(t)
        return name

    def weight(self, name, dims, scale=0.02, values=None):
        """A weight tensor of the model's dtype: `values`, or N(0, scale)."""
        if values is None:
            values = self.rng.standard_normal(dims, dtype=np.float32) * scale
        self.params += int(np.prod(dims))
        if self.dtype == "fp16":
            raw = values.astype(np.float16).tobytes()
        else:
            raw = to_bf16_bits(values).tobytes()
        return self._external(name, dims, self.elem, raw)

    def const(self, name, values, elem):
        """A small constant kept inline in the model file."""
        array = np.asarray(values)
        self.inits.append(helper.make_tensor(name, elem, array.shape,
                                             array.flatten().tolist()))
        return name

    def op(self, kind, inputs, **attrs):
        self.count += 1
        name = "%s_%d" % (kind, self.count)
        self.nodes.append(helper.make_node(kind, inputs, [name], name=name,
                                           **attrs))
        return name


def build(out, cfg, dtype, seed):
    w = Writer(out, dtype, seed)
    d, heads, kv, seq = cfg["hidden"], cfg["heads"], cfg["kv_heads"], cfg["seq"]
    dh, group = d // heads, heads // kv
    i64, f32 = TensorProto.INT64, TensorProto.FLOAT
    op = w.op

    # Shared constants.
    two = w.const("two", [2.0], f32)
    eps = w.const("eps", [1e-5], f32)
    one = w.const("one", [1.0], f32)
    axes_2 = w.const("axes_2", [2], i64)
    axes_3 = w.const("axes_3", [3], i64)
    half_lo = (w.const("zero_i", [0], i64), w.const("half_i", [dh // 2], i64))
    half_hi = (w.const("half_i2", [dh // 2], i64),
               w.const("end_i", [dh], i64))
    q_shape = w.const("q_shape", [1, seq, heads, dh], i64)
    kv_shape = w.const("kv_shape", [1, seq, kv, dh], i64)
    expand_shape = w.const("expand_shape", [1, kv, group, seq, dh], i64)
    rep_shape = w.const("rep_shape", [1, heads, seq, dh], i64)
    merge_shape = w.const("merge_shape", [1, seq, d], i64)
    inv_freq = 1.0 / (10000.0 ** (np.arange(0, dh, 2) / dh))
    angles = np.outer(np.arange(seq), inv_freq)
    angles = np.concatenate([angles, angles], axis=-1)
    cos = w.weight("rope_cos", [1, 1, seq, dh], values=np.cos(angles))
    sin = w.weight("rope_sin", [1, 1, seq, dh], values=np.sin(angles))
    mask = np.triu(np.full((seq, seq), -65504.0 if dtype == "fp16" else -3e38,
                           dtype=np.float32), 1)
    causal = w.weight("causal_mask", [1, 1, seq, seq],
                      values=mask.reshape(1, 1, seq, seq))
    scale = w.weight("score_scale", [1], values=np.array([dh ** -0.5]))

    def rms_norm(x, name):
        gamma = w.weight(name, [d], values=np.ones(d, dtype=np.float32))
        xf = op("Cast", [x], to=f32)
        var = op("ReduceMean", [op("Pow", [xf, two])], axes=[-1], keepdims=1)
        normed = op("Div", [xf, op("Sqrt", [op("Add", [var, eps])])])
        return op("Mul", [gamma, op("Cast", [normed], to=w.elem)])

    def rotary(x):
        lo = op("Slice", [x, half_lo[0], half_lo[1], axes_3])
        hi = op("Slice", [x, half_hi[0], half_hi[1], axes_3])
        rotated = op("Concat", [op("Neg", [hi]), lo], axis=-1)
        return op("Add", [op("Mul", [x, cos]), op("Mul", [rotated, sin])])

    def repeat_kv(x):
        if group == 1:
            return x
        grown = op("Expand", [op("Unsqueeze", [x, axes_2]), expand_shape])
        return op("Reshape", [grown, rep_shape])

    h = op("Gather", [w.weight("embed_tokens", [cfg["vocab"], d]),
                      "input_ids"], axis=0)
    for layer in range(cfg["layers"]):
        p = "layers.%d." % layer
        x = rms_norm(h, p + "input_layernorm.weight")
        q = op("MatMul", [x, w.weight(p + "q_proj", [d, d])])
        k = op("MatMul", [x, w.weight(p + "k_proj", [d, kv * dh])])
        v = op("MatMul", [x, w.weight(p + "v_proj", [d, kv * dh])])
        q = op("Transpose", [op("Reshape", [q, q_shape])], perm=[0, 2, 1, 3])
        k = op("Transpose", [op("Reshape", [k, kv_shape])], perm=[0, 2, 1, 3])
        v = op("Transpose", [op("Reshape", [v, kv_shape])], perm=[0, 2, 1, 3])
        q, k = rotary(q), rotary(k)
        k, v = repeat_kv(k), repeat_kv(v)
        scores = op("MatMul", [q, op("Transpose", [k], perm=[0, 1, 3, 2])])
        scores = op("Add", [op("Mul", [scores, scale]), causal])
        probs = op("Cast", [op("Softmax", [op("Cast", [scores], to=f32)],
                               axis=-1)], to=w.elem)
        ctx = op("Transpose", [op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
        ctx = op("Reshape", [ctx, merge_shape])
        h = op("Add", [h, op("MatMul", [ctx, w.weight(p + "o_proj", [d, d])])])
        x = rms_norm(h, p + "post_attention_layernorm.weight")
        gate = op("MatMul", [x, w.weight(p + "gate_proj", [d, cfg["ffn"]])])
        up = op("MatMul", [x, w.weight(p + "up_proj", [d, cfg["ffn"]])])
        act = op("Mul", [op("Mul", [gate, op("Sigmoid", [gate])]), up])
        h = op("Add", [h, op("MatMul", [act, w.weight(p + "down_proj",
                                                      [cfg["ffn"], d])])])
    x = rms_norm(h, "norm.weight")
    logits = op("MatMul", [x, w.weight("lm_head", [d, cfg["vocab"]])])
    w.nodes.append(helper.make_node("Identity", [logits], ["logits"],
                                    name="logits"))
    w.close()

    graph = helper.make_graph(
        w.nodes, "llama_decoder",
        [helper.make_tensor_value_info("input_ids", i64, [1, seq])],
        [helper.make_tensor_value_info("logits", w.elem,
                                       [1, seq, cfg["vocab"]])],
        initializer=w.inits)
    model = helper.make_model(graph, producer_name="ridgeline-gen-llama",
                              opset_imports=[helper.make_opsetid("", 17)])
    with open(os.path.join(out, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    return w.params, os.path.getsize(w.weights_path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", help="output folder")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="1b")
    for key in PRESETS["1b"]:
        parser.add_argument("--" + key.replace("_", "-"), type=int)
    parser.add_argument("--dtype", choices=["fp16", "bf16"], default="fp16")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--test-data", action="store_true",
                        help="also write OUT/test_data_set_0/input_0.pb")
    args = parser.parse_args()
    cfg = dict(PRESETS[args.preset])
    for key in cfg:
        if getattr(args, key) is not None:
            cfg[key] = getattr(args, key)
    if cfg["hidden"] % cfg["heads"] or cfg["heads"] % cfg["kv_heads"] or \
            (cfg["hidden"] // cfg["heads"]) % 2:
        parser.error("hidden must split into heads of even size, and heads "
                     "into kv-heads")
    os.makedirs(args.out, exist_ok=True)
    params, size = build(args.out, cfg, args.dtype, args.seed)
    if args.test_data:
        ids = np.random.default_rng(args.seed + 1).integers(
            0, cfg["vocab"], size=[1, cfg["seq"]], dtype=np.int64)
        data = os.path.join(args.out, "test_data_set_0")
        os.makedirs(data, exist_ok=True)
        with open(os.path.join(data, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(ids, "input_ids")
                    .SerializeToString())
    print("parameters: %d (%.3f B); weights: %d bytes (%.2f GiB, %s) in %s"
          % (params, params / 1e9, size, size / 2**30, args.dtype,
             os.path.join(args.out, "model.weights")))


if __name__ == "__main__":
    main()
