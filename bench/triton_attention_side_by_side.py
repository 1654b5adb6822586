#!/usr/bin/env python3
"""Ridgeline's fused attention kernel beside Triton's, on the PTX emulator.

Issue 15, item 2. For each chip (sm_80 and sm_90a by default) it

  - compiles test/models/attention_causal (GPT-2's causal attention chain
    with Q, K, V [1, 2, 128, 64] as graph inputs, which ridge-match-attention
    makes one attention kernel) with `ridgec --emit=ptx` and takes the
    kernel's launch from the host code, as bench/triton_side_by_side.py does
    for the GEMM;
  - compiles the forward kernel of Triton's fused-attention tutorial (one
    program per 64-query tile and head, a loop over 64-key tiles with an
    online exp2 softmax, `tl.dot` for QK^T and PV) ahead of time for the
    same chip, f32 operands (tl.dot in tf32 on tensor cores, Triton's
    default for f32), causal;
  - runs both with `ridge-emu` on the same random Q, K, V, checks both
    against NumPy (f64), and prints one table per chip with both kernels'
    counters: instruction mix, tensor-core share of the FLOPs, global bytes
    (requested and footprint), shared-memory traffic and bank conflicts.

The tensor-core share is taken of the dense FLOPs, 4 * B * H * L^2 * D: a
causal kernel needs about half of them (Triton computes the diagonal tiles
whole, 3 of the 4 64x64 tiles per head here, so its share is 0.75).

With `--dtype float16` both kernels read and write f16, as Triton's
tutorial is written for: Ridgeline compiles the same chain exported in
float16 (bench/attention.py's model: its attention kernel multiplies f16 as
stored and copies K and V with cp.async on sm_80; on sm_90a a producer
warp's TMA tensor copies bring Q, K and V), Triton's kernel takes *fp16
pointers (tl.dot in f16, P cast to f16 before PV, as the tutorial does).

Exit status: 0 when both kernels of every chip pass, 1 when one fails, 2
when a prerequisite is missing (Triton, NumPy, the Ridgeline binaries).

Usage: bench/triton_attention_side_by_side.py [--chips sm_80,sm_90a]
           [--dtype float32|float16] [--json FILE] [--bin-dir build/bin]
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from triton_side_by_side import (CHIPS, TRITON_PIN, Failure,  # noqa: E402
                                 check, entry_params, kernel_launch,
                                 print_columns, rows, run, run_comparison)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODEL = os.path.join(ROOT, "test", "models", "attention_causal",
                             "model.onnx")
B, H, L, D = 1, 2, 128, 64
SCALE = 1.0 / 8.0


def ridgeline_kernel(ridgec, model, target, work, element):
    """Ridgeline's attention kernel for `target`: PTX, name, launch."""
    ptx_path = os.path.join(work, "ridgeline.%s.ptx" % target)
    run([ridgec, model, "--target=" + target, "--emit=ptx", "-o", ptx_path],
        "ridgec --emit=ptx")
    ptx = open(ptx_path).read()
    names = re.findall(r"\.entry\s+(\w+)", ptx)
    if len(names) != 1 or "attention" not in names[0]:
        raise Failure("expected one attention kernel in Ridgeline's %s PTX, "
                      "found %s" % (target, names or "none"))
    name = names[0]
    params = entry_params(ptx, name)
    v, maps = kernel_launch(ridgec, model, target, name, map_names="kvq")
    # sm_90a's TMA-fed kernel (attention_tma: Q, K and V stored in f16)
    # takes K, V and Q as tensor maps (128-byte __grid_constant__
    # parameters, in that order) and O as a pointer; the others four
    # pointers.
    if maps:
        expected = ["b8", "b8", "b8", "u64"]
        args = maps + ["buf:o"]
    else:
        expected = ["u64"] * 4
        args = ["buf:" + n for n in ("q", "k", "v", "o")]
    if [t for t, _ in params] != expected or (maps and len(maps) != 3):
        raise Failure("%s takes %s; expected %s" % (name, params, expected))
    return {"ptx": ptx_path, "name": name, "grid": v[0:3], "block": v[3:6],
            "shared": v[6], "scalars": [], "extra_pointers": 0,
            "output": element, "args": args}


