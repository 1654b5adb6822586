"""Writes an Erf test case in the ONNX backend-test layout, or checks a
saved output against erf in double precision.

  erf_case.py OUT_DIR              model.onnx and test_data_set_0: x [1, N]
                                   over [-6, 6], magnitudes down to 1e-30,
                                   and +-0, +-inf, NaN; y = erf(x)
  erf_case.py OUT_DIR --check NPY  the largest error of NPY's finite values
                                   in units in the last place of the f32
                                   reference; fails past 4 ulp or where a
                                   special value differs
"""
import math
import os
import sys

import numpy as np


def inputs():
    dense = np.linspace(-6, 6, 60001)
    tiny = np.logspace(-30, 0, 3001)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 4.0, 3.9]
    x = np.concatenate([dense, tiny, -tiny, special]).astype(np.float32)
    return x.reshape(1, -1)


def reference(x):
    return np.vectorize(math.erf)(x.astype(np.float64))


def write(out):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    x = inputs()
    graph = helper.make_graph(
        [helper.make_node("Erf", ["x"], ["y"])], "erf",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(x.shape))])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "model.onnx"))
    data = os.path.join(out, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    with open(os.path.join(data, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    y = reference(x).astype(np.float32)
    with open(os.path.join(data, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y, "y").SerializeToString())


def check(path):
    x = inputs().ravel()
    y = np.load(path).ravel().astype(np.float64)
    ref = reference(x)
    finite = np.isfinite(x)
    # The specials: NaN stays NaN, +-inf gives +-1, -0 keeps its sign.
    special_ok = (np.isnan(y[np.isnan(x)]).all() and
                  (y[x == np.inf] == 1).all() and
                  (y[x == -np.inf] == -1).all() and
                  (np.signbit(y[(x == 0) & np.signbit(x)])).all())
    ulp = np.spacing(np.abs(ref[finite]).astype(np.float32)).astype(np.float64)
    errors = np.abs(y[finite] - ref[finite]) / ulp
    worst = float(errors.max())
    print("%d values, max error %.2f ulp at x = %.7g, specials %s" %
          (x.size, worst, x[finite][errors.argmax()],
           "ok" if special_ok else "WRONG"))
    return 0 if worst <= 4 and special_ok else 1


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[2] == "--check":
        sys.exit(check(sys.argv[3]))
    write(sys.argv[1])
