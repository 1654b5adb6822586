"""Writes the PTX of the first gpu.binary in an MLIR file (gpu-module-to-binary
format=isa) to a file, undoing MLIR's string escapes."""
import re
import sys

text = open(sys.argv[1]).read()
match = re.search(r'gpu\.binary @\w+\s+\[#gpu\.object<.*?assembly = "(.*?)">',
                  text, re.S)
if not match:
    sys.exit("extract_ptx: no gpu.binary with PTX assembly in " + sys.argv[1])
ptx = re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)),
             match.group(1))
with open(sys.argv[2], "w") as f:
    f.write(ptx)
