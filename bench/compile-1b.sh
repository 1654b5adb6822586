#!/usr/bin/env bash
# The 1B-parameter model benchmark (not a test): generates a LLaMA-style
# decoder of 1.1B fp16 parameters with its weights as external data
# (python/ridgeline/gen_llama_model.py --preset 1b, TinyLlama's shape, a
# 128-token prefill), compiles it for sm_90a with the weights kept beside the
# artifact, and prints the compile's wall time and peak resident memory
# against the weights' size, the artifact's sizes, and the size of the IR
# text (ridgec --emit=linalg), which must not hold the weights.
# Usage: bench/compile-1b.sh [ridgec] [work dir] [dtype]
#   defaults: build/bin/ridgec, build/bench-1b, fp16
# Targets (issue 12): under 60 s on 2 cores, peak memory under 2x the
# weights. The work dir needs about 5 GB; the model is generated once.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ridgec=${1:-$root/build/bin/ridgec}
work=${2:-$root/build/bench-1b}
dtype=${3:-fp16}
mkdir -p "$work"
model="$work/llama-1b-$dtype"
if [[ ! -f "$model/model.onnx" ]]; then
  echo "== generating $model"
  /usr/bin/python3 "$root/python/ridgeline/gen_llama_model.py" "$model" \
    --preset 1b --dtype "$dtype"
fi
weights=$(stat -c %s "$model/model.weights")
nodes=$(/usr/bin/python3 -c "import onnx; print(len(onnx.load('$model/model.onnx', load_external_data=False).graph.node))")

# Cold page cache is not what is measured: read the weights once first.
cat "$model/model.weights" >/dev/null
out="$work/out"
rm -rf "$out" && mkdir -p "$out"
start=$(date +%s.%N)
/usr/bin/time -f "%M %e %U %S" -o "$out/time" "$ridgec" "$model/model.onnx" \
  --target=sm_90a --weights=external -o "$out/llama.so"
end=$(date +%s.%N)
read -r rss_kb elapsed user sys <"$out/time"
"$ridgec" "$model/model.onnx" --target=sm_90a --emit=linalg -o "$out/llama.mlir"

awk -v w="$weights" -v rss="$rss_kb" -v wall="$(echo "$end - $start" | bc -l)" \
    -v user="$user" -v sys="$sys" -v nodes="$nodes" \
    -v so="$(stat -c %s "$out/llama.so")" \
    -v side="$(stat -c %s "$out/llama.weights")" \
    -v ir="$(stat -c %s "$out/llama.mlir")" 'BEGIN {
  gib = 1024 * 1024 * 1024
  printf "| %-34s | %s |\n", "figure", "value"
  printf "|%s|%s|\n", "------------------------------------", "--------------"
  printf "| %-34s | %d |\n", "ONNX nodes", nodes
  printf "| %-34s | %.2f GiB |\n", "weights (external data)", w / gib
  printf "| %-34s | %.1f s (user %.1f s, sys %.1f s) |\n", "ridgec --target=sm_90a wall time", wall, user, sys
  printf "| %-34s | %.2f GiB (%.2fx the weights) |\n", "peak resident memory", rss * 1024 / gib, rss * 1024 / w
  printf "| %-34s | %.1f MiB |\n", "llama.so", so / 1048576
  printf "| %-34s | %.2f GiB |\n", "llama.weights beside it", side / gib
  printf "| %-34s | %.1f MiB |\n", "IR text (--emit=linalg)", ir / 1048576
}'
