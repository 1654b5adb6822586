#!/usr/bin/env bash
# Compile-time scaling benchmark (not a test): compiles generated chains of
# elementwise nodes and generated transformer stacks
# (python/ridgeline/gen_scaling_models.py) for the CPU and for sm_90a, pinned
# to one core, and prints wall time and peak resident memory per size, with
# the exponent k of time ~ size^k fitted over each family (least squares on
# log-log). Linear growth is k = 1.
# Usage: bench/compile-scaling.sh [ridgec] [chain sizes] [layer counts]
#   e.g. bench/compile-scaling.sh build/bin/ridgec "1000 10000 100000" "2 8 32"
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ridgec=${1:-$root/build/bin/ridgec}
chains=${2:-1000 10000 100000}
layers=${3:-2 8 32}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

/usr/bin/python3 "$root/python/ridgeline/gen_scaling_models.py" "$out" chain $chains
/usr/bin/python3 "$root/python/ridgeline/gen_scaling_models.py" "$out" transformer $layers

# measure FAMILY TARGET SIZES...: one table row per size, then the exponent.
measure() {
  local family=$1 target=$2
  shift 2
  local points=()
  for size in "$@"; do
    local model="$out/${family}_$size.onnx"
    local start end status
    start=$(date +%s.%N)
    /usr/bin/time -f "%M" -o "$out/rss" taskset -c 0 "$ridgec" "$model" \
      --target="$target" -o "$out/model.so" >"$out/log" 2>&1
    status=$?
    end=$(date +%s.%N)
    local seconds rss
    seconds=$(echo "$end - $start" | bc -l)
    rss=$(($(tail -1 "$out/rss") / 1024))
    local nodes
    nodes=$(/usr/bin/python3 -c "import onnx,sys; print(len(onnx.load('$model', load_external_data=False).graph.node))")
    printf "| %-11s | %6s | %6s | %7s | %9.2f | %11s | %s |\n" "$family" "$size" \
      "$target" "$nodes" "$seconds" "$rss" \
      "$([ $status -eq 0 ] && echo ok || echo "FAILED ($status): $(tail -1 "$out/log")")"
    [ $status -eq 0 ] && points+=("$nodes $seconds")
  done
  printf "%s\n" "${points[@]}" | /usr/bin/python3 -c '
import math, sys
pts = [tuple(map(float, l.split())) for l in sys.stdin if l.strip()]
if len(pts) >= 2:
    xs = [math.log(n) for n, _ in pts]; ys = [math.log(max(t, 1e-3)) for _, t in pts]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    k = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    print("fitted exponent (%s, %s): time ~ nodes^%.2f" % (sys.argv[1], sys.argv[2], k))
' "$family" "$target"
}

printf "| %-11s | %6s | %6s | %7s | %9s | %11s | %s |\n" family size target nodes "seconds" "peak RSS MB" status
printf "|%s|%s|%s|%s|%s|%s|%s|\n" ------------- -------- -------- --------- ----------- ------------- --------
for target in cpu sm_90a; do
  # shellcheck disable=SC2086
  measure chain "$target" $chains
  # shellcheck disable=SC2086
  measure transformer "$target" $layers
done
