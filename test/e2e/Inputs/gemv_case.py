"""Writes a skinny contraction test case in the ONNX backend-test layout: x
[M, K] (an input) times a constant weight plus a bias, and the float64
NumPy reference of the stored (rounded) values, the product and the sum
each rounded to the model's type.

  gemv_case.py OUT_DIR M K N [float|float16|bfloat16] [matmul|gemm_transb]

matmul: MatMul by W [K, N] (n-contiguous, as exporters store a Linear
layer's weight for MatMul), then Add; gemm_transb: Gemm by W [N, K] with
transB = 1 (k-contiguous, torch.nn.Linear's own layout) and the bias as C.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TYPES = {"float": TensorProto.FLOAT, "float16": TensorProto.FLOAT16,
         "bfloat16": TensorProto.BFLOAT16}


def round_to(values, dtype):
    """`values` (float64) as stored in `dtype`, back in float64."""
    if dtype == "float":
        return values.astype(np.float32).astype(np.float64)
    if dtype == "float16":
        return values.astype(np.float16).astype(np.float64)
    # bfloat16: round to nearest even on the float32 bits.
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def to_proto(values, dtype, name):
    """A TensorProto of `values` (already exact in `dtype`)."""
    if dtype == "float":
        return numpy_helper.from_array(values.astype(np.float32), name)
    if dtype == "float16":
        return numpy_helper.from_array(values.astype(np.float16), name)
    bits = values.astype(np.float32).view(np.uint32) >> 16
    tensor = helper.make_tensor(name, TensorProto.BFLOAT16, values.shape,
                                bits.astype(np.uint16).tobytes(), raw=True)
    return tensor


def main(out, m, k, n, dtype="float", layout="matmul"):
    m, k, n = int(m), int(k), int(n)
    rng = np.random.default_rng(11)
    w = round_to(rng.standard_normal((k, n)) / np.sqrt(k), dtype)
    bias = round_to(rng.standard_normal(n), dtype)
    x = round_to(rng.standard_normal((m, k)), dtype)
    elem = TYPES[dtype]
    if layout == "matmul":
        nodes = [helper.make_node("MatMul", ["x", "w"], ["y"]),
                 helper.make_node("Add", ["y", "bias"], ["out"])]
        weight = to_proto(w, dtype, "w")
    else:
        nodes = [helper.make_node("Gemm", ["x", "w", "bias"], ["out"],
                                  transB=1)]
        weight = to_proto(np.ascontiguousarray(w.T), dtype, "w")
    graph = helper.make_graph(
        nodes, "gemv",
        [helper.make_tensor_value_info("x", elem, [m, k])],
        [helper.make_tensor_value_info("out", elem, [m, n])],
        [weight, to_proto(bias, dtype, "bias")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    data = os.path.join(out, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    # The product is stored in the model's type before the bias is added
    # (MatMul's result; Gemm's A * B, as ONNX's reference computes it).
    ref = round_to(round_to(x @ w, dtype) + bias, dtype)
    with open(os.path.join(data, "input_0.pb"), "wb") as f:
        f.write(to_proto(x, dtype, "x").SerializeToString())
    with open(os.path.join(data, "output_0.pb"), "wb") as f:
        f.write(to_proto(ref, dtype, "out").SerializeToString())


if __name__ == "__main__":
    main(*sys.argv[1:])
