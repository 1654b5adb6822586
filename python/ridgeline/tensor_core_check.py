#!/usr/bin/env python3
"""Checks that the kernels the roofline report puts on tensor cores are.

For each model and chip: `ridgec --report=json` says which kernels are
contractions (or attentions) on the tensor-core ceiling; `ridgec --emit=ptx`, `ptxas -v` and
`nvdisasm` say what was built. Every such kernel must (issue 14, check 6):

  - PTX: `mma.sync` (sm_80) or `wgmma.mma_async` (sm_90a) in one of its
    launches (a kernel is one entry, `<name>_kernel`, or several: split-K's
    second launch and fp8's scale launches are `<name>_kernel_<i>`);
  - SASS: HMMA (sm_80), HGMMA or QGMMA (sm_90a) in one of its launches;
  - no local-memory traffic (LDL/STL) in any of its launches;
  - 0 spill bytes from `ptxas -v` for every entry of the module.

Contractions the report places on the SIMT ceiling (f32 by policy, the GEMV
bandwidth path, depthwise convolutions) are listed, not checked. Prints one
line per kernel and a summary per model and chip; exit status 1 when a check
fails (the lit test fails with it).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

MMA_PTX = {"sm_80": ("mma.sync.aligned",), "sm_90a": ("wgmma.mma_async",)}
MMA_SASS = {"sm_80": ("HMMA",), "sm_90a": ("HGMMA", "QGMMA")}


def run(cmd):
    result = subprocess.run(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        sys.exit("%s failed (%d):\n%s" % (" ".join(cmd), result.returncode,
                                          result.stdout))
    return result.stdout


def split_functions(text, start):
    """Maps each function of a PTX or SASS listing to its lines: `start`
    matches a function's first line and captures its name."""
    functions, name = {}, None
    for line in text.splitlines():
        match = start.match(line)
        if match:
            name = match.group(1)
            functions[name] = []
        elif name:
            functions[name].append(line)
    return functions


def launches(functions, kernel):
    pattern = re.compile(re.escape(kernel) + r"_kernel(_\d+)?$")
    return [name for name in functions if pattern.match(name)]


def check(args, model, chip, work):
    stem = os.path.join(work, "%s.%s" % (os.path.basename(
        os.path.dirname(model)), chip))
    options = ["--target=" + chip] + (["--precision=" + args.precision]
                                      if args.precision else [])
    run([args.ridgec, model, "--report=json", "-o", stem + ".json"] + options)
    run([args.ridgec, model, "--emit=ptx", "-o", stem + ".ptx"] + options)
    ptxas = run([args.ptxas, "-v", "-arch=" + chip, stem + ".ptx", "-o",
                 stem + ".cubin"])
    sass = run([args.nvdisasm, stem + ".cubin"])
    ptx = split_functions(open(stem + ".ptx").read(),
                          re.compile(r"^\.visible \.entry (\w+)\("))
    code = split_functions(sass, re.compile(r"^\s*\.text\.(\w+):"))
    spills = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads",
                        ptxas)
    report = json.load(open(stem + ".json"))
    failures = []
    tensor = simt = 0
    name = os.path.basename(os.path.dirname(model))
    for kernel in report["kernels"]:
        if kernel["kind"] not in ("contraction", "attention"):
            continue
        if kernel["ceiling"] != "tensor":
            simt += 1
            print("%s %s %s: %s ceiling, %s (not checked)" %
                  (name, chip, kernel["name"], kernel["ceiling"],
                   kernel["precision"]))
            continue
        tensor += 1
        entries = launches(ptx, kernel["name"])
        # The attention kernel multiplies with mma.sync on both chips.
        ptx_ops = MMA_PTX[chip] + (MMA_PTX["sm_80"]
                                   if kernel["kind"] == "attention" else ())
        sass_ops = MMA_SASS[chip] + (MMA_SASS["sm_80"]
                                     if kernel["kind"] == "attention" else ())
        mma_ptx = sum(line.count(op) for e in entries for line in ptx[e]
                      for op in ptx_ops)
        mma_sass = sum(1 for e in entries for line in code.get(e, [])
                       if any(op in line for op in sass_ops))
        local = sum(1 for e in entries for line in code.get(e, [])
                    if re.search(r"\b(LDL|STL)\b", line))
        problems = []
        if not entries:
            problems.append("no PTX entry")
        if mma_ptx == 0:
            problems.append("no %s in PTX" % "/".join(ptx_ops))
        if mma_sass == 0:
            problems.append("no %s in SASS" % "/".join(sass_ops))
        if local:
            problems.append("%d LDL/STL" % local)
        print("%s %s %s: %s %s, %d launch(es), PTX mma %d, SASS mma %d, "
              "LDL/STL %d: %s" % (name, chip, kernel["name"], kernel["kind"],
                                  kernel["precision"], len(entries), mma_ptx,
                                  mma_sass, local,
                                  "; ".join(problems) if problems else "ok"))
        failures += ["%s %s %s: %s" % (name, chip, kernel["name"], p)
                     for p in problems]
    spilled = [s for s in spills if s != ("0", "0")]
    if spilled:
        failures.append("%s %s: %d entries spill" % (name, chip, len(spilled)))
    print("%s %s: %d tensor-core kernels, %d SIMT ones, %d entries, "
          "%d spilling" % (name, chip, tensor, simt, len(spills),
                           len(spilled)))
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", help="model.onnx files")
    parser.add_argument("--ridgec", required=True)
    parser.add_argument("--ptxas", required=True)
    parser.add_argument("--nvdisasm", required=True)
    parser.add_argument("--chips", default="sm_80,sm_90a")
    parser.add_argument("--precision", help="ridgec --precision")
    args = parser.parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as work:
        for model in args.models:
            for chip in args.chips.split(","):
                failures += check(args, model, chip, work)
    for failure in failures:
        print("FAIL " + failure)
    print("%s" % ("FAILED: %d" % len(failures) if failures else "PASSED"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
