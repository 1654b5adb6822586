"""Writes OUT/model.onnx and OUT/test_data_set_0 for model-abi-names.test.

The graph's input and output names contain spaces, a tab and punctuation,
which the model ABI must hand back verbatim. Its tensors cover an unsigned
input (u8, a signedness the LLVM lowering erases) and a bool output (i1).

    sum out   = "x in" + "bias term"
    masked, out: = "sum out" * float("mask u8")
    flag\tpositive = "sum out" > 0
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)

X, BIAS, MASK = "x in", "bias term", "mask u8"
SUM, MASKED, FLAG = "sum out", "masked, out:", "flag\tpositive"
graph = helper.make_graph(
    [
        helper.make_node("Add", [X, BIAS], [SUM], name="add"),
        helper.make_node("Cast", [MASK], ["mask f32"], to=TensorProto.FLOAT,
                         name="cast"),
        helper.make_node("Mul", [SUM, "mask f32"], [MASKED], name="mul"),
        helper.make_node("Constant", [], ["zero"], name="zero",
                         value=numpy_helper.from_array(
                             np.array(0, dtype=np.float32))),
        helper.make_node("Greater", [SUM, "zero"], [FLAG], name="greater"),
    ],
    "abi_names",
    [
        helper.make_tensor_value_info(X, TensorProto.FLOAT, [2, 3]),
        helper.make_tensor_value_info(BIAS, TensorProto.FLOAT, [3]),
        helper.make_tensor_value_info(MASK, TensorProto.UINT8, [2, 3]),
    ],
    [
        helper.make_tensor_value_info(SUM, TensorProto.FLOAT, [2, 3]),
        helper.make_tensor_value_info(MASKED, TensorProto.FLOAT, [2, 3]),
        helper.make_tensor_value_info(FLAG, TensorProto.BOOL, [2, 3]),
    ],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(out, "model.onnx"))

x = np.array([[1.0, -2.0, 3.5], [-0.5, 0.25, -4.0]], dtype=np.float32)
bias = np.array([0.5, 1.0, -1.0], dtype=np.float32)
mask = np.array([[1, 0, 2], [3, 1, 0]], dtype=np.uint8)
total = x + bias
tensors = {
    "input": [(X, x), (BIAS, bias), (MASK, mask)],
    "output": [(SUM, total), (MASKED, total * mask.astype(np.float32)),
               (FLAG, total > 0)],
}
for kind, items in tensors.items():
    for k, (name, value) in enumerate(items):
        path = os.path.join(out, "test_data_set_0", "%s_%d.pb" % (kind, k))
        with open(path, "wb") as f:
            f.write(numpy_helper.from_array(value, name).SerializeToString())
