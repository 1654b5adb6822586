#!/usr/bin/env python3
"""Compile everything the GPU check runs into one folder, on a machine without a GPU.

    bench/gpu_bundle.py --out gpu-bundle [--target sm_90a] [--gpu h200]
                        [--quick] [--no-emulator]

A GPU machine lent for a few minutes has no MLIR, LLVM or Debian packages,
so the compiler cannot run there. This script does the compiling here and
writes a folder that `bench/gpu_run.py` runs there with `ridge-exec` (which
links only libridge_runtime):

  bin/ridge-exec, lib/libridge_runtime.so
  models/NAME/model.so (+ model.weights), inputs/input_K.npy,
      ref/output_K.npy (the fixture's ONNX Runtime reference),
      emulator/output_K.npy (the same .so run here on the PTX emulator),
      report.json (ridgec --report=json: kernels and roofline times)
  attention/NAME.so, gemm/NAME.so, gemv/NAME.so (the benchmarks' one-op
      models)
  manifest.json (what each entry is: shapes, FLOPs, bytes, tolerances)

Models: the bundled fixtures with test data (test/models/*), the exporter
fixtures and the shared models except resnet18 (its 46 MB of weights do
not fit the 64 MiB a device call carries) and the dynamic GPT-2 (it needs
--shape). Benchmarks: bench/attention.py's and bench/gemm.py's shapes,
and the bandwidth path's (decode and tall-skinny products) (--quick:
small ones, for a check of the flow on the emulator).
"""
import argparse
import concurrent.futures
import json
import math
import os
import shutil
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attention  # noqa: E402
import gemm  # noqa: E402

# TensorProto's FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ
# (spelled out: Debian's onnx 1.12 predates the names).
FLOAT8_TYPES = (17, 18, 19, 20)

# Left out unless --models names them.
SKIPPED_MODELS = {
    "resnet18": "46 MB of weights: with the rest, over what a device call "
                "carries (bundle it alone: --models resnet18 --no-benchmarks)",
    "gpt2_tiny_dynamic": "one 8.5 MB build per test-data set: with the rest, "
                         "over what a device call carries (--models "
                         "gpt2_tiny_dynamic --no-benchmarks)",
}


def tensor_to_npy(pb_path, npy_path):
    """An ONNX TensorProto file as .npy; bf16 as its raw bits ('<u2')."""
    import onnx
    from onnx import TensorProto, numpy_helper
    tensor = onnx.TensorProto()
    with open(pb_path, "rb") as f:
        tensor.ParseFromString(f.read())
    if tensor.data_type == TensorProto.BFLOAT16:
        if tensor.raw_data:
            array = np.frombuffer(tensor.raw_data, dtype="<u2")
        else:
            array = np.array(tensor.int32_data, dtype=np.uint32).astype("<u2")
        array = array.reshape(tuple(tensor.dims))
    elif tensor.data_type in FLOAT8_TYPES:
        if tensor.raw_data:
            array = np.frombuffer(tensor.raw_data, dtype=np.uint8)
        else:
            array = np.array(tensor.int32_data, dtype=np.uint8)
        array = array.reshape(tuple(tensor.dims))
    else:
        array = numpy_helper.to_array(tensor)
    np.save(npy_path, np.ascontiguousarray(array))


def run(cmd, **kwargs):
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise RuntimeError("%s: exit %d\n%s" % (" ".join(cmd),
                                                result.returncode,
                                                (result.stderr or
                                                 result.stdout)[-2000:]))
    return result.stdout


def compile_model(onnx_path, so_path, target, gpu, extra=()):
    run([os.path.join(BIN, "ridgec"), onnx_path, "--target=" + target,
         "--gpu=" + gpu, "-o", so_path, *extra])


def report(onnx_path, target, gpu, extra=()):
    """ridgec's roofline report: the kernels and their roofline times."""
    text = run([os.path.join(BIN, "ridgec"), onnx_path, "--target=" + target,
                "--gpu=" + gpu, "--report=json", "-o", "-", *extra])
    return json.loads(text)


def predicted_ms(rep):
    """The roofline's time for the fusion plan: the sum over its kernels."""
    return 1e3 * sum(k.get("time_s", 0.0) for k in rep.get("kernels", []))


