#!/usr/bin/env bash
# The PTX emulator's speed (issue 13): runs the GPU build of shared models
# on the emulator on one core and prints, per model, the whole ridge-run's
# wall time (compile included; the target is gpt2_tiny in at most 60 s) and
# the emulator's own rate, warp instructions per second of emulation, from
# --emulator-report=json. A benchmark, not a test: it asserts nothing.
# Usage: bench/emulator-speed.sh [CHIP] [MODEL...]   (default: sm_80,
#        gpt2_tiny and resnet18 of test/models/onnx-export)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
chip=${1:-sm_80}
shift || true
models=("$@")
[[ ${#models[@]} -gt 0 ]] || models=(gpt2_tiny resnet18)
run=(taskset -c 0)
command -v taskset >/dev/null || run=()
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

printf "%-14s %-7s %10s %14s %12s %14s\n" model chip "wall s" "warp instrs" \
  "emulated s" "M warp/s"
for name in "${models[@]}"; do
  dir="$root/test/models/onnx-export/$name"
  start=$(date +%s.%N)
  "${run[@]}" "$root/build/bin/ridge-run" "$dir/model.onnx" \
    --test-data "$dir/test_data_set_0" --compare --target="$chip" \
    --device=emulator --emulator-report=json -o "$out/$name.json" \
    > "$out/$name.log" 2>&1 || { echo "$name: FAILED"; tail -3 "$out/$name.log"; continue; }
  end=$(date +%s.%N)
  python3 - "$out/$name.json" "$name" "$chip" "$start" "$end" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
name, chip, start, end = sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
warps, seconds = report["warp_instructions"], report["emulated_seconds"]
print("%-14s %-7s %10.2f %14d %12.2f %14.2f" % (
    name, chip, end - start, warps, seconds, warps / seconds / 1e6 if seconds else 0))
PY
done
