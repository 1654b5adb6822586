#!/usr/bin/env python3
"""Writes conv_bf16: three convolutions the precision policy rounds to bf16,
so that the GPU builds run them as implicit GEMMs on tensor cores.

  x [2, 3, 32, 32]
  c1 = relu(conv7x7/2 pad 3 (x) + b1)        [2, 32, 16, 16]  k = 3*7*7 = 147
  c2 = relu(conv3x3 pad 1 (c1) + b2 + c1)     [2, 32, 16, 16]  residual add
  y  = relu(conv3x3 (c2) + b3)                [2, 64, 14, 14]  rows of 14

Between them: a reduction dimension that is no multiple of 8 (the weight
read element by element), padded and strided windows (the fused Pad), a
batch of 2 (the weights shared by both images), a residual epilogue, and an
output row (14) that is no multiple of 4. Each is compute-bound on the fp32
roofline of A100 and H100 (arithmetic intensity 25-50 FLOP/byte).

Run with onnx and onnxruntime (pip install onnx onnxruntime numpy):
  python3 make_model.py DIR   # DIR/model.onnx, DIR/test_data_set_0 (ORT fp32)
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def main(out):
    rng = np.random.default_rng(7)

    def weight(name, shape):
        fan_in = int(np.prod(shape[1:]))
        data = (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)
        return numpy_helper.from_array(data, name)

    inits = [
        weight("w1", [32, 3, 7, 7]), weight("b1", [32, 1]),
        weight("w2", [32, 32, 3, 3]), weight("b2", [32, 1]),
        weight("w3", [64, 32, 3, 3]), weight("b3", [64, 1]),
    ]
    for i in (1, 3, 5):  # biases are 1-D
        inits[i] = numpy_helper.from_array(
            numpy_helper.to_array(inits[i]).reshape(-1), inits[i].name)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1p"], "conv1",
                         kernel_shape=[7, 7], strides=[2, 2],
                         pads=[3, 3, 3, 3]),
        helper.make_node("Relu", ["c1p"], ["c1"], "relu1"),
        helper.make_node("Conv", ["c1", "w2", "b2"], ["c2p"], "conv2",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2p", "c1"], ["c2s"], "residual"),
        helper.make_node("Relu", ["c2s"], ["c2"], "relu2"),
        helper.make_node("Conv", ["c2", "w3", "b3"], ["c3p"], "conv3",
                         kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c3p"], ["y"], "relu3"),
    ]
    graph = helper.make_graph(
        nodes, "conv_bf16",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 64, 14, 14])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="ridgeline make_model.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))

    x = rng.standard_normal([2, 3, 32, 32]).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {"x": x})
    for name, array in (("input_0", x), ("output_0", y)):
        tensor = numpy_helper.from_array(array, "x" if name == "input_0" else "y")
        with open(os.path.join(out, "test_data_set_0", name + ".pb"), "wb") as f:
            f.write(tensor.SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__))
