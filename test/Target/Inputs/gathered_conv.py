"""Writes an ONNX model with one convolution of an RGB image whose window
neither overlaps (4x4 stride 4: each pixel read once, so padding its 3
channels to 8 would not pay) nor tiles the image (its padding of 2 makes it
no patchify convolution): a tensor-core convolution that gathers its window
channels-second, element by element. Beside it, test_data_set_0 with a
float64 NumPy reference.

usage: gathered_conv.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

N, C, H, M, K, STRIDE, PAD = 4, 3, 66, 64, 4, 4, 2


def main(out):
    rng = np.random.default_rng(3)
    w = (rng.standard_normal([M, C, K, K]) / np.sqrt(C * K * K)).astype(np.float32)
    x = rng.standard_normal([N, C, H, H]).astype(np.float32)
    oh = (H + 2 * PAD - K) // STRIDE + 1
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv",
                          kernel_shape=[K, K], strides=[STRIDE, STRIDE],
                          pads=[PAD] * 4)],
        "gathered_conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N, C, H, H])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [N, M, oh, oh])],
        initializer=[numpy_helper.from_array(w, name="w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    # The windows of the zero-padded image, each multiplied by the weights.
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (PAD, PAD), (PAD, PAD)))
    windows = np.lib.stride_tricks.sliding_window_view(
        padded, (K, K), axis=(2, 3))[:, :, ::STRIDE, ::STRIDE]
    y = np.einsum("ncpqij,mcij->nmpq", windows, w.astype(np.float64))
    for name, array, tensor in (("input_0", x, "x"),
                                ("output_0", y.astype(np.float32), "y")):
        with open(os.path.join(out, "test_data_set_0", name + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(array, tensor).SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1])
