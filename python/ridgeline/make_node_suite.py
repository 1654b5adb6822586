#!/usr/bin/env python3
"""Writes the ONNX backend node-test suite of the installed `onnx` package.

Newer `onnx` wheels (1.15+) ship the node tests as Python generators
(onnx/backend/test/case/node) instead of data; this script renders them in the
usual layout, <out>/<test>/model.onnx + test_data_set_N/{input,output}_K.pb,
so that conformance.py --suite <out> can run them. Tests with sequence, map or
optional graph I/O get only their model (they are outside Ridgeline's scope).

    python3 -m venv /tmp/onnx-venv
    /tmp/onnx-venv/bin/pip install onnx==1.23.0 numpy==2.1.3
    /tmp/onnx-venv/bin/python python/ridgeline/make_node_suite.py /tmp/node-1.23
"""

import argparse
import os
import shutil
import sys
import warnings


def write_tensor(path, value, name):
    from onnx import TensorProto, numpy_helper

    proto = value if isinstance(value, TensorProto) else numpy_helper.from_array(value, name)
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())


def main(argv):
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", metavar="OUT_DIR",
                        help="folder to write the suite into")
    out = parser.parse_args(argv).out
    # Imported after parsing, so that --help works without onnx.
    import onnx
    from onnx.backend.test.case import node as node_cases

    warnings.simplefilter("ignore")
    cases = node_cases.collect_testcases(None)
    written = 0
    for case in cases:
        test_dir = os.path.join(out, case.name)
        if os.path.exists(test_dir):
            shutil.rmtree(test_dir)
        os.makedirs(test_dir)
        with open(os.path.join(test_dir, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        graph = case.model.graph
        tensors_only = all(v.type.HasField("tensor_type")
                           for v in list(graph.input) + list(graph.output))
        if not tensors_only:
            continue
        for i, (inputs, outputs) in enumerate(case.data_sets or []):
            data_dir = os.path.join(test_dir, "test_data_set_%d" % i)
            os.makedirs(data_dir)
            for j, value in enumerate(inputs):
                write_tensor(os.path.join(data_dir, "input_%d.pb" % j), value,
                             graph.input[j].name)
            for j, value in enumerate(outputs):
                write_tensor(os.path.join(data_dir, "output_%d.pb" % j), value,
                             graph.output[j].name)
        written += 1
    print("onnx %s: %d node tests written to %s" % (onnx.__version__, len(cases), out))


if __name__ == "__main__":
    main(sys.argv[1:])
