#!/usr/bin/env python3
"""Writes the weights file of hand_written_model.c -DWEIGHTS: the 32-byte
ridge_weights_header (ModelAbi.h), then the int64 values 40 and 2 at byte
64, 80 bytes in all; options break it as model-abi-errors.test needs."""

import argparse
import struct


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path")
    parser.add_argument("--fingerprint", type=int, default=42)
    parser.add_argument("--magic", default="RIDGEWTS")
    parser.add_argument("--truncate", type=int, help="keep this many bytes")
    args = parser.parse_args()
    data = bytearray(80)
    data[0:32] = struct.pack("<8sIIQQ", args.magic.encode(), 1, 0,
                             args.fingerprint, 80)
    data[64:80] = struct.pack("<qq", 40, 2)
    if args.truncate is not None:
        data = data[:args.truncate]
    with open(args.path, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