def triton_kernel(cc, args, work):
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    # The forward pass of Triton's fused-attention tutorial
    # (python/tutorials/06-fused-attention.py), reduced to one layout
    # ([B*H, L, D] contiguous) and the causal case, as its _attn_fwd_inner
    # computes it: exp2 with the scale folded into log2(e).
    @triton.jit
    def attn_fwd(Q, K, V, O, sm_scale, N_CTX: tl.constexpr,
                 HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                 BLOCK_N: tl.constexpr):
        start_m = tl.program_id(0)
        off_hz = tl.program_id(1)
        base = off_hz * N_CTX * HEAD_DIM
        offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = tl.arange(0, BLOCK_N)
        offs_d = tl.arange(0, HEAD_DIM)
        q = tl.load(Q + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :])
        m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
        l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
        acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
        qk_scale = sm_scale * 1.44269504
        hi = (start_m + 1) * BLOCK_M
        for start_n in range(0, hi, BLOCK_N):
            cols = start_n + offs_n
            k = tl.load(K + base + cols[None, :] * HEAD_DIM + offs_d[:, None])
            qk = tl.dot(q, k) * qk_scale
            qk = tl.where(offs_m[:, None] >= cols[None, :], qk, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            p = tl.math.exp2(qk - m_ij[:, None])
            alpha = tl.math.exp2(m_i - m_ij)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None]
            v = tl.load(V + base + cols[:, None] * HEAD_DIM + offs_d[None, :])
            acc = tl.dot(p.to(v.dtype), v, acc)
            m_i = m_ij
        acc = acc / l_i[:, None]
        tl.store(O + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :],
                 acc.to(O.dtype.element_ty))

    bm, bn = args.block_m, args.block_n
    if L % bm or L % bn:
        raise Failure("the Triton kernel has no edge masks: L = %d must be a "
                      "multiple of its %dx%d tiles" % (L, bm, bn))
    pointer = "*fp16" if args.dtype == "float16" else "*fp32"
    signature = {"Q": pointer, "K": pointer, "V": pointer, "O": pointer,
                 "sm_scale": "fp32"}
    constants = {"N_CTX": L, "HEAD_DIM": D, "BLOCK_M": bm, "BLOCK_N": bn}
    signature.update({x: "constexpr" for x in constants})
    signature = {a: signature[a] for a in attn_fwd.arg_names}
    attrs = {(attn_fwd.arg_names.index(x),): [["tt.divisibility", 16]]
             for x in ["Q", "K", "V", "O"]}
    src = ASTSource(fn=attn_fwd, signature=signature, constexprs=constants,
                    attrs=attrs)
    try:
        compiled = triton.compile(
            src, target=GPUTarget("cuda", cc, 32),
            options={"num_warps": args.num_warps,
                     "num_stages": args.num_stages})
    except Exception as e:  # Triton raises many kinds
        raise Failure("Triton %s cannot compile the attention kernel for CC "
                      "%d: %s" % (triton.__version__, cc, e))
    meta = compiled.metadata
    for scratch in ("global_scratch_size", "profile_scratch_size"):
        if getattr(meta, scratch, 0):
            raise Failure("Triton's kernel needs %s = %d bytes; the emulator "
                          "run passes no scratch buffer"
                          % (scratch, getattr(meta, scratch)))
    ptx_path = os.path.join(work, "triton-attention.cc%d.ptx" % cc)
    with open(ptx_path, "w") as f:
        f.write(compiled.asm["ptx"])
    params = entry_params(compiled.asm["ptx"], meta.name)
    fixed = 5  # Q, K, V, O, sm_scale
    if len(params) < fixed or any(t != "u64" for t, _ in params[fixed:]):
        raise Failure("unexpected parameters of Triton's %s: %s"
                      % (meta.name, params))
    return {"ptx": ptx_path, "name": meta.name,
            "grid": [L // bm, B * H, 1], "block": [meta.num_warps * 32, 1, 1],
            "shared": meta.shared, "scalars": ["f32:%r" % SCALE],
            "extra_pointers": len(params) - fixed,
            "output": "f16" if args.dtype == "float16" else "f32",
            "triton_version": triton.__version__,
            "num_warps": meta.num_warps, "num_stages": meta.num_stages}


def emulate(emu, kernel, paths, work, tag, element):
    import numpy as np
    out = os.path.join(work, "%s.o.bin" % tag)
    stats = os.path.join(work, "%s.stats.json" % tag)
    n = B * H * L * D
    cmd = [emu, kernel["ptx"], "--kernel", kernel["name"],
           "--grid", ",".join(map(str, kernel["grid"])),
           "--block", ",".join(map(str, kernel["block"]))]
    if kernel["shared"]:
        cmd += ["--shared", str(kernel["shared"])]
    for name in ("q", "k", "v"):
        cmd += ["--buffer", "%s:%s:%d:file=%s" % (name, element, n,
                                                  paths[name])]
    cmd += ["--buffer", "o:%s:%d" % (element, n)]
    for arg in kernel.get("args") or ["buf:" + n for n in "qkvo"]:
        cmd += ["--arg", arg]
    for value in kernel["scalars"]:
        cmd += ["--arg", value]
    for _ in range(kernel["extra_pointers"]):
        cmd += ["--arg", "u64:0"]
    cmd += ["--write", "o=" + out, "--stats=json", "--stats-file=" + stats]
    run(cmd, "ridge-emu (%s)" % tag)
    counters = json.load(open(stats))["kernels"][0]
    stored = np.float16 if element == "f16" else np.float32
    return (np.fromfile(out, dtype=stored).astype(np.float32)
            .reshape(B, H, L, D), counters)


def extra_rows(c, ideal):
    gl, gs = c["global"]["load"], c["global"]["store"]
    total = gl["bytes"] + gs["bytes"]
    return [("global bytes / (Q+K+V+O once)", "%.2f" % (total / ideal))]


def print_table(chip, ridge_rows, triton_rows, version, dtype):
    half = dtype == "float16"
    print("== %s: causal attention, B=%d H=%d L=%d D=%d, %s, on ridge-emu "
          "(Triton %s)" % (chip, B, H, L, D, "f16" if half else "f32",
                           version))
    print_columns(ridge_rows, triton_rows)
    if half:
        print("(Ridgeline: 64x64 tiles, %s on f16 Q, K, V and P, K and V "
              "by %s; Triton:\n 64x64 tiles, tl.dot in f16; both f32 "
              "accumulators.)"
              % (("wgmma", "TMA") if chip == "sm_90a"
                 else ("mma.sync", "cp.async")))
    else:
        print("(Ridgeline: 64x64 tiles, %s on Q, K, V and P rounded to "
              "bf16; Triton: 64x64\n tiles, tl.dot in tf32; both on tensor "
              "cores, f32 accumulators.)"
              % ("wgmma" if chip == "sm_90a" else "mma.sync"))
    print()


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Triton %s from PyPI (no GPU needed): build/triton-venv, made "
               "by scripts/deps.sh's ridge_install_triton." % TRITON_PIN)
    parser.add_argument("--chips", default="sm_80,sm_90a",
                        help="comma-separated: %s" % ", ".join(CHIPS))
    parser.add_argument("--model", default=DEFAULT_MODEL,
                        help="the attention model (default %(default)s)")
    parser.add_argument("--bin-dir", default=os.environ.get(
        "RIDGE_BIN_DIR", os.path.join(ROOT, "build", "bin")),
                        help="where ridgec and ridge-emu are")
    parser.add_argument("--num-warps", type=int, default=4)
    parser.add_argument("--num-stages", type=int, default=2)
    parser.add_argument("--block-m", type=int, default=64)
    parser.add_argument("--block-n", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", default="float32",
                        choices=["float32", "float16"],
                        help="both kernels' operands and result (float16: "
                        "the chain exported in f16, unless --model)")
    parser.add_argument("--rtol", type=float, default=1e-2)
    parser.add_argument("--atol", type=float, default=1e-2)
    parser.add_argument("--json", metavar="FILE",
                        help="also write the counters and checks as JSON")
    parser.add_argument("--work-dir", help="keep the PTX, operands, results "
                        "and counters here (default: a temporary folder)")
    args = parser.parse_args()
    return run_comparison(parser, args, compare, "triton-attn-",
                          "triton_attention_side_by_side")


