"""Writes a skinny MatMul test case in the ONNX backend-test layout: x [M, K]
(an input) times a constant weight W [K, N] (n-contiguous, as exporters
store a Linear layer's weight for MatMul) plus a bias, and the float64
NumPy reference.

  gemv_case.py OUT_DIR M K N
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(out, m, k, n):
    m, k, n = int(m), int(k), int(n)
    rng = np.random.default_rng(11)
    w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    x = rng.standard_normal((m, k)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"]),
         helper.make_node("Add", ["y", "bias"], ["out"])],
        "gemv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias,
                                                                  "bias")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    data = os.path.join(out, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    ref = x.astype(np.float64) @ w.astype(np.float64) + bias
    with open(os.path.join(data, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    with open(os.path.join(data, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(ref.astype(np.float32), "out")
                .SerializeToString())


if __name__ == "__main__":
    main(*sys.argv[1:])
