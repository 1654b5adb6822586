"""Checks an emulator report's attention kernels against the bytes of one
pass over K and V per query tile.

  attention_bytes.py REPORT.json HEADS L D causal|full BYTES [REPORT.json ...]

For each attention kernel (Q, K, V, O of [1, HEADS, L, D] stored in elements
of BYTES bytes: 4 for f32, 2 where kernel boundaries store them in bf16)
the ideal of a tiled kernel with 64-row query tiles and 64-key tiles is: Q
read and O written once; per query tile, K and V read once, up to the
tile's last row when causal. Prints `name requested / ideal = ratio`, the tensor-core
instruction count's sign and the bank conflicts, and `over` for a ratio
above 1.2 (issue 15's bound).
"""
import json
import sys

TILE = 64


def ideal_bytes(heads, length, dim, causal, element_bytes):
    row = dim * element_bytes
    total = 2 * heads * length * row  # Q once, O once
    for first in range(0, length, TILE):
        keys = min(length, first + TILE) if causal else length
        total += heads * 2 * keys * row  # K and V of the keys it reads
    return total


def main(args):
    while args:
        path, heads, length, dim, mode, element_bytes = args[:6]
        args = args[6:]
        ideal = ideal_bytes(int(heads), int(length), int(dim), mode == "causal",
                            int(element_bytes))
        for kernel in json.load(open(path))["kernels"]:
            if kernel.get("kind") != "attention":
                continue
            ratio = kernel["requested_bytes"] / ideal
            print("%s %d / %d = %.2f tensor%s conflicts=%d%s" % (
                kernel["name"], kernel["requested_bytes"], ideal, ratio,
                ">0" if kernel["tensor_core_instructions"] > 0 else "=0",
                kernel["shared_bank_conflicts"],
                " over" if ratio > 1.2 else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
