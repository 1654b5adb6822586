#!/usr/bin/env python3
"""Bandwidth of Ridgeline's fused memory-bound kernels (a benchmark, not a test).

    bench/fusion_bandwidth.py [--size 8192] [--target sm_90a] [--repeat 20]

Builds one-kernel ONNX models of LayerNorm, RMSNorm (as LLaMA exports it),
softmax and bias + tanh-GELU (as GPT-2 exports it) on a SIZE x SIZE float32
tensor, plus a copy-like kernel (Neg: one read and one write per element) as
the reference for what the memory system delivers. Each model is compiled with
ridgec's fusion plan and timed with `ridge-run --random-inputs --repeat`. The
bytes each kernel must move come from `ridgec --report=json` (the plan's
kernel bytes). For each op the table prints the median time, the achieved
bandwidth and that bandwidth as a fraction of the copy's. When PyTorch with
CUDA is importable, the same ops run eagerly and under torch.compile, timed
with CUDA events, for comparison.

bf16 storage is not measured: Ridgeline's importer does not take bf16 model
inputs yet. Needs /usr/bin/python3 with onnx (Debian's python3-onnx).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")


def make_model(name, nodes, inputs, initializers, size):
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(i, TensorProto.FLOAT, [size, size])
         for i in inputs],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [size, size])],
        initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def build_models(size):
    rng = np.random.default_rng(0)
    vec = lambda name: numpy_helper.from_array(
        rng.standard_normal(size).astype(np.float32), name)
    scalar = lambda name, v: numpy_helper.from_array(
        np.array(v, dtype=np.float32), name)
    models = {}
    models["copy (neg)"] = make_model(
        "copy", [helper.make_node("Neg", ["x"], ["y"])], ["x"], [], size)
    models["layernorm"] = make_model(
        "layernorm",
        [helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"],
                          axis=-1, epsilon=1e-5)],
        ["x"], [vec("g"), vec("b")], size)
    models["rmsnorm"] = make_model(
        "rmsnorm",
        [helper.make_node("Pow", ["x", "two"], ["sq"]),
         helper.make_node("ReduceMean", ["sq"], ["ms"], axes=[-1], keepdims=1),
         helper.make_node("Add", ["ms", "eps"], ["mse"]),
         helper.make_node("Sqrt", ["mse"], ["rms"]),
         helper.make_node("Div", ["x", "rms"], ["n"]),
         helper.make_node("Mul", ["n", "w"], ["y"])],
        ["x"], [scalar("two", 2.0), scalar("eps", 1e-6), vec("w")], size)
    models["softmax"] = make_model(
        "softmax", [helper.make_node("Softmax", ["x"], ["y"], axis=-1)],
        ["x"], [], size)
    # GPT-2's tanh GELU as torch.onnx.export writes it.
    models["bias+gelu"] = make_model(
        "bias_gelu",
        [helper.make_node("Add", ["x", "b"], ["h"]),
         helper.make_node("Mul", ["h", "h"], ["h2"]),
         helper.make_node("Mul", ["h2", "h"], ["h3"]),
         helper.make_node("Mul", ["h3", "c"], ["h3c"]),
         helper.make_node("Add", ["h", "h3c"], ["inner"]),
         helper.make_node("Mul", ["inner", "k"], ["inner2"]),
         helper.make_node("Tanh", ["inner2"], ["t"]),
         helper.make_node("Add", ["t", "one"], ["t1"]),
         helper.make_node("Mul", ["h", "t1"], ["ht"]),
         helper.make_node("Mul", ["ht", "half"], ["y"])],
        ["x"], [vec("b"), scalar("c", 0.044715),
                scalar("k", 0.7978845608), scalar("one", 1.0),
                scalar("half", 0.5)], size)
    return models


def ridgeline_time(path, target, repeat):
    report = subprocess.run(
        [os.path.join(BIN, "ridgec"), path, "--report=json"],
        check=True, capture_output=True, text=True).stdout
    plan = json.loads(report)
    kernels = len(plan["kernels"])
    fused_bytes = plan["traffic"]["fused_bytes"]
    run = subprocess.run(
        [os.path.join(BIN, "ridge-run"), path, "--target=" + target,
         "--random-inputs", "--repeat", str(repeat)],
        capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(run.stdout + run.stderr)
    median = float(re.search(r"median ([0-9.]+) ms", run.stdout).group(1))
    return median * 1e-3, fused_bytes, kernels


def torch_times(size, repeat):
    """(eager, compiled) seconds per op, or None without CUDA PyTorch."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    x = torch.randn(size, size, device="cuda")
    v = torch.randn(size, device="cuda")
    ops = {
        "copy (neg)": lambda: torch.neg(x),
        "layernorm": lambda: F.layer_norm(x, (size,), v, v, 1e-5),
        "rmsnorm": lambda: x / torch.sqrt(x.pow(2).mean(-1, keepdim=True)
                                          + 1e-6) * v,
        "softmax": lambda: torch.softmax(x, -1),
        "bias+gelu": lambda: F.gelu(x + v, approximate="tanh"),
    }

    def timed(fn):
        for _ in range(3):
            fn()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        times = []
        for _ in range(repeat):
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) * 1e-3)
        return sorted(times)[len(times) // 2]

    result = {}
    for name, fn in ops.items():
        try:
            compiled = torch.compile(fn)
            result[name] = (timed(fn), timed(compiled))
        except Exception as error:  # torch.compile may lack a toolchain
            result[name] = (timed(fn), None)
            print("torch.compile failed for %s: %s" % (name, error),
                  file=sys.stderr)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--target", default="sm_90a")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()

    models = build_models(args.size)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, model in models.items():
            path = os.path.join(tmp, name.split()[0].replace("+", "_") + ".onnx")
            onnx.save(model, path)
            seconds, nbytes, kernels = ridgeline_time(path, args.target,
                                                      args.repeat)
            rows.append((name, kernels, nbytes, seconds))
    copy_bw = rows[0][2] / rows[0][3]
    torch_result = torch_times(args.size, args.repeat)

    print("fused kernels on %s, %dx%d float32, median of %d runs"
          % (args.target, args.size, args.size, args.repeat))
    header = "%-12s %7s %9s %10s %9s %8s" % (
        "op", "kernels", "MB moved", "time ms", "GB/s", "vs copy")
    if torch_result:
        header += " %11s %13s" % ("torch ms", "compiled ms")
    print(header)
    for name, kernels, nbytes, seconds in rows:
        bw = nbytes / seconds
        line = "%-12s %7d %9.1f %10.3f %9.1f %7.1f%%" % (
            name, kernels, nbytes / 1e6, seconds * 1e3, bw / 1e9,
            100 * bw / copy_bw)
        if torch_result:
            eager, compiled = torch_result[name]
            line += " %11.3f %13s" % (
                eager * 1e3, "%.3f" % (compiled * 1e3) if compiled else "-")
        print(line)
    if not torch_result:
        print("(PyTorch with CUDA is not available: no eager/torch.compile "
              "columns)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