def dynamic_shapes(onnx_path, data):
    """--shape options from `data`'s inputs when the model's graph inputs
    have dynamic dims (the shapes of that test-data set); [] otherwise."""
    import onnx
    model = onnx.load(onnx_path, load_external_data=False)
    initializers = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in initializers]
    if all(d.HasField("dim_value") and d.dim_value > 0
           for i in inputs for d in i.type.tensor_type.shape.dim):
        return []
    options = []
    for k, value in enumerate(inputs):
        tensor = onnx.TensorProto()
        with open(os.path.join(data, "input_%d.pb" % k), "rb") as f:
            tensor.ParseFromString(f.read())
        options.append("--shape=%s=%s" % (
            value.name, "x".join(str(d) for d in tensor.dims) or "1"))
    return options


def model_fixtures(wanted=()):
    """(name, folder, test-data folder, --shape options) of each fixture
    with a model and test data: set 0, or every set of a dynamic model (one
    build per set, at its shapes). SKIPPED_MODELS only when `wanted`."""
    found = []
    for parent in ("test/models", "test/models/exporter",
                   "test/models/onnx-export"):
        base = os.path.join(ROOT, parent)
        for name in sorted(os.listdir(base)):
            folder = os.path.join(base, name)
            if name in SKIPPED_MODELS and name not in wanted:
                continue
            onnx_path = os.path.join(folder, "model.onnx")
            if not os.path.isfile(onnx_path) or \
                    not os.path.isdir(os.path.join(folder, "test_data_set_0")):
                continue
            sets = sorted(d for d in os.listdir(folder)
                          if d.startswith("test_data_set_"))
            for data in sets:
                shapes = dynamic_shapes(onnx_path, os.path.join(folder, data))
                if not shapes and data != sets[0]:
                    break
                label = name + ("/" + data[len("test_data_"):] if shapes
                                else "")
                found.append((label, folder, os.path.join(folder, data),
                              shapes))
    return found


def bundle_model(name, folder, data, shapes, out, target, gpu, emulate):
    dest = os.path.join(out, "models", name.replace("/", "-"))
    os.makedirs(os.path.join(dest, "inputs"), exist_ok=True)
    os.makedirs(os.path.join(dest, "ref"), exist_ok=True)
    inputs = sorted(f for f in os.listdir(data) if f.startswith("input_"))
    outputs = sorted(f for f in os.listdir(data) if f.startswith("output_"))
    for f in inputs:
        tensor_to_npy(os.path.join(data, f),
                      os.path.join(dest, "inputs", f[:-3] + ".npy"))
    for f in outputs:
        tensor_to_npy(os.path.join(data, f),
                      os.path.join(dest, "ref", f[:-3] + ".npy"))
    onnx_path = os.path.join(folder, "model.onnx")
    so = os.path.join(dest, "model.so")
    entry = {"name": name, "dir": os.path.relpath(dest, out),
             "inputs": ["inputs/" + f[:-3] + ".npy" for f in inputs]}
    try:
        compile_model(onnx_path, so, target, gpu, shapes)
        rep = report(onnx_path, target, gpu, shapes)
        with open(os.path.join(dest, "report.json"), "w") as f:
            json.dump(rep, f)
        entry["kernels"] = len(rep.get("kernels", []))
        # Kernels that round their operands to a 16-bit format (gpu_run.py
        # compares such models at that format's precision).
        entry["rounded"] = any(
            k.get("ceiling") == "tensor" and k.get("precision") != "fp32"
            for k in rep.get("kernels", []))
        entry["predicted_ms"] = predicted_ms(rep)
    except RuntimeError as e:
        entry["error"] = str(e).splitlines()[-1]
        return entry
    if emulate:
        cmd = [os.path.join(BIN, "ridge-exec"), so, "--device=emulator",
               "--save-outputs=" + os.path.join(dest, "emulator")]
        cmd += [os.path.join(dest, i) for i in entry["inputs"]]
        env = dict(os.environ, RIDGE_DEVICE="emulator:" + target)
        try:
            run(cmd, env=env, timeout=1800)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            entry["emulator_error"] = str(e).splitlines()[0][-300:]
    return entry


