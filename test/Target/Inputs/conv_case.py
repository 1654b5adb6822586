"""Writes an ONNX model with one convolution of a batch of RGB images (a
square kernel, one stride and one padding on every side, an optional bias)
and, beside it, test_data_set_0 with a float64 NumPy reference.

conv-tensor-cores.test builds two:
- gathered: 4 images of 66 x 66, 64 output channels, a 4 x 4 kernel of
  stride 4 padded by 2: the window neither overlaps (each pixel read once,
  so padding its 3 channels to 8 would not pay) nor tiles the image (its
  padding makes it no patchify convolution), a tensor-core convolution
  that gathers its window channels-second, element by element;
- patch: 2 images of 128 x 128, 128 output channels, a 16 x 16 kernel of
  stride 16, no padding, a bias: a ViT's patch embedding, which
  ridge-assign-channels-last makes a GEMM over the patches.

usage: conv_case.py OUTDIR N C H M K STRIDE PAD [--bias]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(out, n, c, h, m, k, stride, pad, bias):
    rng = np.random.default_rng(3)
    w = (rng.standard_normal([m, c, k, k]) / np.sqrt(c * k * k)).astype(np.float32)
    x = rng.standard_normal([n, c, h, h]).astype(np.float32)
    b = rng.standard_normal([m]).astype(np.float32)
    oh = (h + 2 * pad - k) // stride + 1
    inputs = ["x", "w"] + (["b"] if bias else [])
    initializers = [numpy_helper.from_array(w, name="w")]
    if bias:
        initializers.append(numpy_helper.from_array(b, name="b"))
    graph = helper.make_graph(
        [helper.make_node("Conv", inputs, ["y"], name="conv",
                          kernel_shape=[k, k], strides=[stride, stride],
                          pads=[pad] * 4)],
        "conv_case",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, c, h, h])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, m, oh, oh])],
        initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    # The windows of the zero-padded image, each multiplied by the weights.
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    windows = np.lib.stride_tricks.sliding_window_view(
        padded, (k, k), axis=(2, 3))[:, :, ::stride, ::stride]
    y = np.einsum("ncpqij,mcij->nmpq", windows, w.astype(np.float64))
    if bias:
        y += b.astype(np.float64)[None, :, None, None]
    for name, array, tensor in (("input_0", x, "x"),
                                ("output_0", y.astype(np.float32), "y")):
        with open(os.path.join(out, "test_data_set_0", name + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(array, tensor).SerializeToString())


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--bias"]
    main(args[0], *(int(a) for a in args[1:8]), bias="--bias" in sys.argv)
