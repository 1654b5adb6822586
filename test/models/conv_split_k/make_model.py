#!/usr/bin/env python3
"""Writes conv_split_k: two convolutions with long reductions on small
images, the shape of resnet18's last layers, whose output tiles alone leave
most SMs idle, so that the GPU builds split their k loops (split-K).

  x [3, 128, 7, 7]
  h = relu(conv3x3 pad 1 (x) + b1 + conv1x1 (x) + b2)   [3, 120, 7, 7]
      two products in one kernel (a residual block's downsampling branch):
      k = 1152 and 128, 36 and 4 k tiles, fewer tiles than splits in the
      second; m = 120, an edge tile
  y = relu(conv3x3 (h) + b3)                            [3, 96, 5, 5]
      k = 1080: 34 k tiles, which the splits do not divide evenly

A batch of 3 puts splits and images on the same grid axis. Both kernels are
compute-bound on the fp32 roofline of A100 and H100 (30-60 FLOP/byte, the
1x1 branch alone 21.8: over the H100's 20, so both products round), so
the precision policy rounds them to bf16 (tensor cores).

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
    rng = np.random.default_rng(11)

    def weight(name, shape):
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        data = (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)
        return numpy_helper.from_array(data, name)

    inits = [
        weight("w1", [120, 128, 3, 3]), weight("b1", [120]),
        weight("w2", [120, 128, 1, 1]), weight("b2", [120]),
        weight("w3", [96, 120, 3, 3]), weight("b3", [96]),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], "conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["x", "w2", "b2"], ["d1"], "downsample",
                         kernel_shape=[1, 1]),
        helper.make_node("Add", ["c1", "d1"], ["s1"], "residual"),
        helper.make_node("Relu", ["s1"], ["h"], "relu1"),
        helper.make_node("Conv", ["h", "w3", "b3"], ["c2"], "conv2",
                         kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c2"], ["y"], "relu2"),
    ]
    graph = helper.make_graph(
        nodes, "conv_split_k",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 128, 7, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 96, 5, 5])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="ridgeline make_model.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))

    x = rng.standard_normal([3, 128, 7, 7]).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {"x": x})
    for name, array in (("input_0", x), ("output_0", y)):
        tensor = numpy_helper.from_array(array, "x" if name == "input_0" else "y")
        with open(os.path.join(out, "test_data_set_0", name + ".pb"), "wb") as f:
            f.write(tensor.SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__))