def reference(q, k, v):
    import numpy as np
    s = np.einsum("bhid,bhjd->bhij", q.astype(np.float64),
                  k.astype(np.float64)) * SCALE
    s = np.where(np.tril(np.ones((L, L), dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.einsum("bhij,bhjd->bhid", p, v.astype(np.float64))


def compare(args, chips, ridgec, emu, work):
    import numpy as np
    rng = np.random.default_rng(args.seed)
    half = args.dtype == "float16"
    stored = np.float16 if half else np.float32
    element = "f16" if half else "f32"
    model = args.model
    if half and model == DEFAULT_MODEL:
        try:
            import attention
            model = os.path.join(work, "attention_causal_f16.onnx")
            attention.make_model(model, H, L, L, D, True, "float16")
        except ImportError:
            raise Failure("--dtype float16 needs onnx in this Python, or "
                          "--model a float16 export of the chain "
                          "(test/e2e/Inputs/attention_case.py writes one)")
    data, paths = {}, {}
    for name in ("q", "k", "v"):
        data[name] = rng.standard_normal((B, H, L, D)).astype(stored)
        paths[name] = os.path.join(work, name + "." + element)
        data[name].tofile(paths[name])
    ref = reference(data["q"], data["k"], data["v"])
    # QK^T and PV over all L x L scores (the dense count).
    flops = 4 * B * H * D * L * L
    ideal = 4 * B * H * L * D * np.dtype(stored).itemsize
    report = {"schema": "ridgeline-triton-attention-side-by-side/1",
              "shape": [B, H, L, D], "causal": True, "model": model,
              "dtype": args.dtype,
              "seed": args.seed, "rtol": args.rtol, "atol": args.atol,
              "flops": flops, "ideal_bytes": ideal, "chips": {}}
    failed = False
    for chip in chips:
        target, cc = CHIPS[chip]
        kernels = {"ridgeline": ridgeline_kernel(ridgec, model, target, work,
                                                 element),
                   "triton": triton_kernel(cc, args, work)}
        entry, table = {}, {}
        for who, kernel in kernels.items():
            o, counters = emulate(emu, kernel, paths, work,
                                  "%s.%s" % (who, chip), element)
            result = check(o, ref, args.rtol, args.atol)
            failed |= not result["ok"]
            entry[who] = {"kernel": {x: v for x, v in kernel.items()
                                     if x != "ptx"},
                          "check": result, "counters": counters}
            table[who] = (rows(counters, kernel, result, flops) +
                          extra_rows(counters, ideal))
        report["chips"][chip] = entry
        report["triton_version"] = kernels["triton"]["triton_version"]
        print_table(chip, table["ridgeline"], table["triton"],
                    report["triton_version"], args.dtype)
        sys.stdout.flush()
    if args.json:
        with open(args.json, "w") as f:
            f.write(json.dumps(report, indent=1) + "\n")
    print("numerics: %s" % ("FAIL" if failed else
                            "both kernels pass on every chip"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
