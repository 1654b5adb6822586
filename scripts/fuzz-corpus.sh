#!/usr/bin/env bash
# Collects the seed corpus of ridge-fuzz-import into DIR: the repository's
# ONNX fixtures (test/models/**/model.onnx and test/models/bad/*.onnx) up to
# 64 KiB each, each named after its path. The larger exported models are
# left out: they slow every mutation down and add no op the small ones lack.
#   scripts/fuzz-corpus.sh DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: scripts/fuzz-corpus.sh DIR}
mkdir -p "$out"
count=0
while IFS= read -r model; do
  rel=${model#"$root/test/models/"}
  cp "$model" "$out/${rel//\//_}"
  count=$((count + 1))
done < <(find "$root/test/models" \( -path '*/bad/*.onnx' -o -name model.onnx \) \
           -size -65537c | sort)
echo "$count seeds in $out"
