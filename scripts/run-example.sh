#!/usr/bin/env bash
# The main job on the bundled example (test/models/mlp_small): compile it for
# sm_90a (PTX + GPU shared object) and for the CPU, run it on the CPU against
# its reference outputs, and summarize what was produced.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/deps.sh"
ridge_install_deps
ridge_build >/dev/null

model="$root/test/models/mlp_small/model.onnx"
data="$root/test/models/mlp_small/test_data_set_0"
out="$root/build/example"
mkdir -p "$out"
bin="$root/build/bin"

start=$(date +%s.%N)
"$bin/ridgec" "$model" --target=cpu -o "$out/mlp_small.cpu.so"
"$bin/ridgec" "$model" --target=sm_90a -o "$out/mlp_small.sm_90a.so"
"$bin/ridgec" "$model" --target=sm_90a --emit=ptx -o "$out/mlp_small.sm_90a.ptx"
"$bin/ridgec" "$model" --target=sm_80 --emit=ptx -o "$out/mlp_small.sm_80.ptx"
end=$(date +%s.%N)

echo "== Ridgeline example: $model"
awk -v s="$start" -v e="$end" 'BEGIN { printf "compile time (4 compilations): %.2f s\n", e - s }'
for f in "$out"/*; do
  printf "  %-28s %8d bytes\n" "$(basename "$f")" "$(stat -c %s "$f")"
done
echo "  GPU kernels in the PTX: $(grep -c '^.visible .entry' "$out/mlp_small.sm_90a.ptx")"
if command -v ptxas >/dev/null || [[ -x /usr/local/cuda/bin/ptxas ]]; then
  ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
  "$ptxas" -arch=sm_90a "$out/mlp_small.sm_90a.ptx" -o "$out/mlp_small.sm_90a.cubin"
  "$ptxas" -arch=sm_80 "$out/mlp_small.sm_80.ptx" -o "$out/mlp_small.sm_80.cubin"
  echo "  ptxas accepts the PTX for sm_90a and sm_80"
else
  echo "  (ptxas not installed: PTX not assembled)"
fi
echo "== CPU run against the reference outputs"
"$bin/ridge-run" "$model" --target=cpu --test-data "$data" --compare