def bundle_benchmarks(out, target, gpu, quick):
    entries = []
    for kind in ("attention", "kv_append", "gemm", "gemv"):
        os.makedirs(os.path.join(out, kind), exist_ok=True)
    heads = 16
    sizes = [256] if quick else [1024, 4096, 16384]
    dims = [64] if quick else [64, 128]
    decode = [512] if quick else [8192, 65536]
    for dim in dims:
        for size in sizes:
            for causal in (False, True):
                entries.append(("attention", "L%d_D%d%s" % (
                    size, dim, "_causal" if causal else ""),
                    dict(heads=heads, q_len=size, kv_len=size, dim=dim,
                         causal=causal)))
        for size in decode:
            entries.append(("attention", "decode_S%d_D%d" % (size, dim),
                            dict(heads=heads, q_len=1, kv_len=size, dim=dim,
                                 causal=False)))
        # A bfloat16 export (bf16 I/O, as SDPA's): the long shapes and the
        # decode rows again, half the bytes of f32's.
        for size in sizes[-2:]:
            for causal in (False, True):
                entries.append(("attention", "bf16_L%d_D%d%s" % (
                    size, dim, "_causal" if causal else ""),
                    dict(heads=heads, q_len=size, kv_len=size, dim=dim,
                         causal=causal, dtype="bfloat16")))
        for size in decode:
            entries.append(("attention", "bf16_decode_S%d_D%d" % (size, dim),
                            dict(heads=heads, q_len=1, kv_len=size, dim=dim,
                                 causal=False, dtype="bfloat16")))
    # A bf16 decode step with its KV-cache append (16 query heads over 4
    # key heads): the attention kernel reads the cache and writes the
    # concatenations; its bytes (cache read, concatenations written) per
    # kernel time against the copy bandwidth, beside torch's cat + SDPA.
    for dim in dims:
        for size in decode:
            entries.append(("kv_append", "kv_append_S%d_D%d" % (size, dim),
                            dict(heads=heads, kv_heads=4, q_len=1, past=size,
                                 dim=dim, dtype="bfloat16")))
    gemm_sizes = [256] if quick else [4096, 8192, 16384]
    gemm_shapes = [("%d^3" % s, s, s, s) for s in gemm_sizes]
    if not quick:
        gemm_shapes += gemm.MODEL_SHAPES
    gemm_targets = [target] + (["sm_80"] if target == "sm_90a" else [])
    for t in gemm_targets:
        for name, m, n, k in gemm_shapes:
            entries.append(("gemm", "%s_%dx%dx%d" % (t, m, n, k),
                            dict(m=m, n=n, k=k, target=t, label=name,
                                 dtype="bf16")))
    # fp8 (sm_90a's e4m3 wgmma): f32 operands quantized at run time, against
    # torch._scaled_mm; 16384^3 left out (two 1 GiB f32 inputs).
    if target == "sm_90a":
        for name, m, n, k in gemm_shapes:
            if m <= 8192:
                entries.append(("gemm", "fp8_%s_%dx%dx%d" % (target, m, n, k),
                                dict(m=m, n=n, k=k, target=target,
                                     label=name, dtype="fp8")))
    # The bandwidth path (docs/kernel-config.md): decode steps (m at most
    # 16 over a [K, N] weight) and tall-skinny products (n at most 16: a
    # router's logits; few rows over a long k: split into shares), f32 and
    # bf16 (16 bf16 columns take tensor cores), their bytes per second
    # against the copy bandwidth, beside torch.matmul.
    gemv_shapes = [(1, 512, 512), (256, 8, 512), (16, 8, 4096)] if quick \
        else [(1, 4096, 4096), (1, 11008, 4096), (1, 4096, 11008),
              (16, 4096, 4096), (16384, 8, 4096), (4096, 16, 4096),
              (64, 8, 16384)]
    for dtype in ("f32", "bf16"):
        for m, n, k in gemv_shapes:
            entries.append(("gemv", "%s_%dx%dx%d" % (dtype, m, n, k),
                            dict(m=m, n=n, k=k, dtype=dtype)))
    manifest = []
    for kind, name, shape in entries:
        onnx_path = os.path.join(out, kind, name + ".onnx")
        so = os.path.join(out, kind, name + ".so")
        t = shape.pop("target", target)
        if kind == "attention":
            shape.setdefault("dtype", "float32")
            attention.make_model(onnx_path, shape["heads"], shape["q_len"],
                                 shape["kv_len"], shape["dim"], shape["causal"],
                                 shape["dtype"])
            shape["flops"] = 4.0 * shape["heads"] * shape["q_len"] * \
                shape["kv_len"] * shape["dim"] * (0.5 if shape["causal"]
                                                  else 1.0)
        elif kind == "kv_append":
            attention.make_kv_append_model(
                onnx_path, shape["heads"], shape["kv_heads"], shape["q_len"],
                shape["past"], shape["dim"], False, shape["dtype"])
            keys = shape["past"] + shape["q_len"]
            shape["flops"] = 4.0 * shape["heads"] * shape["q_len"] * keys * \
                shape["dim"]
            # The past K and V read, the concatenations written (2 bytes).
            shape["bytes"] = 2 * 2 * shape["kv_heads"] * shape["dim"] * \
                (shape["past"] + keys)
        else:
            gemm.make_model(onnx_path, shape["m"], shape["n"], shape["k"],
                            shape["dtype"])
            shape["flops"] = 2.0 * shape["m"] * shape["n"] * shape["k"]
            if kind == "gemv":
                # A, B and C, each once.
                shape["bytes"] = (4 if shape["dtype"] == "f32" else 2) * (
                    shape["m"] * shape["k"] + shape["k"] * shape["n"] +
                    shape["m"] * shape["n"])
        entry = dict(kind=kind, name=name, so=os.path.relpath(so, out),
                     target=t, **shape)
        flags = gemm.compile_flags(shape.get("dtype", "bf16"))
        try:
            compile_model(onnx_path, so, t, gpu, flags)
            rep = report(onnx_path, t, gpu, flags)
            entry["predicted_ms"] = predicted_ms(rep)
            entry["kernels"] = [k.get("name") for k in rep.get("kernels", [])]
        except RuntimeError as e:
            entry["error"] = str(e).splitlines()[-1]
        os.remove(onnx_path)
        manifest.append(entry)
    return manifest


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--target", default="sm_90a")
    parser.add_argument("--gpu", default="h200")
    parser.add_argument("--quick", action="store_true",
                        help="small benchmark shapes (a check of the flow)")
    parser.add_argument("--no-emulator", action="store_true",
                        help="skip the emulator outputs of the models")
    parser.add_argument("--models", default="",
                        help="comma-separated model names (default: all)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--no-benchmarks", action="store_true",
                        help="models only (no attention or GEMM shapes)")
    args = parser.parse_args()

    out = os.path.abspath(args.out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "bin"))
    os.makedirs(os.path.join(out, "lib"))
    shutil.copy2(os.path.join(BIN, "ridge-exec"), os.path.join(out, "bin"))
    runtime = os.path.join(ROOT, "build", "lib", "Runtime",
                           "libridge_runtime.so")
    shutil.copy2(runtime, os.path.join(out, "lib"))
    for script in ("gpu_run.py", "cuda_timing.py", "gemm.py"):
        shutil.copy2(os.path.join(ROOT, "bench", script), out)

    wanted = set(args.models.split(",")) if args.models else set()
    fixtures = model_fixtures(wanted)
    if wanted:
        fixtures = [f for f in fixtures if f[0].split("/")[0] in wanted]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        models = list(pool.map(
            lambda f: bundle_model(*f, out, args.target, args.gpu,
                                   not args.no_emulator), fixtures))
    for entry in models:
        status = entry.get("error") or entry.get("emulator_error") or "ok"
        print("model %-28s %s" % (entry["name"], status), flush=True)
    benchmarks = [] if args.no_benchmarks else bundle_benchmarks(
        out, args.target, args.gpu, args.quick)
    for entry in benchmarks:
        print("%-9s %-28s %s" % (entry["kind"], entry["name"],
                                 entry.get("error", "ok")), flush=True)
    manifest = {"target": args.target, "gpu": args.gpu,
                "skipped": SKIPPED_MODELS, "models": models,
                "benchmarks": benchmarks}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    size = sum(os.path.getsize(os.path.join(d, f))
               for d, _, files in os.walk(out) for f in files)
    print("bundle %s: %.1f MB" % (out, size / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
