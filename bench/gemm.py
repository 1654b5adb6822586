#!/usr/bin/env python3
"""GEMM benchmark: Ridgeline's tensor-core kernels against cuBLAS.

For each shape (M, N, K) it writes a one-node ONNX model, C = A x B with A
and B in the 16-bit format (--dtype, bf16 by default), compiles it with
Ridgeline for the target, times it with `ridge-run --repeat` (the median of
the timed runs: one kernel launch and the runtime's launch overhead), and,
when PyTorch with CUDA is importable, times `torch.matmul` (cuBLAS) on the
same shape in the same run with CUDA events. It prints TFLOP/s, the
fraction of cuBLAS and the fraction of the measured peak (the best cuBLAS
figure of the run). `--dtype fp8` (sm_90a) times the fp8 form instead:
C = A x B^T with A [M, K] and B [N, K] in f32, compiled at
`--precision=fp8` (each operand's amax, scale and e4m3 rounding at run
time, inside Ridgeline's kernels), against `torch._scaled_mm` on operands
quantized beforehand (the row also gives torch's time with that
quantization).

Shapes: 4096, 8192 and 16384 square, and the contractions of the shared
models (gpt2_tiny's 128-token MatMuls). `--device emulator --sizes 256`
runs the script end to end without a GPU (the times are the emulator's and
mean nothing).

Usage: bench/gemm.py [--target sm_90a] [--dtype bf16|f16|fp8] [--repeat 20]
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
    if dtype == "fp8":
        # f32 operands, B as [N, K] (k contiguous, as e4m3 is multiplied):
        # the compiler quantizes both at run time (--precision=fp8).
        elem = TensorProto.FLOAT
        node = helper.make_node("Gemm", ["a", "b"], ["c"], transB=1)
        b_shape = [n, k]
    else:
        elem = {"bf16": TensorProto.BFLOAT16, "f16": TensorProto.FLOAT16,
                "f32": TensorProto.FLOAT}[dtype]
        node = helper.make_node("MatMul", ["a", "b"], ["c"])
        b_shape = [k, n]
    graph = helper.make_graph(
        [node], "gemm",
        [helper.make_tensor_value_info("a", elem, [m, k]),
         helper.make_tensor_value_info("b", elem, b_shape)],
        [helper.make_tensor_value_info("c", elem, [m, n])])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def compile_flags(dtype):
    """ridgec/ridge-run flags of a benchmark in `dtype`."""
    return ["--precision=fp8"] if dtype == "fp8" else []


def time_ridgeline(model, target, device, repeat, dtype="bf16"):
    """Median milliseconds of `repeat` timed runs, or an error string."""
    cmd = [RIDGE_RUN, model, "--target=" + target, "--random-inputs",
           "--repeat=%d" % repeat] + compile_flags(dtype)
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
    if dtype == "fp8":
        return time_scaled_mm(torch, m, n, k, repeat)
    tdtype = {"bf16": torch.bfloat16, "f16": torch.float16}[dtype]
    a = torch.randn(m, k, device="cuda", dtype=tdtype)
    b = torch.randn(k, n, device="cuda", dtype=tdtype)
    return cuda_time(lambda: torch.matmul(a, b), repeat), None


def quantize_e4m3(torch, x):
    """x (f32) as e4m3 with a per-tensor scale, and the scale to undo it."""
    amax = x.abs().amax().clamp(min=1e-12)
    scale = 448.0 / amax
    return (x * scale).to(torch.float8_e4m3fn), (1.0 / scale).float()


def time_scaled_mm(torch, m, n, k, repeat, with_quantization=False):
    """torch._scaled_mm (cuBLASLt fp8) on e4m3 operands quantized once
    beforehand, bf16 out; `with_quantization` times the per-tensor
    quantization of f32 A and B with it."""
    if not hasattr(torch, "_scaled_mm") or not hasattr(torch,
                                                        "float8_e4m3fn"):
        return None, "no torch._scaled_mm"
    a = torch.randn(m, k, device="cuda", dtype=torch.float32)
    b = torch.randn(n, k, device="cuda", dtype=torch.float32)
    qa, sa = quantize_e4m3(torch, a)
    qb, sb = quantize_e4m3(torch, b)

    def run():
        if with_quantization:
            qa2, sa2 = quantize_e4m3(torch, a)
            qb2, sb2 = quantize_e4m3(torch, b)
            return torch._scaled_mm(qa2, qb2.t(), scale_a=sa2, scale_b=sb2,
                                    out_dtype=torch.bfloat16)
        return torch._scaled_mm(qa, qb.t(), scale_a=sa, scale_b=sb,
                                out_dtype=torch.bfloat16)
    try:
        return cuda_time(run, repeat), None
    except RuntimeError as e:
        return None, "torch._scaled_mm: %s" % str(e).splitlines()[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="sm_90a")
    parser.add_argument("--dtype", default="bf16",
                        choices=["bf16", "f16", "fp8"])
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
                                       args.repeat, args.dtype)
            theirs, why_not = (None, "emulator run") \
                if args.device == "emulator" else \
                time_cublas(m, n, k, args.dtype, args.repeat)
            rows.append((name, m, n, k, ours, why, theirs, why_not))
    flops = lambda m, n, k: 2.0 * m * n * k
    tflops = lambda ms, m, n, k: flops(m, n, k) / (ms * 1e-3) / 1e12
    peak = max([tflops(t, m, n, k) for _, m, n, k, _, _, t, _ in rows if t]
               or [0])
    theirs_name = "torch._scaled_mm" if args.dtype == "fp8" else \
        "torch.matmul"
    print("GEMM %s on %s (%s): Ridgeline vs cuBLAS (%s), median "
          "of %d runs" % (args.dtype, args.target, args.device, theirs_name,
                          args.repeat))
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
    return 0 if all(r[4] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
