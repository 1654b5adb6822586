"""Writes hostile ONNX models for test/Import/hostile-input.test into OUT_DIR.

Sizes that wrap around 64 bits or exceed the tensor-size limit, external data
that leaves the model's folder through symbolic links (the links themselves
are made by the test), and a Concat of 10,000 inputs with its test data.

    /usr/bin/python3 hostile_models.py OUT_DIR
"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F32 = TensorProto.FLOAT


def save(out, name, graph, opset=17):
    model = helper.make_model(graph, producer_name="ridgeline-tests",
                              opset_imports=[helper.make_opsetid("", opset)])
    with open(os.path.join(out, name), "wb") as f:
        f.write(model.SerializeToString())


def vi(name, dims, elem=F32):
    return helper.make_tensor_value_info(name, elem, dims)


def external_weight(location):
    w = TensorProto()
    w.name = "w"
    w.data_type = F32
    w.dims.append(4)
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"),
                       ("length", "16")):
        entry = w.external_data.add()
        entry.key = key
        entry.value = value
    return w


def main(out):
    os.makedirs(out, exist_ok=True)
    # A Constant of 2^32 x 2^32 floats and no data: the element count times 4
    # wraps around 64 bits.
    huge = TensorProto()
    huge.name = "huge"
    huge.data_type = F32
    huge.dims.extend([2**32, 2**32])
    save(out, "constant_overflow.onnx", helper.make_graph(
        [helper.make_node("Constant", [], ["c"], name="big/Constant",
                          value=huge),
         helper.make_node("Add", ["x", "c"], ["y"], name="use/Add")],
        "constant_overflow", [vi("x", [1])], [vi("y", [2**32, 2**32])]))
    # The same as an initializer.
    save(out, "initializer_overflow.onnx", helper.make_graph(
        [helper.make_node("Add", ["x", "huge"], ["y"], name="use/Add")],
        "initializer_overflow", [vi("x", [1])], [vi("y", [2**32, 2**32])],
        initializer=[huge]))
    # A graph input of INT64_MAX x 2 elements.
    save(out, "input_overflow.onnx", helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="act/Relu")],
        "input_overflow", [vi("x", [2**63 - 1, 2])],
        [vi("y", [2**63 - 1, 2])]))
    # Expand of one float to 2^40: 4 TiB, over the default limit.
    shape = numpy_helper.from_array(np.array([2**40], dtype=np.int64), "shape")
    save(out, "expand_huge.onnx", helper.make_graph(
        [helper.make_node("Expand", ["x", "shape"], ["y"], name="grow/Expand")],
        "expand_huge", [vi("x", [1])], [vi("y", [2**40])],
        initializer=[shape]))
    # Tile of 4 floats by 2^62: 2^64 elements, which wraps to 0.
    repeats = numpy_helper.from_array(np.array([2**62], dtype=np.int64),
                                      "repeats")
    save(out, "tile_overflow.onnx", helper.make_graph(
        [helper.make_node("Tile", ["x", "repeats"], ["y"], name="grow/Tile")],
        "tile_overflow", [vi("x", [4])], [vi("y", [None])],
        initializer=[repeats]))
    # Resize of 2^30 floats (4 GiB, under the limit) by 2, of 2^40 bytes by 2
    # (nearest), of 4 floats by 1e300, and antialiased downscaling of 2^20
    # floats to 1: taps computed in the kernel whatever the dims, no
    # undefined float conversion, and no 2^21 taps unrolled per element.
    for name, dims, dtype, scale, attrs in (
            ("resize_long.onnx", [2**30], F32, 2.0, {"mode": "linear"}),
            ("resize_huge.onnx", [2**40], TensorProto.UINT8, 2.0,
             {"mode": "nearest"}),
            ("resize_scale.onnx", [4], F32, np.inf, {"mode": "linear"}),
            ("resize_taps.onnx", [2**20], F32, 2.0**-20,
             {"mode": "linear", "antialias": 1})):
        scales = numpy_helper.from_array(np.array([scale], dtype=np.float32),
                                         "scales")
        save(out, name, helper.make_graph(
            [helper.make_node("Resize", ["x", "", "scales"], ["y"],
                              name="up/Resize", **attrs)],
            "resize", [helper.make_tensor_value_info("x", dtype, dims)],
            [helper.make_tensor_value_info("y", dtype, [None])],
            initializer=[scales]), opset=18)
    # External data at weights.bin and at sub/weights.bin; the test makes
    # them links out of the folder, a FIFO, or a plain file.
    for name, location in (("external_file.onnx", "weights.bin"),
                           ("external_folder.onnx", "sub/weights.bin")):
        save(out, name, helper.make_graph(
            [helper.make_node("Add", ["x", "w"], ["y"], name="bias/Add")],
            "external", [vi("x", [4])], [vi("y", [4])],
            initializer=[external_weight(location)]))
    # Slices whose step is the largest int64 or the smallest: one element
    # each, with no overflow in the element count (found by the fuzzer).
    for name, start, end, step in (("slice_step_max.onnx", 0, 4, 2**63 - 1),
                                   ("slice_step_min.onnx", 3, -5, -2**63)):
        consts = [numpy_helper.from_array(np.array([v], dtype=np.int64), n)
                  for v, n in ((start, "starts"), (end, "ends"), (0, "axes"),
                               (step, "steps"))]
        save(out, name, helper.make_graph(
            [helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"],
                              ["y"], name="cut/Slice")],
            "slice_step", [vi("x", [4])], [vi("y", [1])], initializer=consts))
    # Windows whose extent (kernel - 1) * dilation + 1 overflows int64 (found
    # by the fuzzer), explicit and through auto_pad.
    weight = numpy_helper.from_array(np.ones([1, 1, 3], dtype=np.float32), "w")
    save(out, "conv_dilation_overflow.onnx", helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="wide/Conv",
                          dilations=[2**62])],
        "conv_dilation", [vi("x", [1, 1, 8])], [vi("y", [1, 1, 6])],
        initializer=[weight]))
    save(out, "conv_same_overflow.onnx", helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="same/Conv",
                          dilations=[2**62], auto_pad="SAME_UPPER")],
        "conv_same", [vi("x", [1, 1, 8])], [vi("y", [1, 1, 8])],
        initializer=[weight]))
    save(out, "pool_stride_ceil.onnx", helper.make_graph(
        [helper.make_node("MaxPool", ["x"], ["y"], name="far/MaxPool",
                          kernel_shape=[2], strides=[2**63 - 1], ceil_mode=1)],
        "pool_stride", [vi("x", [1, 1, 8])], [vi("y", [1, 1, 1])]))
    # Expand of a constant to INT64_MAX x 3 x 4: the element count wraps
    # around, and constant folding must not try to build it (found by the
    # fuzzer: a SmallVector reserve of -12 elements).
    bias = numpy_helper.from_array(np.ones([3, 4], dtype=np.float32), "bias")
    full = numpy_helper.from_array(np.array([2**63 - 1, 3, 4], dtype=np.int64),
                                   "full")
    save(out, "expand_fold_overflow.onnx", helper.make_graph(
        [helper.make_node("Expand", ["bias", "full"], ["w"], name="wide/Expand"),
         helper.make_node("Add", ["x", "w"], ["y"], name="use/Add")],
        "expand_fold", [vi("x", [4])], [vi("y", [2**63 - 1, 3, 4])],
        initializer=[bias, full]))
    # Concat of 10,000 inputs alternating x (1 element) and z (2 elements),
    # with test data: the output is x, z0, z1, x, z0, z1, ...
    pairs = 5000
    save(out, "concat_10k.onnx", helper.make_graph(
        [helper.make_node("Concat", ["x", "z"] * pairs, ["y"],
                          name="join/Concat", axis=0)],
        "concat_10k", [vi("x", [1]), vi("z", [2])], [vi("y", [3 * pairs])]))
    data = os.path.join(out, "concat_10k_data")
    os.makedirs(data, exist_ok=True)
    x = np.array([1.5], dtype=np.float32)
    z = np.array([-2.0, 4.25], dtype=np.float32)
    for k, (array, name) in enumerate(((x, "x"), (z, "z"))):
        with open(os.path.join(data, "input_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(array, name).SerializeToString())
    y = np.tile(np.concatenate([x, z]), pairs)
    with open(os.path.join(data, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y, "y").SerializeToString())


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit("usage: hostile_models.py OUT_DIR")
    main(sys.argv[1])
