"""Writes an f16 ONNX model of a gated MLP's first half, SiLU(x W1) * (x W2),
x [M, K] and the weights [K, N] constants: one kernel of two products of
one input (a gated MLP's gate and up projections).

usage: gated_mlp_case.py OUT.onnx M K N
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(path, m, k, n):
    rng = np.random.default_rng(1)
    w1 = (rng.standard_normal([k, n]) / np.sqrt(k)).astype(np.float16)
    w2 = (rng.standard_normal([k, n]) / np.sqrt(k)).astype(np.float16)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["g"]),
        helper.make_node("MatMul", ["x", "w2"], ["u"]),
        helper.make_node("Sigmoid", ["g"], ["s"]),
        helper.make_node("Mul", ["g", "s"], ["a"]),
        helper.make_node("Mul", ["a", "u"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "gated_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [m, n])],
        initializer=[numpy_helper.from_array(w1, "w1"),
                     numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:5]))
