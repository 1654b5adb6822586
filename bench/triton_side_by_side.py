#!/usr/bin/env python3
"""Ridgeline's bf16 GEMM kernel beside Triton's, on the PTX emulator.

Issue 14, check 6e. For each chip (sm_80 and sm_90a by default) it

  - compiles Ridgeline's GEMM model (test/models/gemm_bf16_1024: C = A x B
    with bf16 operands, f32 accumulation, 1024^3) with `ridgec --emit=ptx`
    and takes the matmul kernel's launch (grid, block, dynamic shared
    memory) from the host code (`ridgec --emit=llvm`, mgpuLaunchKernel);
  - compiles Triton's tl.dot GEMM (bf16 in, f32 out, 128x128x64 tiles,
    --num-warps, --num-stages 3) ahead of time with
    `triton.compile(ASTSource(...), target=GPUTarget("cuda", CC, 32))`
    (no GPU needed), specialized as Triton's launcher would for contiguous
    1024-element rows: unit strides are constants, pointers, sizes and the
    other strides are multiples of 16 (triton/tools/compile.py's hints);
  - runs both kernels with `ridge-emu` on the same random bf16 operands,
    checks both results against NumPy (bf16 operands, exact products in
    f64; |c - ref| <= rtol * |ref| + atol), and reads each launch's
    counters (`ridge-emu --stats=json`, docs/emulator.md "Counters");

and prints one table per chip: rows are the counters (instruction mix,
tensor-core share, global bytes and sectors, footprint, shared-memory
requests and bank conflicts, launch shape), columns Ridgeline and Triton.

Two differences the table does not hide: the ONNX model's MatMul produces
bf16 (then Cast to f32), so Ridgeline's kernel rounds each result to bf16
(the `conversion` instructions of its epilogue), while Triton's stores the
f32 accumulator; and the emulator's shared-memory counters (requests,
wavefronts, bank conflicts) see ld/st.shared and cp.async's shared writes,
not the shared reads of ldmatrix or of wgmma's descriptors, so bank
conflicts there are not counted for either kernel.

Exit status: 0 when both kernels of every chip pass the numerical check,
1 when one fails, 2 when a prerequisite is missing (Triton, NumPy, the
Ridgeline binaries).

Usage: bench/triton_side_by_side.py [--chips sm_80,sm_90a] [--json FILE]
           [--bin-dir build/bin] [--model MODEL.onnx] [--num-warps 4]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODEL = os.path.join(ROOT, "test", "models", "gemm_bf16_1024",
                             "model.onnx")
TRITON_PIN = "3.9.0"
# Chip -> (Ridgeline target, Triton compute capability).
CHIPS = {"sm_80": ("sm_80", 80), "sm_90a": ("sm_90a", 90)}


class Failure(Exception):
    """A prerequisite or a step that failed; `status` is the exit status."""

    def __init__(self, message, status=1):
        super().__init__(message)
        self.status = status


def install_hint():
    return ("install it with:\n  %s -m pip install numpy triton==%s\n"
            "or into build/triton-venv (scripts/deps.sh, ridge_install_triton):"
            "\n  /usr/bin/python3 -m venv build/triton-venv && "
            "build/triton-venv/bin/pip install numpy triton==%s\n"
            "and run this script with build/triton-venv/bin/python"
            % (sys.executable, TRITON_PIN, TRITON_PIN))


def import_prerequisites():
    try:
        import numpy  # noqa: F401
    except ImportError as e:
        raise Failure("NumPy is not importable by %s (%s); %s"
                      % (sys.executable, e, install_hint()), 2)
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    try:
        import triton  # noqa: F401
        from triton.backends.compiler import GPUTarget  # noqa: F401
        from triton.compiler import ASTSource  # noqa: F401
    except ImportError as e:
        raise Failure("Triton is not importable by %s (%s); %s"
                      % (sys.executable, e, install_hint()), 2)


def run(cmd, what):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    if proc.returncode != 0:
        raise Failure("%s failed (exit %d): %s\n%s" % (
            what, proc.returncode, " ".join(cmd),
            (proc.stderr or proc.stdout).strip()[-4000:]))
    return proc.stdout


# --- Ridgeline -------------------------------------------------------------

def gemm_shape(ridgec, model):
    """(M, N, K) of the model's one MatMul, from `ridgec --report=json`."""
    report = json.loads(run([ridgec, model, "--target=sm_80",
                             "--report=json"], "ridgec --report"))
    mats = [op for op in report["ops"] if op["op"] == "MatMul"]
    if len(mats) != 1:
        raise Failure("%s holds %d MatMuls; this script compares one GEMM"
                      % (model, len(mats)))
    m = re.match(r"(\d+)x(\d+)x\w+, (\d+)x(\d+)x\w+ ->", mats[0]["shapes"])
    if not m or m.group(2) != m.group(3):
        raise Failure("cannot read a 2-D GEMM's shape from '%s'"
                      % mats[0]["shapes"])
    return int(m.group(1)), int(m.group(4)), int(m.group(2))


