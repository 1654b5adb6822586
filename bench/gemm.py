#!/usr/bin/env python3
"""GEMM benchmark: Ridgeline's tensor-core kernels against cuBLAS.

For each shape (M, N, K) it writes a one-node ONNX model, C = A x B with A
and B in the 16-bit format (--dtype, bf16 by default), compiles it with
Ridgeline for the target, times it with `ridge-run --repeat` (the median of
the timed runs: one kernel launch and the runtime's launch overhead), and,
when PyTorch with CUDA is importable, times `torch.matmul` (cuBLAS) on the
same shape in the same run with CUDA events. It prints TFLOP/s, the
fraction of cuBLAS and the fraction of the measured peak (the best cuBLAS
figure of the run). fp8 rows compare against `torch._scaled_mm` once
Ridgeline generates fp8 GEMMs (it does not yet: the row says so).

Shapes: 4096, 8192 and 16384 square, and the contractions of the shared
models (gpt2_tiny's 128-token MatMuls). `--device emulator --sizes 256`
runs the script end to end without a GPU (the times are the emulator's and
mean nothing).

Usage: bench/gemm.py [--target sm_90a] [--dtype bf16|f16] [--repeat 20]
                     [--sizes 4096,8192,16384] [--no-models] [--device gpu]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_timing import cuda_time  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RIDGE_RUN = os.path.join(ROOT, "build", "bin", "ridge-run")

# (name, M, N, K): the MatMuls of gpt2_tiny at 128 tokens (c_attn, attn
# c_proj, c_fc, mlp c_proj, lm_head).
MODEL_SHAPES = [
    ("gpt2_tiny c_attn", 128, 768, 256),
    ("gpt2_tiny attn.c_proj", 128, 256, 256),
    ("gpt2_tiny c_fc", 128, 1024, 256),
    ("gpt2_tiny mlp.c_proj", 128, 256, 1024),
]


def make_model(path, m, n, k, dtype):
    import onnx
    from onnx import TensorProto, helper
    elem = {"bf16": TensorProto.BFLOAT16, "f16": TensorProto.FLOAT16}[dtype]
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["c"])], "gemm",
        [helper.make_tensor_value_info("a", elem, [m, k]),
         helper.make_tensor_value_info("b", elem, [k, n])],
        [helper.make_tensor_value_info("c", elem, [m, n])])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def time_ridgeline(model, target, device, repeat):
    """Median milliseconds of `repeat` timed runs, or an error string."""
    cmd = [RIDGE_RUN, model, "--target=" + target, "--random-inputs",
           "--repeat=%d" % repeat]
    if device == "emulator":
        cmd.append("--device=emulator")
    run = subprocess.run(cmd, capture_output=True, text=True)
    found = re.search(r"median ([0-9.]+) ms", run.stdout + run.stderr)
    if run.returncode != 0 or not found:
        lines = (run.stderr or run.stdout).strip().splitlines()
        return None, lines[-1] if lines else "exit %d" % run.returncode
    return float(found.group(1)), None


def time_cublas(m, n, k, dtype, repeat):
    try:
        import torch
    except ImportError:
        return None, "no torch"
    if not torch.cuda.is_available():
        return None, "no CUDA device for torch"
    tdtype = {"bf16": torch.bfloat16, "f16": torch.float16}[dtype]
    a = torch.randn(m, k, device="cuda", dtype=tdtype)
    b = torch.randn(k, n, device="cuda", dtype=tdtype)
    return cuda_time(lambda: torch.matmul(a, b), repeat), None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="sm_90a")
    parser.add_argument("--dtype", default="bf16", choices=["bf16", "f16"])
    parser.add_argument("--device", default="gpu", choices=["gpu", "emulator"])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--sizes", default="4096,8192,16384")
    parser.add_argument("--no-models", action="store_true",
                        help="skip the shared models' shapes")
    args = parser.parse_args()

    shapes = [("%d^3" % s, s, s, s) for s in map(int, args.sizes.split(","))]
    if not args.no_models:
        shapes += MODEL_SHAPES
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for name, m, n, k in shapes:
            model = os.path.join(work, "gemm_%d_%d_%d.onnx" % (m, n, k))
            make_model(model, m, n, k, args.dtype)
            ours, why = time_ridgeline(model, args.target, args.device,
                                       args.repeat)
            theirs, why_not = (None, "emulator run") \
                if args.device == "emulator" else \
                time_cublas(m, n, k, args.dtype, args.repeat)
            rows.append((name, m, n, k, ours, why, theirs, why_not))
    flops = lambda m, n, k: 2.0 * m * n * k
    tflops = lambda ms, m, n, k: flops(m, n, k) / (ms * 1e-3) / 1e12
    peak = max([tflops(t, m, n, k) for _, m, n, k, _, _, t, _ in rows if t]
               or [0])
    print("GEMM %s on %s (%s): Ridgeline vs cuBLAS (torch.matmul), median "
          "of %d runs" % (args.dtype, args.target, args.device, args.repeat))
    if peak:
        print("measured peak (best cuBLAS): %.1f TFLOP/s" % peak)
    print("%-24s %18s %10s %10s %10s %10s %10s" %
          ("shape", "M x N x K", "ours ms", "ours TF/s", "cuBLAS TF/s",
           "x cuBLAS", "x peak"))
    for name, m, n, k, ours, why, theirs, why_not in rows:
        ours_tf = tflops(ours, m, n, k) if ours else None
        theirs_tf = tflops(theirs, m, n, k) if theirs else None
        print("%-24s %18s %10s %10s %10s %10s %10s" % (
            name, "%dx%dx%d" % (m, n, k),
            "%.3f" % ours if ours else "-",
            "%.1f" % ours_tf if ours_tf else "-",
            "%.1f" % theirs_tf if theirs_tf else "-",
            "%.2f" % (ours_tf / theirs_tf) if ours_tf and theirs_tf else "-",
            "%.2f" % (ours_tf / peak) if ours_tf and peak else "-"))
        if why:
            print("    ridgeline: %s" % why)
        if why_not and args.device == "gpu":
            print("    cuBLAS: %s" % why_not)
    print("fp8 (torch._scaled_mm): not run; Ridgeline does not generate fp8 "
          "GEMMs yet")
    return 0 if all(r[4] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
