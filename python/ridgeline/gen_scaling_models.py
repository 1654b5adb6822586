#!/usr/bin/env python3
"""Writes the graphs bench/compile-scaling.sh compiles, to measure how compile
time grows with graph size.

  chain N        x -> Add(c_1) -> Mul(c_2) -> ... : N elementwise nodes over a
                 [64, 256] f32 tensor, alternating Add, Mul, Sub (each with a
                 one-element constant of its own) and Tanh
  transformer L  L pre-LayerNorm GPT blocks (d_model 128, 4 heads, sequence
                 64, MLP 512 with erf GELU), each 30-odd nodes as PyTorch
                 exports them: LayerNormalization, MatMul + Add, the head
                 split (Reshape, Transpose), scaled scores, Softmax, the head
                 merge, residual Adds

Usage: gen_scaling_models.py OUT_DIR chain N [N ...] | transformer L [L ...]
Writes OUT_DIR/chain_N.onnx or OUT_DIR/transformer_L.onnx.
"""

import argparse
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F32 = TensorProto.FLOAT


def write(path, nodes, inputs, outputs, initializers):
    graph = helper.make_graph(nodes, os.path.basename(path), inputs, outputs,
                              initializer=initializers)
    model = helper.make_model(graph, producer_name="ridgeline-scaling",
                              opset_imports=[helper.make_opsetid("", 17)])
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def chain(out, n):
    rng = np.random.RandomState(n)
    shape = [64, 256]
    inits, nodes = [], []
    prev = "x"
    ops = ["Add", "Mul", "Sub", "Tanh"]
    for i in range(n):
        op = ops[i % len(ops)]
        name = "t%d" % i
        if op == "Tanh":
            nodes.append(helper.make_node(op, [prev], [name], name="n%d" % i))
        else:
            c = "c%d" % i
            inits.append(numpy_helper.from_array(
                rng.uniform(0.5, 1.5, size=[1]).astype(np.float32), c))
            nodes.append(helper.make_node(op, [prev, c], [name],
                                          name="n%d" % i))
        prev = name
    nodes.append(helper.make_node("Identity", [prev], ["y"], name="out"))
    write(os.path.join(out, "chain_%d.onnx" % n), nodes,
          [helper.make_tensor_value_info("x", F32, shape)],
          [helper.make_tensor_value_info("y", F32, shape)], inits)


def transformer(out, layers):
    rng = np.random.RandomState(layers)
    d, heads, seq, hidden = 128, 4, 64, 512
    dh = d // heads
    inits, nodes = [], []

    def weight(name, shape, scale=0.05):
        inits.append(numpy_helper.from_array(
            (rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def const(name, values, dtype=np.int64):
        inits.append(numpy_helper.from_array(np.asarray(values, dtype=dtype),
                                             name))
        return name

    def op(kind, ins, name, **attrs):
        nodes.append(helper.make_node(kind, ins, [name], name=name, **attrs))
        return name

    split = const("split_shape", [seq, heads, dh])
    merge = const("merge_shape", [seq, d])
    scale = const("scale", [1.0 / np.sqrt(dh)], np.float32)
    half = const("half", [0.5], np.float32)
    one = const("one", [1.0], np.float32)
    rsqrt2 = const("rsqrt2", [1.0 / np.sqrt(2.0)], np.float32)
    h = "x"
    for l in range(layers):
        p = "l%d_" % l
        ln1 = op("LayerNormalization",
                 [h, weight(p + "ln1_g", [d], 1.0), weight(p + "ln1_b", [d])],
                 p + "ln1", axis=-1, epsilon=1e-5)
        heads_of = {}
        for part in ("q", "k", "v"):
            mm = op("MatMul", [ln1, weight(p + part + "_w", [d, d])],
                    p + part + "_mm")
            biased = op("Add", [mm, weight(p + part + "_b", [d])],
                        p + part + "_add")
            shaped = op("Reshape", [biased, split], p + part + "_split")
            heads_of[part] = op("Transpose", [shaped], p + part + "_heads",
                                perm=[1, 0, 2] if part != "k" else [1, 2, 0])
        scores = op("MatMul", [heads_of["q"], heads_of["k"]], p + "scores")
        scaled = op("Mul", [scores, scale], p + "scaled")
        probs = op("Softmax", [scaled], p + "probs", axis=-1)
        ctx = op("MatMul", [probs, heads_of["v"]], p + "ctx")
        merged = op("Transpose", [ctx], p + "ctx_t", perm=[1, 0, 2])
        flat = op("Reshape", [merged, merge], p + "ctx_flat")
        proj = op("MatMul", [flat, weight(p + "o_w", [d, d])], p + "o_mm")
        proj = op("Add", [proj, weight(p + "o_b", [d])], p + "o_add")
        h = op("Add", [h, proj], p + "res1")
        ln2 = op("LayerNormalization",
                 [h, weight(p + "ln2_g", [d], 1.0), weight(p + "ln2_b", [d])],
                 p + "ln2", axis=-1, epsilon=1e-5)
        up = op("MatMul", [ln2, weight(p + "up_w", [d, hidden])], p + "up_mm")
        up = op("Add", [up, weight(p + "up_b", [hidden])], p + "up_add")
        # erf GELU as exported: 0.5 * x * (1 + erf(x / sqrt(2))).
        e = op("Erf", [op("Mul", [up, rsqrt2], p + "g_div")], p + "g_erf")
        g = op("Mul", [op("Mul", [up, half], p + "g_half"),
                       op("Add", [e, one], p + "g_one")], p + "gelu")
        down = op("MatMul", [g, weight(p + "down_w", [hidden, d])],
                  p + "down_mm")
        down = op("Add", [down, weight(p + "down_b", [d])], p + "down_add")
        h = op("Add", [h, down], p + "res2")
    nodes.append(helper.make_node("Identity", [h], ["y"], name="out"))
    write(os.path.join(out, "transformer_%d.onnx" % layers), nodes,
          [helper.make_tensor_value_info("x", F32, [seq, d])],
          [helper.make_tensor_value_info("y", F32, [seq, d])], inits)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", help="output folder")
    parser.add_argument("family", choices=["chain", "transformer"])
    parser.add_argument("sizes", type=int, nargs="+",
                        help="nodes of a chain, or layers of a transformer")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for size in args.sizes:
        (chain if args.family == "chain" else transformer)(args.out, size)


if __name__ == "__main__":
    main()