def entry_params(ptx, kernel):
    """The .param lines of `.entry kernel(...)`, as (type, name) pairs."""
    m = re.search(r"\.entry\s+%s\s*\((.*?)\)" % re.escape(kernel), ptx,
                  re.S)
    if not m:
        raise Failure("no .entry %s in the PTX" % kernel)
    params = []
    for decl in m.group(1).split(","):
        words = decl.split()
        if not words or words[0] != ".param":
            continue
        # The element type is the last type word (.align N, .ptr, a state
        # space in between); the name may carry an array size.
        types = [w[1:] for w in words[1:-1] if re.fullmatch(
            r"\.[busf]\d+", w)]
        params.append((types[-1] if types else "", words[-1].split("[")[0]))
    return params


def tensor_maps(llvm, names="ab"):
    """The tensor maps the host code encodes (ridgeTensorMapEncodeTiled, in
    launch-argument order) as ridge-emu `tmap:` specs of the operands
    `names` (a and b of a GEMM; k and v of an attention): type, dims and
    boxes innermost first, the byte strides where they are not dense, the
    swizzle."""
    calls = re.findall(r"call void @ridgeTensorMapEncodeTiled\(ptr %\w+, "
                       r"ptr %\w+, ((?:i\d+ -?\d+(?:, )?)+)\)", llvm)
    types = {6: ("f16", 2), 9: ("bf16", 2)}
    swizzles = {0: "", 1: ":swizzle32", 2: ":swizzle64", 3: ":swizzle128"}
    specs = []
    for name, call in zip(names, calls):
        v = [int(x) for x in re.findall(r"i\d+ (-?\d+)", call)]
        rank, dims, strides, boxes = v[1], v[2:7], v[7:11], v[11:16]
        element, stride = types[v[0]]
        dense = []
        for extent in dims[:rank - 1]:
            stride *= extent
            dense.append(stride)
        given = strides[:rank - 1]
        specs.append("tmap:%s:%s:%s:%s%s%s" % (
            name, element, "x".join(map(str, dims[:rank])),
            "x".join(map(str, boxes[:rank])),
            "" if given == dense else ":strides=" + "x".join(map(str, given)),
            swizzles[v[16]]))
    return specs


def kernel_launch(ridgec, model, target, name, map_names="ab"):
    """Grid (3), block (3) and dynamic shared bytes of Ridgeline's launch of
    kernel `name`, from the host code: the function handle of the kernel's
    name, then mgpuLaunchKernel(handle, gx, gy, gz, bx, by, bz, shmem, ..);
    and the tensor maps of a TMA kernel's operands."""
    llvm = run([ridgec, model, "--target=" + target, "--emit=llvm", "-o",
                "-"], "ridgec --emit=llvm")
    handle = re.search(r"(%\w+) = call ptr @mgpuModuleGetFunction\(ptr %\w+, "
                       r"ptr @\w*_" + re.escape(name) + r"_name\)", llvm)
    launch = handle and re.search(
        r"call void @mgpuLaunchKernel\(ptr " + re.escape(handle.group(1)) +
        r", i64 (\d+), i64 (\d+), i64 (\d+), i64 (\d+), i64 (\d+), "
        r"i64 (\d+), i32 (\d+)", llvm)
    if not launch:
        raise Failure("cannot find the launch of %s in Ridgeline's host code"
                      % name)
    return [int(x) for x in launch.groups()], tensor_maps(llvm, map_names)


