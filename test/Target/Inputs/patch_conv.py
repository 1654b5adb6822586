"""Writes an ONNX model with one patchify convolution (16x16 kernel, stride
16, no padding: a ViT's patch embedding) of a batch of RGB images, with a
bias. ridge-assign-channels-last makes it a GEMM over the patches whose
weight is permuted at compile time to [c, kh, kw, n]. Beside it,
test_data_set_0 with a float64 NumPy reference.

usage: patch_conv.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

N, C, H, M, P = 2, 3, 128, 128, 16


def main(out):
    rng = np.random.default_rng(5)
    w = (rng.standard_normal([M, C, P, P]) / np.sqrt(C * P * P)).astype(np.float32)
    bias = rng.standard_normal([M]).astype(np.float32)
    x = rng.standard_normal([N, C, H, H]).astype(np.float32)
    oh = H // P
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["y"], name="patch_embed",
                          kernel_shape=[P, P], strides=[P, P])],
        "patch_conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N, C, H, H])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [N, M, oh, oh])],
        initializer=[numpy_helper.from_array(w, name="w"),
                     numpy_helper.from_array(bias, name="b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    # Each patch [c, i, j] times the weights, plus the bias.
    patches = x.astype(np.float64).reshape(N, C, oh, P, oh, P)
    y = np.einsum("ncpiqj,mcij->nmpq", patches, w.astype(np.float64))
    y += bias.astype(np.float64)[None, :, None, None]
    for name, array, tensor in (("input_0", x, "x"),
                                ("output_0", y.astype(np.float32), "y")):
        with open(os.path.join(out, "test_data_set_0", name + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(array, tensor).SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1])
