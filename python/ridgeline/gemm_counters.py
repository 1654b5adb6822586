#!/usr/bin/env python3
"""Checks a tensor-core GEMM kernel's emulator counters against its tiling.

Reads `ridge-run --emulator-report=json` and, for the named kernel of an
M x N x K product computed in BM x BN block tiles, prints and checks:

  - shared-memory bank conflicts: none;
  - tensor-core share: the FLOPs of its tensor-core instructions (the
    emulator's tensor_core_flops: mma.sync or wgmma) over the product's
    2 * M * N * K, at least 99%;
  - global bytes requested over the tiling's ideal, at most 1.3: each
    A tile read once per block column (N / BN times), each B tile once per
    block row (M / BM times), the result written once.

Exit status 1 when a check fails (the lit test fails with it).
"""
import argparse
import json
import math
import sys

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report")
    parser.add_argument("--kernel", required=True)
    parser.add_argument("--m", type=int, required=True)
    parser.add_argument("--n", type=int, required=True)
    parser.add_argument("--k", type=int, required=True)
    parser.add_argument("--tile-m", type=int, required=True)
    parser.add_argument("--tile-n", type=int, required=True)
    parser.add_argument("--operand-bytes", type=int, default=2,
                        help="bytes per A/B element in global memory")
    parser.add_argument("--result-bytes", type=int, default=4)
    args = parser.parse_args()

    report = json.load(open(args.report))
    kernel = next((k for k in report["kernels"] if k["name"] == args.kernel),
                  None)
    if kernel is None:
        sys.exit("no kernel '%s' in %s" % (args.kernel, args.report))
    flops = 2 * args.m * args.n * args.k
    tensor_flops = kernel["tensor_core_flops"]
    ideal = (args.m * args.k * args.operand_bytes *
             math.ceil(args.n / args.tile_n) +
             args.k * args.n * args.operand_bytes *
             math.ceil(args.m / args.tile_m) +
             args.m * args.n * args.result_bytes)
    checks = [
        ("shared bank conflicts", kernel["shared_bank_conflicts"], "== 0",
         kernel["shared_bank_conflicts"] == 0),
        ("tensor-core share of FLOPs", "%.4f" % (tensor_flops / flops),
         ">= 0.99", tensor_flops >= 0.99 * flops),
        ("global bytes requested", kernel["requested_bytes"], "", True),
        ("tiling's ideal bytes", ideal, "", True),
        ("requested / ideal", "%.3f" % (kernel["requested_bytes"] / ideal),
         "<= 1.3", kernel["requested_bytes"] <= 1.3 * ideal),
    ]
    failed = False
    print("%s: %dx%dx%d in %dx%d tiles" % (args.kernel, args.m, args.n,
                                           args.k, args.tile_m, args.tile_n))
    for name, value, bound, ok in checks:
        status = "" if not bound else ("ok" if ok else "FAIL")
        print("  %-28s %14s  %-8s %s" % (name, value, bound, status))
        failed |= not ok
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
