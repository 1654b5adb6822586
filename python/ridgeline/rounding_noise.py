#!/usr/bin/env python3
"""Measures how far a rounded build's outputs move under f32 noise.

A tensor-core build and the CPU build of the same `--precision` round the
same operands, but they add each contraction's f32 products in another
order. Their f32 results differ by a few units in the last place, and where
such a result is the operand of the next contraction, rounding it to bf16
(2^-8) can land on the other neighbour. Later layers carry that flip on:
through a causal attention it reaches every later row. How far the outputs
move is a property of the model and the format, not of the code generator,
so this tool measures it on the CPU build alone:

  - the reference: `ridge-run --target=cpu --precision=P` on the model;
  - the noise floor: the same build of copies of the model in which every
    f32 initializer element is moved by one unit in the last place, up or
    down at random (`--seeds` copies), a perturbation of the size of a
    summation-order difference;
  - each `--target` (run by the PTX emulator unless `--device` says
    otherwise), compared with the reference like the perturbed copies.

For each run it prints the largest difference over the reference output's
RMS and how many elements lie outside rtol 1e-3 + atol 1e-3 * RMS (issue 14
check 6(c)'s bound); a target passes when its largest difference is at most
`--floor-factor` (2) times the largest of the perturbed copies': its
distance from the CPU build is summation order, nothing more. Exit status 1
when a target does not. docs/precision.md, "Tolerances", gives the figures
of the shared models.

Needs `onnx` and `numpy` (the perturbation edits the model's initializers).
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np


def run_model(args, model, out_dir, target, device=None):
    cmd = [args.ridge_run, model, "--target=" + target,
           "--precision=" + args.precision, "--test-data", args.test_data,
           "--save-outputs", out_dir]
    if device:
        cmd.append("--device=" + device)
    if args.gpu:
        cmd.append("--gpu=" + args.gpu)
    result = subprocess.run(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        sys.exit("%s failed (%d):\n%s" % (" ".join(cmd), result.returncode,
                                          result.stdout))
    files = sorted(glob.glob(os.path.join(out_dir, "output_*.npy")),
                   key=lambda f: int(f.rsplit("_", 1)[1].split(".")[0]))
    return [np.load(f) for f in files]


def output_kinds(model_path):
    """For each graph output: "bf16" (ridge-run saves its uint16 bits),
    "float", or None for a type not compared (integers, booleans)."""
    import onnx

    kinds = []
    for output in onnx.load(model_path, load_external_data=False).graph.output:
        elem = output.type.tensor_type.elem_type
        if elem == onnx.TensorProto.BFLOAT16:
            kinds.append("bf16")
        elif elem in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16,
                      onnx.TensorProto.DOUBLE):
            kinds.append("float")
        else:
            kinds.append(None)
    return kinds


def widen(array, kind):
    if kind == "bf16":
        return (array.astype(np.uint32) << 16).view(np.float32).astype(
            np.float64)
    return array.astype(np.float64)


def distance(outputs, reference, kinds):
    """The largest |difference| / RMS(reference) over the floating-point
    outputs, and the number of elements outside rtol 1e-3 + atol 1e-3 * RMS."""
    worst, outside, total = 0.0, 0, 0
    for got, want, kind in zip(outputs, reference, kinds):
        if kind is None or want.size == 0:
            continue
        got, want = widen(got, kind), widen(want, kind)
        rms = float(np.sqrt(np.mean(want ** 2))) or 1.0
        diff = np.abs(got - want)
        worst = max(worst, float(diff.max()) / rms)
        outside += int((diff > 1e-3 * np.abs(want) + 1e-3 * rms).sum())
        total += want.size
    return worst, outside, total


def perturbed_copy(model_path, seed, path):
    import onnx
    from onnx import numpy_helper

    model = onnx.load(model_path)
    rng = np.random.default_rng(seed)
    for init in model.graph.initializer:
        if init.data_type != onnx.TensorProto.FLOAT:
            continue
        values = numpy_helper.to_array(init)
        if values.size == 0:
            continue
        up = rng.random(values.shape) < 0.5
        nudged = np.where(up, np.nextafter(values, np.float32(np.inf)),
                          np.nextafter(values, np.float32(-np.inf)))
        init.CopyFrom(numpy_helper.from_array(nudged.astype(np.float32),
                                              init.name))
    onnx.save(model, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("--test-data", required=True,
                        help="folder with input_K.pb")
    parser.add_argument("--precision", default="bf16")
    parser.add_argument("--target", action="append", default=[],
                        help="a GPU target to compare (repeatable)")
    parser.add_argument("--device", default="emulator")
    parser.add_argument("--gpu", help="--gpu for every build")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--floor-factor", type=float, default=2.0)
    parser.add_argument("--ridge-run", default="ridge-run")
    args = parser.parse_args()

    name = os.path.basename(os.path.dirname(os.path.abspath(args.model)))
    with tempfile.TemporaryDirectory() as work:
        def fresh(tag):
            path = os.path.join(work, tag)
            os.mkdir(path)
            return path

        kinds = output_kinds(args.model)
        reference = run_model(args, args.model, fresh("cpu"), "cpu")
        floor = 0.0
        for seed in range(args.seeds):
            copy = os.path.join(work, "perturbed_%d.onnx" % seed)
            perturbed_copy(args.model, seed, copy)
            worst, outside, total = distance(
                run_model(args, copy, fresh("seed%d" % seed), "cpu"),
                reference, kinds)
            floor = max(floor, worst)
            print("%s %s cpu, f32 initializers +-1 ulp (seed %d): max "
                  "%.2e RMS, %d/%d outside 1e-3" %
                  (name, args.precision, seed, worst, outside, total))
        print("%s %s noise floor: %.2e RMS" % (name, args.precision, floor))
        failed = False
        for target in args.target:
            worst, outside, total = distance(
                run_model(args, args.model, fresh(target), target,
                          args.device), reference, kinds)
            ok = worst <= args.floor_factor * floor
            failed |= not ok
            print("%s %s %s (%s): max %.2e RMS, %d/%d outside 1e-3, "
                  "%.2g x floor: %s" %
                  (name, args.precision, target, args.device, worst, outside,
                   total, worst / floor if floor else float("inf"),
                   "within noise" if ok else "ABOVE NOISE"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
