"""Compiles a chain of elementwise nodes with ridgec for a GPU target, runs
its kernel's PTX on the emulator and compares with NumPy.

    run_ridgec_chain.py RIDGEC RIDGE_EMU GEN_SCALING_MODELS TARGET WORK_DIR

The chain (gen_scaling_models.py chain 40) is one pointwise kernel over a
[64, 256] f32 tensor; it takes its two buffers as bare pointers and runs
one thread per 4 elements (16-byte accesses, ridge-vectorize-pointwise-loops)
or per element, blocks of its .maxntid. Prints "TARGET: PASS (N elements a
thread)" or the worst element.
"""

import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def reference(model_path, x):
    graph = onnx.load(model_path).graph
    consts = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    values = {"x": x}
    for node in graph.node:
        a = values[node.input[0]]
        if node.op_type == "Tanh":
            r = np.tanh(a)
        elif node.op_type == "Identity":
            r = a
        else:
            b = consts[node.input[1]]
            r = {"Add": a + b, "Mul": a * b, "Sub": a - b}[node.op_type]
        values[node.output[0]] = r.astype(np.float32)
    return values["y"]


def main(ridgec, emu, generator, target, work):
    subprocess.run([sys.executable, generator, work, "chain", "40"], check=True)
    model = os.path.join(work, "chain_40.onnx")
    ptx = os.path.join(work, "chain.ptx")
    subprocess.run([ridgec, model, "--target=" + target, "--emit=ptx", "-o",
                    ptx], check=True)
    text = open(ptx).read()
    kernels = re.findall(r"\.entry (\w+)\(", text)
    block = int(re.search(r"\.maxntid (\d+)", text).group(1))
    # 16-byte loads: each thread owns 4 consecutive elements.
    per_thread = 4 if "ld.global.v4" in text else 1
    if len(kernels) != 1:
        print("%s: FAIL: expected one kernel, found %s" % (target, kernels))
        return 1
    x = np.random.RandomState(1).uniform(-2, 2, size=(64, 256)).astype(
        np.float32)
    x_path, y_path = os.path.join(work, "x.bin"), os.path.join(work, "y.bin")
    x.tofile(x_path)
    subprocess.run([emu, ptx, "--kernel", kernels[0],
                    "--grid", str(x.size // (block * per_thread)),
                    "--block", str(block),
                    "--buffer", "x:f32:%d:file=%s" % (x.size, x_path),
                    "--buffer", "y:f32:%d" % x.size,
                    "--arg", "buf:x", "--arg", "buf:y",
                    "--write", "y=" + y_path], check=True)
    got = np.fromfile(y_path, dtype=np.float32).reshape(64, 256)
    want = reference(model, x)
    # The kernel's tanh is MLIR's polynomial approximation, not libm's.
    error = np.abs(got - want) - 1e-5 * np.abs(want) - 1e-6
    worst = np.unravel_index(np.argmax(error), error.shape)
    if error[worst] > 0:
        print("%s: FAIL at %s: %r, expected %r" % (target, worst, got[worst],
                                                  want[worst]))
        return 1
    print("%s: PASS (%d elements a thread)" % (target, per_thread))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
