#!/usr/bin/env bash
# Compile-time benchmark (not a test): import -> CPU shared object for every
# model under test/models/onnx-export, pinned to one core, with the compiler's
# peak resident memory next to the model file size.
# Usage: bench/compile-time.sh [ridgec] [models-dir]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ridgec=${1:-$root/build/bin/ridgec}
models=${2:-$root/test/models/onnx-export}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The fixed overhead: peak RSS compiling a model with no weights to speak of.
/usr/bin/time -f "%M" -o "$out/base" taskset -c 0 "$ridgec" \
  "$root/test/models/cast_int/model.onnx" -o "$out/base.so" >/dev/null 2>&1
base_kb=$(tail -1 "$out/base")
echo "fixed overhead (peak RSS compiling test/models/cast_int): $((base_kb / 1024)) MB"
echo
printf "| %-18s | %8s | %9s | %11s | %17s | %s |\n" model "file MB" "compile s" "peak RSS MB" "(RSS-fixed)/file" status
printf "|%s|%s|%s|%s|%s|%s|\n" -------------------- ---------- ----------- ------------- ------------------- --------
for dir in "$models"/*/; do
  name=$(basename "$dir")
  model="$dir/model.onnx"
  [[ -f "$model" ]] || continue
  # Dynamic models are specialized to their first data set, as ridge-run does.
  shapes=()
  if [[ "$name" == *dynamic* ]]; then
    shapes=(--shape input_ids=1x128)
  fi
  size=$(stat -c %s "$model")
  /usr/bin/time -f "%e %M" -o "$out/time" taskset -c 0 \
    "$ridgec" "$model" --target=cpu "${shapes[@]}" -o "$out/$name.so" \
    >"$out/log" 2>&1
  status=$?
  read -r seconds rss_kb < <(tail -1 "$out/time") 2>/dev/null || { seconds=?; rss_kb=0; }
  result=ok
  [[ $status -eq 0 ]] || result="failed: $(grep -m1 error "$out/log" | cut -c1-60)"
  awk -v n="$name" -v s="$size" -v t="$seconds" -v r="$rss_kb" -v b="$base_kb" -v st="$result" \
    'BEGIN { printf "| %-18s | %8.2f | %9s | %11.0f | %17.2f | %s |\n", n, s/1e6, t, r/1024, ((r-b)*1024)/s, st }'
done
