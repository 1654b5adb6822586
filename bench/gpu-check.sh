#!/usr/bin/env bash
# GPU check: on a machine with an NVIDIA GPU and CUDA, build Ridgeline, run
# every bundled end-to-end model on the GPU target and print pass/fail with
# the max error per model; then each shared model on the GPU and on the PTX
# emulator, their outputs compared, with the measured time per kernel next
# to the roofline and the emulator's counters next to the fusion plan.
# Needs no network if the packages are installed.
# Usage: bench/gpu-check.sh [sm_XX]   (default: detected from nvidia-smi)
#        bench/gpu-check.sh --bundle DIR [--out DIR]
# The second form is for a GPU machine without the toolchain (no MLIR, no
# Debian packages): DIR was made elsewhere by bench/gpu_bundle.py, and its
# gpu_run.py checks and times the compiled models and benchmarks with
# ridge-exec and the machine's PyTorch.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [[ "${1:-}" == --bundle ]]; then
  bundle=${2:?"--bundle needs the folder bench/gpu_bundle.py wrote"}
  shift 2
  nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.mem \
    --format=csv 2>/dev/null
  exec python3 "$bundle/gpu_run.py" "$bundle" "$@"
fi
source "$root/scripts/deps.sh"
set +e
ridge_install_deps || echo "warning: could not install packages; using what is present"
ridge_build >/dev/null || { echo "build failed"; exit 1; }

arch=${1:-}
if [[ -z "$arch" ]] && command -v nvidia-smi >/dev/null; then
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
  case "$cc" in
    90) arch=sm_90a ;;
    *) arch=sm_$cc ;;
  esac
fi
arch=${arch:-sm_90a}
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>/dev/null \
  | sed 's/^/GPU: /'
echo "target: $arch"

printf "%-34s %-6s %-12s %s\n" model result "max abs err" "wall s"
pass=0; fail=0
run_one() {
  local name=$1 model=$2 data=$3
  shift 3
  local t0 t1 out status
  t0=$(date +%s.%N)
  out=$(timeout 120 "$root/build/bin/ridge-run" "$model" --target="$arch" \
        --test-data "$data" --compare "$@" 2>&1)
  status=$?
  t1=$(date +%s.%N)
  local err
  err=$(echo "$out" | grep -oE 'max abs err [^,]+' | awk '{print $4}' | sort -g | tail -1)
  if [[ $status -eq 0 ]]; then pass=$((pass + 1)); r=PASS; else fail=$((fail + 1)); r="FAIL($status)"; fi
  printf "%-34s %-6s %-12s %s\n" "$name" "$r" "${err:--}" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
  [[ $status -eq 0 ]] || echo "$out" | tail -3 | sed 's/^/    /'
}
for dir in "$root"/test/models/*/; do
  name=$(basename "$dir")
  [[ -f "$dir/model.onnx" && -d "$dir/test_data_set_0" ]] || continue
  run_one "$name" "$dir/model.onnx" "$dir/test_data_set_0"
done
# Every in-scope ONNX node test on the GPU: the conformance runner with the
# GPU target, judged against the same expected failures as the CPU run.
echo "ONNX node tests on $arch:"
/usr/bin/python3 "$root/python/ridgeline/conformance.py" --quiet \
  --ridge-run-arg="--target=$arch" | tail -3
if [[ ${PIPESTATUS[0]} -eq 0 ]]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
# The shared models (and the exporter-style fixtures), fused, at the
# conformance runner's model tolerance.
for dir in "$root"/test/models/onnx-export/*/ "$root"/test/models/exporter/*/; do
  name=$(basename "$dir")
  [[ -f "$dir/model.onnx" && -d "$dir/test_data_set_0" ]] || continue
  run_one "models/$name" "$dir/model.onnx" "$dir/test_data_set_0" --atol 1e-4
done

# Each shared model on the GPU and on the PTX emulator (issue 13): both
# against the ONNX Runtime reference, their outputs against each other, and
# per kernel the measured GPU time next to the roofline prediction
# (--kernel-times) and the emulator's counters next to the plan's bytes
# (--emulator-report).
work=$(mktemp -d)
for dir in "$root"/test/models/onnx-export/*/; do
  name=$(basename "$dir")
  [[ -f "$dir/model.onnx" && -d "$dir/test_data_set_0" ]] || continue
  echo
  echo "== $name: GPU ($arch) against the emulator"
  common=("$dir/model.onnx" --test-data "$dir/test_data_set_0" --compare
          --atol 1e-4 --target="$arch")
  timeout 300 "$root/build/bin/ridge-run" "${common[@]}" --kernel-times \
    --save-outputs "$work/$name/gpu" 2>&1 | grep -v "^output " | sed 's/^/  /'
  gpu=${PIPESTATUS[0]}
  timeout 600 "$root/build/bin/ridge-run" "${common[@]}" --device=emulator \
    --emulator-report --save-outputs "$work/$name/emulator" 2>&1 \
    | grep -v "^output " | sed 's/^/  /'
  emu=${PIPESTATUS[0]}
  same=1
  if [[ $gpu -eq 0 && $emu -eq 0 ]]; then
    /usr/bin/python3 - "$work/$name" <<'PY' || same=0
