#!/usr/bin/env python3
"""Writes attention_causal: causal self-attention as GPT-2 exports it, with
Q, K and V as graph inputs, so that the attention kernel's arguments are
exactly Q, K, V and the result (bench/triton_attention_side_by_side.py runs
it beside Triton's fused-attention kernel on the emulator).

  q, k, v [1, 2, 128, 64]
  s = MatMul(q, Transpose(k, [0, 1, 3, 2])) / 8
  y = MatMul(Softmax(Where(tril, s, finfo(f32).min)), v)     [1, 2, 128, 64]

ridge-match-attention turns the chain into one ridge.attention with
is_causal (the constant lower triangle).

Run with onnx and onnxruntime (pip install onnx onnxruntime numpy):
  python3 make_model.py DIR   # DIR/model.onnx, DIR/test_data_set_0 (ORT fp32)
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

B, H, L, D = 1, 2, 128, 64


def main(out):
    rng = np.random.default_rng(11)
    shape = [B, H, L, D]
    tril = np.tril(np.ones((L, L), dtype=bool)).reshape(1, 1, L, L)
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], name="attn/k_t",
                         perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["s"], name="attn/scores"),
        helper.make_node("Div", ["s", "scale"], ["ss"], name="attn/scale"),
        helper.make_node("Where", ["tril", "ss", "min"], ["masked"],
                         name="attn/causal"),
        helper.make_node("Softmax", ["masked"], ["p"], name="attn/softmax",
                         axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["y"], name="attn/context"),
    ]
    inits = [
        numpy_helper.from_array(np.array(8.0, dtype=np.float32), "scale"),
        numpy_helper.from_array(tril, "tril"),
        numpy_helper.from_array(
            np.array(np.finfo(np.float32).min, dtype=np.float32), "min"),
    ]
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape)
              for n in ("q", "k", "v")]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)]
    graph = helper.make_graph(nodes, "attention_causal", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="ridgeline-tests")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    feeds = {n: rng.standard_normal(shape).astype(np.float32)
             for n in ("q", "k", "v")}
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    (y,) = session.run(None, feeds)
    data = os.path.join(out, "test_data_set_0")
    for i, n in enumerate(("q", "k", "v")):
        with open(os.path.join(data, "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(feeds[n], n).SerializeToString())
    with open(os.path.join(data, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y, "y").SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__))