def ridgeline_kernel(ridgec, model, target, work):
    """Ridgeline's matmul kernel for `target`: PTX path, name, launch."""
    ptx_path = os.path.join(work, "ridgeline.%s.ptx" % target)
    run([ridgec, model, "--target=" + target, "--emit=ptx", "-o", ptx_path],
        "ridgec --emit=ptx")
    ptx = open(ptx_path).read()
    names = [n for n in re.findall(r"\.entry\s+(\w+)", ptx) if "matmul" in n]
    if len(names) != 1:
        raise Failure("expected one matmul kernel in Ridgeline's %s PTX, "
                      "found %s" % (target, names or "none"))
    name = names[0]
    params = entry_params(ptx, name)
    v, maps = kernel_launch(ridgec, model, target, name)
    # sm_90a's TMA kernel (mma_tma) takes A and B as tensor maps (128-byte
    # __grid_constant__ parameters) and C as a pointer; the others three
    # pointers.
    expected = ["b8", "b8", "u64"] if maps else ["u64"] * 3
    if [t for t, _ in params] != expected or (maps and len(maps) != 2):
        raise Failure("%s takes %s; expected %s" % (name, params, expected))
    return {"ptx": ptx_path, "name": name, "grid": v[0:3], "block": v[3:6],
            "shared": v[6], "scalars": [], "extra_pointers": 0,
            "output": "bf16 -> f32", "tensor_maps": maps}


# --- Triton ----------------------------------------------------------------

