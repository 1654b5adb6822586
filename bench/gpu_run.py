#!/usr/bin/env python3
"""Run a bundle from bench/gpu_bundle.py on a GPU: numbers, then speed.

    python3 gpu_run.py [BUNDLE] [--out DIR] [--device gpu|emulator]
                       [--only models,attention,kv_append,gemm,gemv]

Runs where the GPU is, with no compiler: `bin/ridge-exec` (libridge_runtime
only) loads each compiled model. For each model of the bundle it checks the
outputs against the fixture's ONNX Runtime reference and against the PTX
emulator's outputs of the same .so (made where the bundle was built), then
times it end to end (median of 100 runs, data device-resident) and per
kernel (CUDA events around each launch) beside the roofline prediction. For
each benchmark (attention, GEMM) it draws random inputs, checks the output
against PyTorch on the GPU in f32, and times it against SDPA (flash) or
torch.matmul (cuBLAS) in the same run. A decode step with its KV-cache
append (kv_append) is checked the same way (the concatenations bit for
bit) and timed against torch.cat + SDPA, its kernel's bytes (the cache
read, the concatenations written) per second against the copy bandwidth.
The bandwidth path's products (gemv: decode steps, tall-skinny) are checked
the same way, timed against torch.matmul in their type, their bytes (A, B
and C once) per second against the copy bandwidth. The ceilings are
measured here: the
copy bandwidth (a 1 GiB clone, read + write) and the bf16 matrix rate
(an 8192^3 torch.matmul). Prints the tables and writes results.json to
--out. `--device emulator` runs the same flow on the emulator (no torch
needed; quick bundles only).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cuda_timing import cuda_time  # noqa: E402
import gemm  # noqa: E402  (the fp8 benchmarks' torch._scaled_mm)


def torch_cuda():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def ridge_exec(bundle, args, device, timeout=240, env=None):
    cmd = [os.path.join(bundle, "bin", "ridge-exec")] + args + \
        ["--device=" + device]
    t0 = time.time()
    try:
        result = subprocess.run(cmd, capture_output=True, text=True,
                                timeout=timeout,
                                env=dict(os.environ, **(env or {})))
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % timeout, time.time() - t0
    text = result.stdout + result.stderr
    if result.returncode != 0:
        lines = result.stderr.strip().splitlines() or \
            result.stdout.strip().splitlines()
        return None, (lines[-1] if lines else "exit %d" %
                      result.returncode), time.time() - t0
    return text, None, time.time() - t0


def parse_times(text):
    median = re.search(r"median ([0-9.]+) ms", text)
    loaded = re.search(r"loaded in ([0-9.]+) ms", text)
    kernels = re.search(r"^\s+total\s+(\d+) kernels\s+([0-9.]+) ms", text,
                        re.M)
    return (float(median.group(1)) if median else None,
            float(kernels.group(2)) if kernels else None,
            float(loaded.group(1)) if loaded else None)


def kernel_lines(text):
    lines = []
    for line in text.splitlines():
        m = re.match(r"\s+(\S+)\s+(\d+) launches\s+([0-9.]+) ms", line)
        if m:
            lines.append((m.group(1), int(m.group(2)), float(m.group(3))))
    return lines


def as_float(array, like):
    """bf16 bits ('<u2' where the reference is float) as float32."""
    if array.dtype == np.uint16 and like.dtype != np.uint16:
        return (array.astype(np.uint32) << 16).view(np.float32)
    return array


def compare(out, ref):
    """(max abs error, max |ref|) of two arrays (bf16 bits read as floats)."""
    if out.dtype == np.uint16 and ref.dtype == np.uint16:
        out = as_float(out, np.zeros(1, np.float32))
        ref = as_float(ref, np.zeros(1, np.float32))
    a = out.astype(np.float64)
    b = ref.astype(np.float64)
    if a.shape != b.shape:
        return float("inf"), 0.0
    if not a.size:
        return 0.0, 0.0
    both_nan = np.isnan(a) & np.isnan(b)
    with np.errstate(invalid="ignore"):
        diff = np.where(both_nan | (a == b), 0.0, np.abs(a - b))
    diff = np.where(np.isnan(diff), np.inf, diff)
    finite = b[np.isfinite(b)]
    return float(diff.max()), float(np.abs(finite).max()) if finite.size \
        else 0.0


def run_models(bundle, manifest, device, results):
    print("\n== models on %s (%s): outputs against ONNX Runtime and the "
          "emulator, time per inference" % (manifest["target"], device))
    # e2e: one inference on device-resident inputs, synchronized, median of
    # 100 (a CUDA graph replay); "launched": the same with the kernels
    # launched one by one (--no-cuda-graph).
    print("%-26s %4s %-6s %10s %10s %10s %10s %10s %10s %8s %8s %12s" % (
        "model", "kern", "result", "err ref", "diff emu", "e2e ms",
        "launched", "kernels ms", "roofline", "load ms", "jit ms",
        "allocs/run"))
    rows = []
    for entry in manifest["models"]:
        name = entry["name"]
        row = {"name": name}
        rows.append(row)
        if "error" in entry:
            row["result"] = "NOT COMPILED: " + entry["error"]
            print("%-26s %s" % (name, row["result"]))
            continue
        folder = os.path.join(bundle, entry["dir"])
        with tempfile.TemporaryDirectory() as work:
            args = [os.path.join(folder, "model.so")] + \
                [os.path.join(folder, i) for i in entry["inputs"]] + \
                ["--save-outputs=" + work]
            args.append("--driver-calls")
            if device == "gpu":
                args += ["--repeat=100", "--kernel-times=20"]
            text, why, _ = ridge_exec(bundle, args, device)
            if why:
                row["result"] = "FAIL: " + why
                print("%-26s %4s %s" % (name, entry.get("kernels", "-"),
                                        row["result"]))
                continue
            worst_ref = worst_emu = 0.0
            ok = True
            k = 0
            while os.path.exists(os.path.join(work, "output_%d.npy" % k)):
                out = np.load(os.path.join(work, "output_%d.npy" % k))
                ref_path = os.path.join(folder, "ref", "output_%d.npy" % k)
                emu_path = os.path.join(folder, "emulator",
                                        "output_%d.npy" % k)
                if os.path.exists(ref_path):
                    ref = np.load(ref_path)
                    err, scale = compare(as_float(out, ref), ref)
                    worst_ref = max(worst_ref, err / max(scale, 1.0))
                if os.path.exists(emu_path):
                    emu = np.load(emu_path)
                    err, scale = compare(out, emu)
                    worst_emu = max(worst_emu, err / max(scale, 1.0))
                    # The same binary on the emulator: only the hardware's
                    # approximate instructions (ex2, rcp, tanh) and its
                    # tensor-core accumulation order may differ. A 16-bit
                    # output shows that at its own precision, and so does a
                    # model that rounds activations to bf16/fp16 before a
                    # tensor-core kernel: a last-bit difference upstream can
                    # round to the neighbouring 16-bit value, 2^-7 (bf16)
                    # away, and carry on from there.
                    rounded = out.dtype in (np.uint16, np.float16) or \
                        entry.get("rounded", False)
                    limit = 8e-3 if rounded else 1e-3
                    ok = ok and err <= limit * max(scale, 1.0)
                k += 1
        median, kernel_ms, load_ms = parse_times(text)
        launched_ms = None
        if device == "gpu":
            base = [os.path.join(folder, "model.so")] + \
                [os.path.join(folder, i) for i in entry["inputs"]]
            plain, _, _ = ridge_exec(bundle, base + ["--repeat=100",
                                                     "--no-cuda-graph"], device)
            if plain:
                launched_ms = parse_times(plain)[0]
            # The load with the PTX JIT-compiled by the driver instead of
            # the embedded cubin.
            jit, _, _ = ridge_exec(bundle, base, device,
                                   env={"RIDGE_PTX_JIT": "1"})
            if jit:
                row["load_jit_ms"] = parse_times(jit)[2]
        # What the second run cost beyond its kernels (issue 16).
        calls = re.search(r"run 2: (\d+) allocations \(([0-9.]+) MB\).*?"
                          r"(\d+) other copies \(([0-9.]+) MB\)", text)
        if calls:
            row.update(allocations=int(calls.group(1)),
                       allocated_mb=float(calls.group(2)),
                       copies=int(calls.group(3)),
                       copied_mb=float(calls.group(4)))
        row.update(load_ms=load_ms, result="PASS" if ok else "FAIL", err_ref=worst_ref,
                   diff_emulator=worst_emu, e2e_ms=median,
                   e2e_launched_ms=launched_ms,
                   cuda_graph="replayed a CUDA graph" in text,
                   kernels_ms=kernel_ms,
                   predicted_ms=entry.get("predicted_ms"),
                   kernels=kernel_lines(text),
                   emulated=os.path.isdir(os.path.join(folder, "emulator")))
        fmt = lambda v, f="%.3e": f % v if v is not None else "-"
        print("%-26s %4s %-6s %10s %10s %10s %10s %10s %10s %8s %8s %12s" % (
            name, entry.get("kernels", "-"), row["result"],
            fmt(worst_ref), fmt(worst_emu) if row["emulated"] else "-",
            fmt(median, "%.4f"), fmt(launched_ms, "%.4f"),
            fmt(kernel_ms, "%.4f"),
            fmt(entry.get("predicted_ms"), "%.4f"), fmt(load_ms, "%.1f"),
            fmt(row.get("load_jit_ms"), "%.1f"),
            "%d (%.2f MB)" % (row["allocations"], row["allocated_mb"])
            if "allocations" in row else "-"))
    results["models"] = rows


def bf16_bits(torch, t):
    return t.to(torch.bfloat16).view(torch.int16).cpu().numpy().view(np.uint16)


def run_benchmarks(bundle, manifest, device, kinds, results, ceilings):
    torch = torch_cuda() if device == "gpu" else None
    rows = []
    for entry in manifest["benchmarks"]:
        if entry["kind"] not in kinds:
            continue
        row = dict(entry)
        rows.append(row)
        if "error" in entry:
            continue
        rng = np.random.default_rng(len(rows))
        with tempfile.TemporaryDirectory() as work:
            paths = []
            if entry["kind"] in ("attention", "kv_append"):
                if entry["kind"] == "attention":
                    h, q, s, d = (entry["heads"], entry["q_len"],
                                  entry["kv_len"], entry["dim"])
                    shapes = [(1, h, n, d) for n in (q, s, s)]
                else:
                    # q, the new k and v, past_key, past_value.
                    h, g, q, s, d = (entry["heads"], entry["kv_heads"],
                                     entry["q_len"], entry["past"],
                                     entry["dim"])
                    shapes = [(1, h, q, d), (1, g, q, d), (1, g, q, d),
                              (1, g, s, d), (1, g, s, d)]
                arrays = [rng.standard_normal(shape, dtype=np.float32)
                          for shape in shapes]
                if entry.get("dtype") == "bfloat16":
                    # bf16 inputs (round to nearest even) and their values
                    # for the reference.
                    arrays = [((a.view(np.uint32).astype(np.uint64) + 0x7FFF +
                                ((a.view(np.uint32) >> 16) & 1)) >> 16)
                              .astype(np.uint16) for a in arrays]
            elif entry.get("dtype") == "fp8":
                # f32 A [M, K] and B [N, K]; the kernels quantize them.
                m, n, k = entry["m"], entry["n"], entry["k"]
                arrays = [rng.standard_normal(shape, dtype=np.float32)
                          for shape in ((m, k), (n, k))]
            elif entry.get("dtype") == "f32":
                m, n, k = entry["m"], entry["n"], entry["k"]
                arrays = [rng.standard_normal(shape, dtype=np.float32)
                          for shape in ((m, k), (k, n))]
            else:
                m, n, k = entry["m"], entry["n"], entry["k"]
                floats = [rng.standard_normal(shape, dtype=np.float32)
                          for shape in ((m, k), (k, n))]
                arrays = [((f.view(np.uint32) + 0x8000) >> 16).astype(
                    np.uint16) for f in floats]
            for i, a in enumerate(arrays):
                paths.append(os.path.join(work, "input_%d.npy" % i))
                np.save(paths[-1], a)
            args = [os.path.join(bundle, entry["so"])] + paths + \
                ["--save-outputs=" + work]
            if device == "gpu":
                args += ["--repeat=20", "--kernel-times=10"]
            text, why, _ = ridge_exec(bundle, args, device)
            if why:
                row["error"] = why
                continue
            out = np.load(os.path.join(work, "output_0.npy"))
            row["ours_ms"], row["ours_kernels_ms"], _ = parse_times(text)
            # The reference in f32 from the same (rounded) inputs.
            if entry["kind"] == "kv_append":
                # The concatenations bit for bit; Y against attention over
                # them, each key head repeated for its query heads.
                group = entry["heads"] // entry["kv_heads"]
                present = [np.concatenate([arrays[3 + i], arrays[1 + i]],
                                          axis=2) for i in (0, 1)]
                row["present_exact"] = all(
                    np.array_equal(np.load(os.path.join(
                        work, "output_%d.npy" % (1 + i))), present[i])
                    for i in (0, 1))
                floats = [(a.astype(np.uint32) << 16).view(np.float32)
                          for a in [arrays[0]] + present]
                floats[1:] = [np.repeat(a, group, axis=1) for a in floats[1:]]
                ref = attention_reference(torch, floats, False)
                out = (out.astype(np.uint32) << 16).view(np.float32)
            elif entry["kind"] == "attention":
                if entry.get("dtype") == "bfloat16":
                    arrays = [(a.astype(np.uint32) << 16).view(np.float32)
                              for a in arrays]
                    out = (out.astype(np.uint32) << 16).view(np.float32)
                ref = attention_reference(torch, arrays, entry["causal"])
            elif entry.get("dtype") == "fp8":
                # Against the unquantized product: e4m3's 3 mantissa bits
                # leave a few percent (docs/precision.md).
                ref = gemm_reference(torch, [arrays[0],
                                             np.ascontiguousarray(
                                                 arrays[1].T)])
            elif entry.get("dtype") == "f32":
                ref = gemm_reference(torch, arrays)
            else:
                fl = [(a.astype(np.uint32) << 16).view(np.float32)
                      for a in arrays]
                ref = gemm_reference(torch, fl)
                out = (out.astype(np.uint32) << 16).view(np.float32)
            row["rel_err"] = float(np.linalg.norm(out.astype(np.float64) - ref)
                                   / np.linalg.norm(ref))
        if torch is not None:
            if entry["kind"] == "attention":
                row["theirs_ms"] = time_sdpa(torch, entry)
            elif entry["kind"] == "kv_append":
                row["theirs_ms"] = time_torch_kv_append(torch, entry)
            elif entry.get("dtype") == "fp8":
                for key, quantized in (("theirs_ms", False),
                                       ("theirs_quantizing_ms", True)):
                    row[key], why = gemm.time_scaled_mm(
                        torch, entry["m"], entry["n"], entry["k"], 20,
                        quantized)
                    if why:
                        row["theirs_error"] = why
            else:
                row["theirs_ms"] = time_cublas(torch, entry)
    results["benchmarks"] = rows
    print_benchmarks(rows, ceilings)


def attention_reference(torch, arrays, causal):
    q, k, v = [a.astype(np.float64) for a in arrays]
    scale = 1.0 / np.sqrt(q.shape[-1])
    if torch is not None:
        tq, tk, tv = [torch.from_numpy(a).cuda().float() for a in arrays]
        s = (tq @ tk.transpose(-1, -2)) * scale
        qn, kn = q.shape[2], k.shape[2]
        if causal:
            i = torch.arange(qn, device="cuda")[:, None] + kn - qn
            j = torch.arange(kn, device="cuda")[None, :]
            s = s.masked_fill(j > i, float("-inf"))
        return (torch.softmax(s, -1) @ tv).double().cpu().numpy()
    s = np.einsum("bhqd,bhkd->bhqk", q, k) * scale
    if causal:
        qn, kn = q.shape[2], k.shape[2]
        mask = np.arange(kn)[None, :] > (np.arange(qn)[:, None] + kn - qn)
        s = np.where(mask, -np.inf, s)
    s = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("bhqk,bhkd->bhqd", s / s.sum(-1, keepdims=True), v)


def gemm_reference(torch, floats):
    if torch is not None:
        a, b = [torch.from_numpy(f).cuda() for f in floats]
        torch.backends.cuda.matmul.allow_tf32 = False
        return (a @ b).double().cpu().numpy()
    return floats[0].astype(np.float64) @ floats[1].astype(np.float64)


def time_sdpa(torch, e):
    import torch.nn.functional as F
    q = torch.randn(1, e["heads"], e["q_len"], e["dim"], device="cuda",
                    dtype=torch.bfloat16)
    k = torch.randn(1, e["heads"], e["kv_len"], e["dim"], device="cuda",
                    dtype=torch.bfloat16)
    v = torch.randn_like(k)
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        backend = sdpa_kernel(SDPBackend.FLASH_ATTENTION)
    except ImportError:
        import contextlib
        backend = contextlib.nullcontext()
    with backend:
        return cuda_time(lambda: F.scaled_dot_product_attention(
            q, k, v, is_causal=e["causal"] and e["q_len"] > 1))


def time_torch_kv_append(torch, e):
    """A decode step as PyTorch runs it eagerly: the two concatenations,
    then SDPA over them (GQA by enable_gqa, or the key heads repeated)."""
    import torch.nn.functional as F
    h, g, q, s, d = e["heads"], e["kv_heads"], e["q_len"], e["past"], e["dim"]
    make = lambda *shape: torch.randn(*shape, device="cuda",
                                      dtype=torch.bfloat16)
    tq, tk, tv = make(1, h, q, d), make(1, g, q, d), make(1, g, q, d)
    pk, pv = make(1, g, s, d), make(1, g, s, d)

    def step():
        k, v = torch.cat([pk, tk], dim=2), torch.cat([pv, tv], dim=2)
        try:
            return F.scaled_dot_product_attention(tq, k, v, enable_gqa=True)
        except TypeError:
            return F.scaled_dot_product_attention(
                tq, k.repeat_interleave(h // g, 1),
                v.repeat_interleave(h // g, 1))
    return cuda_time(step)


def time_cublas(torch, e):
    dtype = torch.float32 if e.get("dtype") == "f32" else torch.bfloat16
    a = torch.randn(e["m"], e["k"], device="cuda", dtype=dtype)
    b = torch.randn(e["k"], e["n"], device="cuda", dtype=dtype)
    return cuda_time(lambda: torch.matmul(a, b))


def print_bandwidth_rows(rows, kind, title, last, last_value, bandwidth):
    """The `kind` rows as a table of times and bytes per second (r["bytes"]
    over the kernel time) against the copy bandwidth, beside torch's time;
    the last column, `last`, is last_value(row)."""
    chosen = [r for r in rows if r["kind"] == kind]
    if not chosen:
        return
    print("\n== " + title)
    print("%-26s %-7s %9s %9s %9s %9s %9s %9s %9s" % (
        "shape", "target", "ours ms", "(kernel)", "torch ms", "x torch",
        "GB/s", "x copy", last))
    f = lambda v, fmt: fmt % v if v is not None else "-"
    for r in chosen:
        if "error" in r and "ours_ms" not in r:
            print("%-26s %-7s %s" % (r["name"], r["target"], r["error"]))
            continue
        ours = r.get("ours_kernels_ms") or r.get("ours_ms")
        gbs = r["bytes"] / (ours * 1e-3) / 1e9 if ours else None
        r["gbs"] = gbs
        print("%-26s %-7s %9s %9s %9s %9s %9s %9s %9s" % (
            r["name"], r["target"], f(r.get("ours_ms"), "%.3f"),
            f(r.get("ours_kernels_ms"), "%.3f"), f(r.get("theirs_ms"), "%.3f"),
            f(r["theirs_ms"] / ours if ours and r.get("theirs_ms") else None,
              "%.2f"), f(gbs, "%.0f"),
            f(gbs / bandwidth if gbs and bandwidth else None, "%.2f"),
            last_value(r)))


def print_kv_append(rows, bandwidth):
    print_bandwidth_rows(
        rows, "kv_append",
        "decode step with its KV-cache append: Ridgeline (one kernel reads "
        "the cache, writes present) against torch.cat + SDPA, median ms "
        "(kernel-only in brackets)", "exact",
        lambda r: "yes" if r.get("present_exact") else "NO", bandwidth)


def print_gemv(rows, bandwidth):
    print_bandwidth_rows(
        rows, "gemv",
        "bandwidth path (decode and tall-skinny products, m x n x k): "
        "Ridgeline against torch.matmul, median ms (kernel-only in "
        "brackets); A, B and C once per second against the copy bandwidth",
        "rel err",
        lambda r: "%.2e" % r["rel_err"] if "rel_err" in r else "-",
        bandwidth)


def print_benchmarks(rows, ceilings):
    bandwidth = ceilings.get("copy_gbs")
    print_kv_append(rows, bandwidth)

    def row_peak(r):
        return ceilings.get("fp8_tflops" if r.get("dtype") == "fp8"
                            else "bf16_tflops")
    for kind, theirs in (("attention", "SDPA"), ("gemm", "cuBLAS")):
        chosen = [r for r in rows if r["kind"] == kind]
        if not chosen:
            continue
        print("\n== %s: Ridgeline against %s, median ms (kernel-only in "
              "brackets), TFLOP/s" % (kind, theirs))
        print("%-26s %-7s %9s %9s %9s %9s %8s %8s %9s" % (
            "shape", "target", "ours ms", "(kernel)", "ours TF", theirs + " TF",
            "x " + theirs, "x peak", "rel err"))
        for r in chosen:
            if "error" in r and "ours_ms" not in r:
                print("%-26s %-7s %s" % (r["name"], r["target"], r["error"]))
                continue
            ours_best = r.get("ours_kernels_ms") or r.get("ours_ms")
            ours_tf = r["flops"] / (ours_best * 1e-3) / 1e12 \
                if ours_best else None
            their_tf = r["flops"] / (r["theirs_ms"] * 1e-3) / 1e12 \
                if r.get("theirs_ms") else None
            f = lambda v, fmt: fmt % v if v is not None else "-"
            print("%-26s %-7s %9s %9s %9s %9s %8s %8s %9s" % (
                r["name"], r["target"], f(r.get("ours_ms"), "%.3f"),
                f(r.get("ours_kernels_ms"), "%.3f"), f(ours_tf, "%.1f"),
                f(their_tf, "%.1f"),
                f(ours_tf / their_tf if ours_tf and their_tf else None,
                  "%.3f"),
                f(ours_tf / row_peak(r) if ours_tf and row_peak(r) else None,
                  "%.3f"),
                f(r.get("rel_err"), "%.2e")))
            if r.get("dtype") == "fp8":
                # fp8 rows: theirs is torch._scaled_mm on operands quantized
                # beforehand; ours quantizes f32 inside its kernels.
                print("    fp8: vs torch._scaled_mm; with torch's "
                      "quantization of A and B: %s ms%s" % (
                          f(r.get("theirs_quantizing_ms"), "%.3f"),
                          "; " + r["theirs_error"]
                          if r.get("theirs_error") else ""))
            if kind == "attention" and r["q_len"] == 1 and ours_best:
                half = r.get("dtype") == "bfloat16"
                kv_bytes = 2 * r["heads"] * r["kv_len"] * r["dim"] * \
                    (2 if half else 4)
                gbs = kv_bytes / (ours_best * 1e-3) / 1e9
                r["kv_gbs"] = gbs
                print("    K/V (%s) read at %.0f GB/s%s" % (
                    "bf16" if half else "f32",
                    gbs, ", %.2f of the copy bandwidth" % (gbs / bandwidth)
                    if bandwidth else ""))
    print_gemv(rows, bandwidth)


def measure_ceilings(results):
    torch = torch_cuda()
    if torch is None:
        return {}
    x = torch.empty(1 << 28, device="cuda", dtype=torch.float32)
    ms = cuda_time(lambda: x.clone())
    copy_gbs = 2 * x.numel() * 4 / (ms * 1e-3) / 1e9
    del x
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    ms = cuda_time(lambda: a @ b, repeat=10)
    tflops = 2 * 8192 ** 3 / (ms * 1e-3) / 1e12
    ceilings = {"copy_gbs": copy_gbs, "bf16_tflops": tflops,
                "gpu": torch.cuda.get_device_name(0),
                "torch": torch.__version__}
    print("%s, torch %s: copy %.0f GB/s, bf16 8192^3 matmul %.1f TFLOP/s" % (
        ceilings["gpu"], ceilings["torch"], copy_gbs, tflops))
    fp8_ms, why = gemm.time_scaled_mm(torch, 8192, 8192, 8192, 10)
    if fp8_ms:
        ceilings["fp8_tflops"] = 2 * 8192 ** 3 / (fp8_ms * 1e-3) / 1e12
        print("fp8 8192^3 torch._scaled_mm %.1f TFLOP/s" %
              ceilings["fp8_tflops"])
    else:
        print("fp8 ceiling not measured: %s" % why)
    results["ceilings"] = ceilings
    return ceilings


def probe_peers():
    """Which peer runtimes this machine has (issue 16 compares against ONNX
    Runtime's CUDA EP and PyTorch eager where installable)."""
    peers = {}
    try:
        import onnxruntime
        peers["onnxruntime"] = "%s, providers %s" % (
            onnxruntime.__version__,
            ",".join(onnxruntime.get_available_providers()))
    except Exception as e:  # not installed here
        peers["onnxruntime"] = "unavailable: %s" % e
    try:
        import torch
        peers["torch"] = "%s, cuda %s" % (torch.__version__,
                                          torch.cuda.is_available())
    except Exception as e:
        peers["torch"] = "unavailable: %s" % e
    print("\n== peers: " + "; ".join("%s %s" % kv for kv in peers.items()))
    return peers


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", nargs="?", default=HERE)
    parser.add_argument("--out", default=".")
    parser.add_argument("--device", default="gpu", choices=["gpu", "emulator"])
    parser.add_argument("--only",
                        default="models,attention,kv_append,gemm,gemv")
    args = parser.parse_args()
    bundle = os.path.abspath(args.bundle)
    with open(os.path.join(bundle, "manifest.json")) as f:
        manifest = json.load(f)
    kinds = set(args.only.split(","))
    results = {"target": manifest["target"], "device": args.device}
    ceilings = measure_ceilings(results) if args.device == "gpu" else {}
    if args.device == "gpu":
        results["peers"] = probe_peers()
    try:
        if "models" in kinds:
            run_models(bundle, manifest, args.device, results)
        run_benchmarks(bundle, manifest, args.device, kinds, results,
                       ceilings)
    finally:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "results.json"), "w") as f:
            json.dump(results, f, indent=1)
    failed = [r["name"] for r in results.get("models", [])
              if r.get("result") != "PASS"]
    # The relative error of a bf16 product is about 2^-8 per term (2e-2
    # leaves room); an e4m3 one about 2^-4 / sqrt(3) per operand, 5% of the
    # product's norm for two quantized operands (0.1 leaves room).
    tolerance = lambda r: 1e-1 if r.get("dtype") == "fp8" else 2e-2
    failed += [r["name"] for r in results.get("benchmarks", [])
               if "error" in r or (r.get("rel_err") or 0) > tolerance(r) or
               r.get("present_exact") is False]
    print("\n%d failed%s" % (len(failed), ": " + ", ".join(failed)
                              if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
