#!/usr/bin/env python3
"""Writes test/models/float8_cast: bf16 and the ONNX float8 types at the graph
boundary, in initializers (int32_data and raw_data) and through Cast.

Needs onnx >= 1.15 and ml_dtypes (Debian's onnx 1.12 has no float8), e.g.
the venv scripts/node-suite.sh installs:

    build/onnx-1.23.0-venv/bin/python python/ridgeline/gen_float8_model.py

The references come from ml_dtypes, as the ONNX reference implementation's
do: a saturating cast clips to the type's largest finite value, then rounds
to nearest even.
"""

import os
import sys

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def saturate(x, dtype):
    info = ml_dtypes.finfo(dtype)
    return np.clip(x, info.min, info.max).astype(dtype)


def bits_tensor(values, dtype, onnx_type, name, raw):
    """A float8 initializer: `raw` bytes, or int32_data holding each byte."""
    bits = np.asarray(values, dtype=dtype).view(np.uint8)
    tensor = TensorProto(name=name, data_type=onnx_type, dims=list(bits.shape))
    if raw:
        tensor.raw_data = bits.tobytes()
    else:
        tensor.int32_data.extend(int(b) for b in bits)
    return tensor


def write(path, value, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(value, name).SerializeToString())


def main():
    out = os.path.join(REPO, "test", "models", "float8_cast")
    data = os.path.join(out, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    # Ties (0.46875 + half an ulp of e4m3), a subnormal tie, values past the
    # largest finite one and past the rounding boundary, -0, NaN, infinities.
    x = np.array([0.484375, 0.0029296875, -0.0009765625, 464.0, 465.0, 1e6,
                  -0.0, np.nan, np.inf, -np.inf, 57344.0, 61440.0],
                 dtype=np.float32)
    h = np.array([1.0, -2.5, 3.140625, np.inf], dtype=ml_dtypes.bfloat16)
    w = np.array([0.5, -1.5, 57344.0, -0.0], dtype=ml_dtypes.float8_e5m2)
    v = np.array([0.25, 240.0, -0.0078125, 1.0], dtype=ml_dtypes.float8_e4m3fnuz)
    nodes = [
        helper.make_node("Cast", ["x"], ["y_e4m3fn"], name="sat",
                         to=TensorProto.FLOAT8E4M3FN),
        helper.make_node("Cast", ["x"], ["y_e5m2"], name="nosat",
                         to=TensorProto.FLOAT8E5M2, saturate=0),
        helper.make_node("Cast", ["x"], ["y_e4m3fnuz"], name="nosat_fnuz",
                         to=TensorProto.FLOAT8E4M3FNUZ, saturate=0),
        helper.make_node("Cast", ["x"], ["y_bf16"], name="to_bf16",
                         to=TensorProto.BFLOAT16),
        helper.make_node("Cast", ["w"], ["wf"], name="w_f32",
                         to=TensorProto.FLOAT),
        helper.make_node("Cast", ["v"], ["vf"], name="v_f32",
                         to=TensorProto.FLOAT),
        helper.make_node("Mul", ["wf", "vf"], ["wv"], name="mul"),
        helper.make_node("Cast", ["h"], ["hf"], name="h_f32",
                         to=TensorProto.FLOAT),
        helper.make_node("Add", ["wv", "hf"], ["s"], name="add"),
    ]
    graph = helper.make_graph(
        nodes, "float8_cast",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [12]),
         helper.make_tensor_value_info("h", TensorProto.BFLOAT16, [4])],
        [helper.make_tensor_value_info("y_e4m3fn", TensorProto.FLOAT8E4M3FN, [12]),
         helper.make_tensor_value_info("y_e5m2", TensorProto.FLOAT8E5M2, [12]),
         helper.make_tensor_value_info("y_e4m3fnuz", TensorProto.FLOAT8E4M3FNUZ, [12]),
         helper.make_tensor_value_info("y_bf16", TensorProto.BFLOAT16, [12]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, [4])],
        [bits_tensor(w, ml_dtypes.float8_e5m2, TensorProto.FLOAT8E5M2, "w",
                     raw=False),
         bits_tensor(v, ml_dtypes.float8_e4m3fnuz, TensorProto.FLOAT8E4M3FNUZ,
                     "v", raw=True)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)],
                              ir_version=9, producer_name="ridgeline-gen_float8_model")
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "model.onnx"))

    outputs = [
        ("y_e4m3fn", saturate(x, ml_dtypes.float8_e4m3fn)),
        ("y_e5m2", x.astype(ml_dtypes.float8_e5m2)),
        ("y_e4m3fnuz", x.astype(ml_dtypes.float8_e4m3fnuz)),
        ("y_bf16", x.astype(ml_dtypes.bfloat16)),
        ("s", w.astype(np.float32) * v.astype(np.float32) + h.astype(np.float32)),
    ]
    write(os.path.join(data, "input_0.pb"), x, "x")
    write(os.path.join(data, "input_1.pb"), h, "h")
    for k, (name, value) in enumerate(outputs):
        write(os.path.join(data, "output_%d.pb" % k), value, name)
    print("wrote", out)


if __name__ == "__main__":
    sys.exit(main())