def triton_kernel(cc, m, n, k, args, work):
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm,
                      scn, BM: tl.constexpr, BN: tl.constexpr,
                      BK: tl.constexpr):
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
        b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for _ in range(0, K, BK):
            acc += tl.dot(tl.load(a), tl.load(b))
            a += BK * sak
            b += BK * sbk
        tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc)

    bm, bn, bk = args.block_m, args.block_n, args.block_k
    if m % bm or n % bn or k % bk:
        raise Failure("the Triton kernel has no edge masks: M, N, K (%d, %d, "
                      "%d) must be multiples of its %dx%dx%d tiles"
                      % (m, n, k, bm, bn, bk))
    # Specialized as Triton's launcher would for row-major contiguous
    # operands: unit strides become constants, the other integers and the
    # pointers carry the divisibility-by-16 hint.
    ints = ["M", "N", "K", "sam", "sbk", "scm"]
    signature = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*fp32"}
    signature.update({x: "i32" for x in ints})
    constants = {"sak": 1, "sbn": 1, "scn": 1, "BM": bm, "BN": bn, "BK": bk}
    signature.update({x: "constexpr" for x in constants})
    signature = {a: signature[a] for a in matmul_kernel.arg_names}
    attrs = {(matmul_kernel.arg_names.index(x),): [["tt.divisibility", 16]]
             for x in ["a_ptr", "b_ptr", "c_ptr"] + ints}
    src = ASTSource(fn=matmul_kernel, signature=signature,
                    constexprs=constants, attrs=attrs)
    try:
        compiled = triton.compile(
            src, target=GPUTarget("cuda", cc, 32),
            options={"num_warps": args.num_warps,
                     "num_stages": args.num_stages})
    except Exception as e:  # Triton raises many kinds
        raise Failure("Triton %s cannot compile the GEMM for CC %d: %s"
                      % (triton.__version__, cc, e))
    meta = compiled.metadata
    for scratch in ("global_scratch_size", "profile_scratch_size"):
        if getattr(meta, scratch, 0):
            raise Failure("Triton's kernel needs %s = %d bytes; the emulator "
                          "run passes no scratch buffer"
                          % (scratch, getattr(meta, scratch)))
    ptx_path = os.path.join(work, "triton.cc%d.ptx" % cc)
    with open(ptx_path, "w") as f:
        f.write(compiled.asm["ptx"])
    params = entry_params(compiled.asm["ptx"], meta.name)
    # a, b, c, then the i32s in order; Triton 3.x appends its scratch
    # pointers (global, profile), passed as null since their sizes are 0.
    scalars = [m, n, k, k, n, n]
    fixed = 3 + len(scalars)
    if len(params) < fixed or any(t != "u64" for t, _ in params[fixed:]):
        raise Failure("unexpected parameters of Triton's %s: %s"
                      % (meta.name, params))
    return {"ptx": ptx_path, "name": meta.name,
            "grid": [m // bm, n // bn, 1], "block": [meta.num_warps * 32, 1, 1],
            "shared": meta.shared, "scalars": scalars,
            "extra_pointers": len(params) - fixed, "output": "f32",
            "triton_version": triton.__version__,
            "num_warps": meta.num_warps, "num_stages": meta.num_stages}


# --- The emulator run and the check -----------------------------------------

def emulate(emu, kernel, m, n, k, a_path, b_path, work, tag):
    import numpy as np
    out = os.path.join(work, "%s.c.bin" % tag)
    stats = os.path.join(work, "%s.stats.json" % tag)
    cmd = [emu, kernel["ptx"], "--kernel", kernel["name"],
           "--grid", ",".join(map(str, kernel["grid"])),
           "--block", ",".join(map(str, kernel["block"]))]
    if kernel["shared"]:
        cmd += ["--shared", str(kernel["shared"])]
    cmd += ["--buffer", "a:bf16:%d:file=%s" % (m * k, a_path),
            "--buffer", "b:bf16:%d:file=%s" % (k * n, b_path),
            "--buffer", "c:f32:%d" % (m * n)]
    for spec in kernel.get("tensor_maps") or ["buf:a", "buf:b"]:
        cmd += ["--arg", spec]
    cmd += ["--arg", "buf:c"]
    for value in kernel["scalars"]:
        cmd += ["--arg", "u32:%d" % value]
    for _ in range(kernel["extra_pointers"]):
        cmd += ["--arg", "u64:0"]
    cmd += ["--write", "c=" + out, "--stats=json", "--stats-file=" + stats]
    run(cmd, "ridge-emu (%s)" % tag)
    counters = json.load(open(stats))["kernels"][0]
    return np.fromfile(out, dtype=np.float32).reshape(m, n), counters


def check(c, ref, rtol, atol):
    import numpy as np
    err = np.abs(c.astype(np.float64) - ref)
    bad = int(np.count_nonzero(err > rtol * np.abs(ref) + atol))
    return {"ok": bad == 0 and bool(np.all(np.isfinite(c))),
            "mismatches": bad, "max_abs_error": float(err.max()),
            "max_rel_error": float(err.max() / max(np.abs(ref).max(), 1e-30))}


# --- The table ---------------------------------------------------------------

def rows(c, kernel, result, flops):
    """(metric, value) pairs of one kernel, in table order."""
    ins = c["instructions"]
    gl, gs = c["global"]["load"], c["global"]["store"]
    sl, ss = c["shared"]["load"], c["shared"]["store"]
    return [
        ("kernel", kernel["name"]),
        ("numerics (rtol/atol check)", "PASS" if result["ok"] else
         "FAIL (%d)" % result["mismatches"]),
        ("max |error| / max |ref|", "%.2e" % result["max_rel_error"]),
        ("result stored as", kernel["output"]),
        ("grid", "x".join(map(str, c["grid"]))),
        ("threads per block", c["block"][0] * c["block"][1] * c["block"][2]),
        ("shared memory per block (B)",
         c["shared_static_bytes"] + c["shared_dynamic_bytes"]),
        ("registers (PTX virtual)", c["registers"]),
        ("warp instructions", c["warp_instructions"]),
        ("  tensor core", ins["tensor_core"]),
        ("  integer", ins["integer"]),
        ("  fp32", ins["fp32"]),
        ("  conversion", ins["conversion"]),
        ("  global load (incl. cp.async)", ins["global_load"]),
        ("  global store", ins["global_store"]),
        ("  shared load (incl. ldmatrix)", ins["shared_load"]),
        ("  shared store", ins["shared_store"]),
        ("  barrier", ins["barrier"]),
        ("  shuffle/vote", ins["shuffle_vote"]),
        ("  control", ins["control"]),
        ("  other (mov, ld.param, ...)", ins["other"]),
        ("tensor-core FLOP share", "%.4f" % (c["tensor_core_flops"] / flops)),
        ("global load bytes", gl["bytes"]),
        ("global store bytes", gs["bytes"]),
        ("global load sectors", gl["sectors"]),
        ("global store sectors", gs["sectors"]),
        ("footprint load+store (B)", gl["footprint_bytes"] +
         gs["footprint_bytes"]),
        ("shared load requests", sl["requests"]),
        ("shared store requests", ss["requests"]),
        ("shared load bank conflicts", sl["bank_conflicts"]),
        ("shared store bank conflicts", ss["bank_conflicts"]),
    ]


def print_columns(ridge_rows, triton_rows):
    """The (metric, value) rows of both kernels side by side."""
    width = max(len(r[0]) for r in ridge_rows)
    cols = [max(len("Ridgeline"), *(len(str(r[1])) for r in ridge_rows)),
            max(len("Triton"), *(len(str(r[1])) for r in triton_rows))]
    line = "%-*s  %*s  %*s"
    print(line % (width, "metric", cols[0], "Ridgeline", cols[1], "Triton"))
    for (name, rv), (_, tv) in zip(ridge_rows, triton_rows):
        print(line % (width, name, cols[0], rv, cols[1], tv))


def print_table(chip, m, n, k, ridge_rows, triton_rows, version):
    print("== %s: %dx%dx%d bf16 GEMM, f32 accumulation, on ridge-emu "
          "(Triton %s)" % (chip, m, n, k, version))
    print_columns(ridge_rows, triton_rows)
    print("(bf16 -> f32: the model's MatMul is bf16, then Cast to f32. Shared "
          "requests and bank\n conflicts count ld/st.shared, ldmatrix and "
          "cp.async's shared writes; the emulator does\n not count wgmma's "
          "descriptor reads there.)")
    print()


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Triton %s from PyPI (no GPU needed): build/triton-venv, made "
               "by scripts/deps.sh's ridge_install_triton." % TRITON_PIN)
    parser.add_argument("--chips", default="sm_80,sm_90a",
                        help="comma-separated: %s" % ", ".join(CHIPS))
    parser.add_argument("--model", default=DEFAULT_MODEL,
                        help="Ridgeline's GEMM model (one MatMul of bf16 "
                             "operands; default %(default)s)")
    parser.add_argument("--bin-dir", default=os.environ.get(
        "RIDGE_BIN_DIR", os.path.join(ROOT, "build", "bin")),
                        help="where ridgec and ridge-emu are "
                             "(default: $RIDGE_BIN_DIR or build/bin)")
    parser.add_argument("--num-warps", type=int, default=4)
    parser.add_argument("--num-stages", type=int, default=3)
    parser.add_argument("--block-m", type=int, default=128)
    parser.add_argument("--block-n", type=int, default=128)
    parser.add_argument("--block-k", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rtol", type=float, default=1e-2)
    parser.add_argument("--atol", type=float, default=1e-3)
    parser.add_argument("--json", metavar="FILE",
                        help="also write the counters, launches and checks "
                             "as JSON to FILE ('-': standard output, "
                             "instead of the tables)")
    parser.add_argument("--work-dir", help="keep the PTX, operands, results "
                        "and counters here (default: a temporary folder)")
    args = parser.parse_args()

    return run_comparison(parser, args, compare, "triton-sbs-",
                          "triton_side_by_side")


def run_comparison(parser, args, compare, prefix, tool):
    """Checks the chips, the prerequisites and the Ridgeline binaries, then
    runs compare(args, chips, ridgec, emu, work) in --work-dir or a
    temporary folder; a Failure becomes its message and exit status."""
    chips = [c.strip() for c in args.chips.split(",") if c.strip()]
    for chip in chips:
        if chip not in CHIPS:
            parser.error("unknown chip '%s' (known: %s)"
                         % (chip, ", ".join(CHIPS)))
    try:
        import_prerequisites()
        ridgec = os.path.join(args.bin_dir, "ridgec")
        emu = os.path.join(args.bin_dir, "ridge-emu")
        for tool_path in (ridgec, emu):
            if not os.access(tool_path, os.X_OK):
                raise Failure("%s is missing: build Ridgeline (scripts/"
                              "build.sh) or pass --bin-dir" % tool_path, 2)
        if not os.path.exists(args.model):
            raise Failure("no model %s" % args.model, 2)
        if args.work_dir:
            os.makedirs(args.work_dir, exist_ok=True)
            return compare(args, chips, ridgec, emu, args.work_dir)
        with tempfile.TemporaryDirectory(prefix=prefix) as work:
            return compare(args, chips, ridgec, emu, work)
    except Failure as e:
        print("%s: error: %s" % (tool, e), file=sys.stderr)
        return e.status


def compare(args, chips, ridgec, emu, work):
    import numpy as np
    m, n, k = gemm_shape(ridgec, args.model)
    rng = np.random.default_rng(args.seed)

    def bf16_bits(x):  # round to nearest even
        u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
        return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)

    a_bits = bf16_bits(rng.uniform(-1, 1, (m, k)))
    b_bits = bf16_bits(rng.uniform(-1, 1, (k, n)))
    a_path, b_path = os.path.join(work, "a.bf16"), os.path.join(work, "b.bf16")
    a_bits.tofile(a_path)
    b_bits.tofile(b_path)
    widen = lambda bits: (bits.astype(np.uint32) << 16).view(np.float32)
    ref = widen(a_bits).astype(np.float64) @ widen(b_bits).astype(np.float64)
    flops = 2 * m * n * k

    report = {"schema": "ridgeline-triton-side-by-side/1",
              "m": m, "n": n, "k": k, "model": args.model, "seed": args.seed,
              "rtol": args.rtol, "atol": args.atol, "chips": {}}
    failed = False
    for chip in chips:
        target, cc = CHIPS[chip]
        kernels = {"ridgeline": ridgeline_kernel(ridgec, args.model, target,
                                                 work),
                   "triton": triton_kernel(cc, m, n, k, args, work)}
        entry, table = {}, {}
        for who, kernel in kernels.items():
            c, counters = emulate(emu, kernel, m, n, k, a_path, b_path, work,
                                  "%s.%s" % (who, chip))
            result = check(c, ref, args.rtol, args.atol)
            failed |= not result["ok"]
            entry[who] = {"kernel": {x: v for x, v in kernel.items()
                                     if x != "ptx"},
                          "check": result, "counters": counters,
                          "tensor_core_flop_share":
                              counters["tensor_core_flops"] / flops}
            table[who] = rows(counters, kernel, result, flops)
        report["chips"][chip] = entry
        report["triton_version"] = kernels["triton"]["triton_version"]
        if args.json != "-":
            print_table(chip, m, n, k, table["ridgeline"], table["triton"],
                        report["triton_version"])
            sys.stdout.flush()
    if args.json:
        text = json.dumps(report, indent=1)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w") as f:
                f.write(text + "\n")
    if args.json != "-":
        print("numerics: %s" % ("FAIL" if failed else
                                "both kernels pass on every chip"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