import glob, os, sys
import numpy as np
worst = 0.0
for gpu in sorted(glob.glob(os.path.join(sys.argv[1], "gpu", "*.npy"))):
    a = np.load(gpu).astype(np.float64)
    b = np.load(gpu.replace(os.sep + "gpu" + os.sep,
                            os.sep + "emulator" + os.sep)).astype(np.float64)
    worst = max(worst, float(np.max(np.abs(a - b))) if a.size else 0.0)
print("  GPU against emulator: max abs difference %.3e" % worst)
sys.exit(0 if worst <= 1e-4 else 1)
PY
  fi
  if [[ $gpu -eq 0 && $emu -eq 0 && $same -eq 1 ]]; then
    pass=$((pass + 1)); echo "  $name: PASS"
  else
    fail=$((fail + 1)); echo "  $name: FAIL (gpu $gpu, emulator $emu, same $same)"
  fi
done
rm -rf "$work"
echo "$pass passed, $fail failed"

# Fused memory-bound kernels against a copy-like kernel (and PyTorch when
# it is installed): a benchmark, printed for the issue notes.
echo
/usr/bin/python3 "$root/bench/fusion_bandwidth.py" --target "$arch" --size 8192 \
  || echo "fusion benchmark failed"
# Tensor-core GEMMs against cuBLAS (torch.matmul) at 4096/8192/16384 and
# the shared models' shapes (issue 14's benchmark), for the chip's own
# code and, on sm_90a, for an sm_80-code build on the same GPU.
echo
/usr/bin/python3 "$root/bench/gemm.py" --target "$arch" || echo "GEMM benchmark failed"
if [[ "$arch" == sm_90a ]]; then
  /usr/bin/python3 "$root/bench/gemm.py" --target sm_80 --no-models \
    || echo "GEMM benchmark (sm_80 code) failed"
  # fp8 (e4m3 wgmma, f32 operands quantized in the kernels) against
  # torch._scaled_mm.
  /usr/bin/python3 "$root/bench/gemm.py" --target sm_90a --dtype fp8 \
    --sizes 4096,8192 || echo "GEMM benchmark (fp8) failed"
fi
# Fused attention against PyTorch SDPA (flash, bf16) at head dims 64 and
# 128, L = 1k/4k/16k, causal and not, and decode over 8k/64k cached keys
# against the copy bandwidth (issue 15's benchmark).
echo
/usr/bin/python3 "$root/bench/attention.py" --target "$arch" \
  || echo "attention benchmark failed"
[[ $fail -eq 0 ]]
