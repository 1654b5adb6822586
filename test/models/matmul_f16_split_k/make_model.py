#!/usr/bin/env python3
"""Writes matmul_f16_split_k: a batched f16 MatMul whose output tiles alone
leave most SMs idle, so that the GPU builds split its k loop (split-K) on
the cp.async path (operands stored in the multiply type, 4 stages).

  a [2, 64, 1024] f16, b [2, 1024, 64] f16 -> y [2, 64, 64] f16

32 k tiles: 16 splits of 2 (below the 4-tile minimum), so sm_90a takes 8
splits of 4 and sm_80 (32x32 tiles, 8 of them) 8 as well; both batch
indices and splits share the grid's z axis.

Run with onnx and onnxruntime (pip install onnx onnxruntime numpy):
  python3 make_model.py DIR   # DIR/model.onnx, DIR/test_data_set_0 (ORT)
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def main(out):
    rng = np.random.default_rng(5)
    m, k, n = 64, 1024, 64
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["y"], "matmul")],
        "matmul_f16_split_k",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT16, [2, m, k]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT16, [2, k, n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [2, m, n])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="ridgeline make_model.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))

    a = (rng.standard_normal([2, m, k]) / 8).astype(np.float16)
    b = (rng.standard_normal([2, k, n]) / 8).astype(np.float16)
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {"a": a, "b": b})
    for name, tensor in (("input_0", numpy_helper.from_array(a, "a")),
                         ("input_1", numpy_helper.from_array(b, "b")),
                         ("output_0", numpy_helper.from_array(y, "y"))):
        with open(os.path.join(out, "test_data_set_0", name + ".pb"), "wb") as f:
            f.write(tensor.SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__))
