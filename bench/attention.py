#!/usr/bin/env python3
"""Attention benchmark: Ridgeline's fused attention kernel against PyTorch SDPA.

For each shape it writes an ONNX model of attention as GPT-2 exports it
(MatMul(Q, K^T), the scale, a causal mask built from position ranges as the
KV-cache GPT builds it, Softmax, MatMul with V; Q, K, V [B, H, L, D] graph
inputs), compiles it with Ridgeline for the target (ridge-match-attention
makes the chain one attention kernel), times it with `ridge-run --repeat`
(the median of the timed runs), and, when PyTorch with CUDA is importable,
times `torch.nn.functional.scaled_dot_product_attention` (the flash backend,
bf16) on the same shape in the same run with CUDA events. It prints TFLOP/s,
the fraction of SDPA and the fraction of the measured peak (the best SDPA
figure of the run).

Ridgeline's graph inputs are f32; its attention kernel rounds Q, K, V and
the probabilities to bf16 as it stages them and multiplies on tensor cores
(mma.sync, f32 accumulators; the precision policy's default on GPU
targets), so its rows read f32 inputs and write an f32 output where SDPA
reads and writes bf16: the table says so. FLOPs: 4 * B * H * L^2 * D,
halved for causal attention.

Decode rows (one query, a long cache, no mask) report the bandwidth of
reading K and V against the measured copy bandwidth (torch's clone of a
1 GiB tensor). A decode step is memory-bound, so Ridgeline computes it in
f32 with its decode kernel (warps splitting the keys, lanes the head
dimension, splits combined by a second launch).

Shapes: head dims 64 and 128; L = 1024, 4096, 16384; causal and not;
B * H = 16 (--heads). `--device emulator --sizes 64 --head-dims 16
--decode-sizes 64` runs the script end to end without a GPU (the times are
the emulator's and mean nothing).

Usage: bench/attention.py [--target sm_90a] [--repeat 20] [--sizes ...]
           [--head-dims 64,128] [--decode-sizes 8192,65536] [--device gpu]
"""
import argparse
import math
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_timing import cuda_time  # noqa: E402
from gemm import time_ridgeline  # noqa: E402


def bf16_bits(values):
    """The bfloat16 bit patterns of float32 `values`, rounded to nearest
    even (numpy has no bfloat16)."""
    import numpy as np
    u = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    u = u.astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_values(bits):
    """float32 values of bfloat16 bit patterns."""
    import numpy as np
    return (bits.astype(np.uint32) << 16).view(np.float32)


