"""Writes a two-layer MLP test case in the ONNX backend-test layout: x
[1, M, D] (an input) -> MatMul by W1 [D, H] -> Relu -> MatMul by W2 [H, D],
both weights constants, and the float64 NumPy reference.

  mlp_case.py OUT_DIR M D H

At a GPU target's default bf16 both products are rounded, so the Relu
output crosses its kernel boundary in bf16 (ridge-narrow-kernel-boundaries)
and, on sm_90a, the second GEMM reads it with TMA.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(out, m, d, h):
    m, d, h = int(m), int(d), int(h)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, m, d)).astype(np.float32)
    w1 = (rng.standard_normal((d, h)) / np.sqrt(d)).astype(np.float32)
    w2 = (rng.standard_normal((h, d)) / np.sqrt(h)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("MatMul", ["r", "w2"], ["y"])]
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, m, d])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, m, d])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    y = np.maximum(x.astype(np.float64) @ w1, 0) @ w2
    for name, value in (("input_0", x), ("output_0", y.astype(np.float32))):
        with open(os.path.join(out, "test_data_set_0", name + ".pb"),
                  "wb") as f:
            f.write(numpy_helper.from_array(
                value, "x" if name == "input_0" else "y").SerializeToString())


if __name__ == "__main__":
    main(*sys.argv[1:])
