"""Writes an ONNX model whose softmax rows are 128 KiB of f32 (32,768
elements): an Add feeding a Softmax over the last axis. A row-reduction kernel
keeps its row in shared memory, so fusing the Add into the softmax fits an
H100 (228 KiB per SM) and not an L4 (100 KiB per SM).

usage: wide_row_softmax.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROWS, COLUMNS = 2, 32768


def main(path):
    bias = numpy_helper.from_array(
        np.linspace(-1, 1, COLUMNS, dtype=np.float32), name="bias")
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "bias"], ["shifted"], name="shift"),
         helper.make_node("Softmax", ["shifted"], ["y"], name="row_softmax",
                          axis=-1)],
        "wide_row_softmax",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [ROWS, COLUMNS])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [ROWS, COLUMNS])],
        initializer=[bias])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


if __name__ == "__main__":
    main(sys.argv[1])