def make_tensor(name, values, dtype):
    """A TensorProto of `values` in `dtype` ("float32", "float16",
    "bfloat16"), rounded to nearest even."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    values = np.asarray(values, dtype=np.float32)
    if dtype == "bfloat16":
        return helper.make_tensor(name, TensorProto.BFLOAT16,
                                  list(values.shape),
                                  bf16_bits(values).tobytes(), raw=True)
    return numpy_helper.from_array(values.astype(dtype), name)


def make_model(path, heads, q_len, kv_len, dim, causal, dtype="float32"):
    """Attention as exported, Q [1, H, q_len, D], K/V [1, H, kv_len, D], in
    `dtype` (a float16/bfloat16 export keeps the whole chain, its scale and
    its mask fill in that type)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["s"]),
        helper.make_node("Mul", ["s", "scale"], ["ss"]),
    ]
    inits = [make_tensor("scale", 1.0 / math.sqrt(dim), dtype)]
    lowest = {"float32": float(np.finfo(np.float32).min),
              "float16": float(np.finfo(np.float16).min),
              # 0xFF7F: the most negative finite bfloat16.
              "bfloat16": -3.3895313892515355e38}[dtype]
    logits = "ss"
    if causal:
        # Query i is position kv_len - q_len + i; key j may be seen when
        # j <= that position (a LessOrEqual of position ranges).
        kpos = np.arange(kv_len, dtype=np.int64).reshape(1, kv_len)
        qpos = (np.arange(q_len, dtype=np.int64) + kv_len - q_len).reshape(
            q_len, 1)
        inits += [numpy_helper.from_array(kpos, "kpos"),
                  numpy_helper.from_array(qpos, "qpos"),
                  make_tensor("min", lowest, dtype)]
        nodes += [helper.make_node("LessOrEqual", ["kpos", "qpos"], ["allow"]),
                  helper.make_node("Where", ["allow", "ss", "min"],
                                   ["masked"])]
        logits = "masked"
    nodes += [helper.make_node("Softmax", [logits], ["p"], axis=-1),
              helper.make_node("MatMul", ["p", "v"], ["o"])]
    elem = {"float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16,
           "bfloat16": TensorProto.BFLOAT16}[dtype]
    graph = helper.make_graph(
        nodes, "attention",
        [helper.make_tensor_value_info("q", elem, [1, heads, q_len, dim]),
         helper.make_tensor_value_info("k", elem, [1, heads, kv_len, dim]),
         helper.make_tensor_value_info("v", elem, [1, heads, kv_len, dim])],
        [helper.make_tensor_value_info("o", elem, [1, heads, q_len, dim])],
        inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def make_kv_append_model(path, heads, kv_heads, q_len, past, dim, causal,
                         dtype="float32", bool_mask=False, softcap=0.0):
    """A KV-cache decode step: one ONNX Attention (opset 23) over Q
    [1, H, q_len, D] and the new K, V [1, Hkv, q_len, D] with past_key /
    past_value [1, Hkv, past, D], whose outputs are Y and present_key /
    present_value (the concatenations), in `dtype`. Inputs q, k, v,
    past_key, past_value (and with `bool_mask`, a boolean attn_mask
    [1, 1, q_len, past + q_len], the last input; with `softcap` > 0, the
    scores soft-capped); outputs y, present_key, present_value."""
    import onnx
    from onnx import TensorProto, helper
    elem = {"float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16,
            "bfloat16": TensorProto.BFLOAT16}[dtype]
    shapes = [("q", [1, heads, q_len, dim]), ("k", [1, kv_heads, q_len, dim]),
              ("v", [1, kv_heads, q_len, dim]),
              ("past_key", [1, kv_heads, past, dim]),
              ("past_value", [1, kv_heads, past, dim])]
    total = past + q_len
    node = helper.make_node(
        "Attention",
        ["q", "k", "v", "mask" if bool_mask else "", "past_key", "past_value"],
        ["y", "present_key", "present_value"], is_causal=int(causal),
        **({"softcap": float(softcap)} if softcap > 0 else {}))
    inputs = [helper.make_tensor_value_info(n, elem, s) for n, s in shapes]
    if bool_mask:
        inputs.append(helper.make_tensor_value_info(
            "mask", TensorProto.BOOL, [1, 1, q_len, total]))
    graph = helper.make_graph(
        [node], "kv_append", inputs,
        [helper.make_tensor_value_info("y", elem, [1, heads, q_len, dim]),
         helper.make_tensor_value_info("present_key", elem,
                                       [1, kv_heads, total, dim]),
         helper.make_tensor_value_info("present_value", elem,
                                       [1, kv_heads, total, dim])])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 10
    onnx.save(model, path)


def torch_cuda():
    try:
        import torch
    except ImportError:
        return None, "no torch"
    if not torch.cuda.is_available():
        return None, "no CUDA device for torch"
    return torch, None


def time_sdpa(heads, q_len, kv_len, dim, causal, repeat):
    torch, why = torch_cuda()
    if not torch:
        return None, why
    import torch.nn.functional as F
    q = torch.randn(1, heads, q_len, dim, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(1, heads, kv_len, dim, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(1, heads, kv_len, dim, device="cuda", dtype=torch.bfloat16)
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        backend = sdpa_kernel(SDPBackend.FLASH_ATTENTION)
    except ImportError:
        import contextlib
        backend = contextlib.nullcontext()
    with backend:
        return cuda_time(lambda: F.scaled_dot_product_attention(
            q, k, v, is_causal=causal and q_len > 1), repeat), None


def copy_bandwidth(repeat):
    """Bytes per second of torch's clone of a 1 GiB tensor (read + write)."""
    torch, _ = torch_cuda()
    if not torch:
        return None
    x = torch.empty(1 << 28, device="cuda", dtype=torch.float32)
    ms = cuda_time(lambda: x.clone(), repeat)
    return 2 * x.numel() * 4 / (ms * 1e-3)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="sm_90a")
    parser.add_argument("--device", default="gpu", choices=["gpu", "emulator"])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--heads", type=int, default=16,
                        help="B * H of every shape (default %(default)s)")
    parser.add_argument("--sizes", default="1024,4096,16384")
    parser.add_argument("--head-dims", default="64,128")
    parser.add_argument("--decode-sizes", default="8192,65536",
                        help="cached keys of the decode rows")
    parser.add_argument("--dtype", default="float32",
                        choices=["float32", "float16", "bfloat16"],
                        help="the model's type: float32 (bf16 products, f32 "
                        "I/O) or a half-precision export (its I/O, as "
                        "SDPA's)")
    args = parser.parse_args()
    emulated = args.device == "emulator"

    shapes = []  # (name, q_len, kv_len, dim, causal)
    for dim in map(int, args.head_dims.split(",")):
        for size in map(int, args.sizes.split(",")):
            for causal in (False, True):
                shapes.append(("L=%d D=%d%s" % (size, dim,
                                                " causal" if causal else ""),
                               size, size, dim, causal))
        for size in map(int, args.decode_sizes.split(",")):
            shapes.append(("decode S=%d D=%d" % (size, dim), 1, size, dim,
                           False))
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for name, q_len, kv_len, dim, causal in shapes:
            model = os.path.join(work, "attention.onnx")
            make_model(model, args.heads, q_len, kv_len, dim, causal,
                       args.dtype)
            ours, why = time_ridgeline(model, args.target, args.device,
                                       args.repeat)
            theirs, why_not = (None, "emulator run") if emulated else \
                time_sdpa(args.heads, q_len, kv_len, dim, causal, args.repeat)
            rows.append((name, q_len, kv_len, dim, causal, ours, why, theirs,
                         why_not))
    bandwidth = None if emulated else copy_bandwidth(args.repeat)

    def flops(q_len, kv_len, dim, causal):
        return 4.0 * args.heads * q_len * kv_len * dim * (0.5 if causal
                                                            else 1.0)

    def tflops(ms, *shape):
        return flops(*shape) / (ms * 1e-3) / 1e12

    peak = max([tflops(t, q, k, d, c) for _, q, k, d, c, _, _, t, _ in rows
                if t and q > 1] or [0])
    io = "bf16 products, f32 I/O" if args.dtype == "float32" else \
        args.dtype + " I/O"
    print("attention on %s (%s), B*H = %d: Ridgeline (%s) vs SDPA (flash, "
          "bf16), median of %d runs" % (args.target, args.device, args.heads,
                                         io, args.repeat))
    if peak:
        print("measured peak (best SDPA): %.1f TFLOP/s" % peak)
    if bandwidth:
        print("measured copy bandwidth: %.0f GB/s" % (bandwidth / 1e9))
    print("%-26s %10s %10s %10s %9s %9s" % ("shape", "ours ms", "ours TF/s",
                                          "SDPA TF/s", "x SDPA", "x peak"))
    for name, q_len, kv_len, dim, causal, ours, why, theirs, why_not in rows:
        shape = (q_len, kv_len, dim, causal)
        ours_tf = tflops(ours, *shape) if ours else None
        theirs_tf = tflops(theirs, *shape) if theirs else None
        print("%-26s %10s %10s %10s %9s %9s" % (
            name, "%.3f" % ours if ours else "-",
            "%.2f" % ours_tf if ours_tf else "-",
            "%.1f" % theirs_tf if theirs_tf else "-",
            "%.3f" % (ours_tf / theirs_tf) if ours_tf and theirs_tf else "-",
            "%.3f" % (ours_tf / peak) if ours_tf and peak and q_len > 1
            else "-"))
        if q_len == 1 and ours and bandwidth:
            kv_bytes = 2 * args.heads * kv_len * dim * \
                (4 if args.dtype == "float32" else 2)
            print("    K/V read at %.0f GB/s, %.2f of the copy bandwidth"
                  % (kv_bytes / (ours * 1e-3) / 1e9,
                     kv_bytes / (ours * 1e-3) / bandwidth))
        if why:
            print("    ridgeline: %s" % why)
        if why_not and not emulated:
            print("    SDPA: %s" % why_not)
    return 0 if all(r[5] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
