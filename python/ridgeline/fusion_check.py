#!/usr/bin/env python3
"""Check a fusion plan's numbers from a `ridgec --report=json` file.

    fusion_check.py REPORT.json [--max-kernels N] [--max-activation-ratio R]
                    [--launches FILE] [--name NAME]

Prints one row: the number of kernels, the modeled traffic of one kernel per
ONNX node, of the fused plan and of the lower bound (graph inputs, weights and
outputs once), the weights read (an embedding table: the rows gathered), and
the activation-traffic ratio (fused - weights read) / (per node - weights
read). Exits 1, naming the number, when a
limit is broken. `--launches FILE` holds the number of kernel launches the
GPU build makes (e.g. `grep -c mgpuLaunchKernel` of `ridgec --emit=llvm`),
which must equal the plan's kernel count: one launch a kernel (a split-K
kernel's last block of a tile adds the partial sums). Standard library
only.
"""

import argparse
import json
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report")
    parser.add_argument("--name", help="row label (default: the model path)")
    parser.add_argument("--max-kernels", type=int)
    parser.add_argument("--max-activation-ratio", type=float)
    parser.add_argument("--launches", help="file holding the launch count")
    args = parser.parse_args(argv)

    with open(args.report) as f:
        report = json.load(f)
    if "kernels" not in report or "traffic" not in report:
        print("%s: error: no fusion plan in the report" % args.report,
              file=sys.stderr)
        return 1
    kernels = len(report["kernels"])
    traffic = report["traffic"]
    # The weights the kernels read (an embedding table: the rows gathered),
    # as the traffic counts them; reports before weights_read_bytes: all.
    weights = traffic.get("weights_read_bytes", traffic["weights_bytes"])
    per_node = traffic["per_node_bytes"]
    fused = traffic["fused_bytes"]
    activations = per_node - weights
    ratio = (fused - weights) / activations if activations > 0 else 0.0
    name = args.name or report.get("model", args.report)
    print("%s: kernels %d, per-node %.2f MB, fused %.2f MB, lower bound "
          "%.2f MB, weights read %.2f MB, activation ratio %.3f"
          % (name, kernels, per_node / 1e6, fused / 1e6,
             traffic["lower_bound_bytes"] / 1e6, weights / 1e6, ratio))

    problems = []
    if args.max_kernels is not None and kernels > args.max_kernels:
        problems.append("%d kernels > %d" % (kernels, args.max_kernels))
    if (args.max_activation_ratio is not None
            and ratio > args.max_activation_ratio):
        problems.append("activation ratio %.3f > %.3f"
                        % (ratio, args.max_activation_ratio))
    if args.launches:
        with open(args.launches) as f:
            launches = int(f.read().split()[0])
        if launches != kernels:
            problems.append("the GPU build launches %d kernels, the plan has "
                            "%d" % (launches, kernels))
    for problem in problems:
        print("%s: error: %s" % (name, problem), file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
