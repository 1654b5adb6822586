#!/usr/bin/env bash
# Installs Ridgeline's build and test dependencies from Debian 12 packages when
# they are missing (run as root). Sourced by the other scripts.
set -euo pipefail

RIDGE_APT_PACKAGES=(
  g++ cmake ninja-build
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  clang-22 lld-22
  libonnx-dev libprotobuf-dev protobuf-compiler
  libonnx-testdata python3-onnx python3-numpy python3-matplotlib
  python3-venv
)

ridge_missing_packages() {
  local missing=()
  for p in "${RIDGE_APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
      || missing+=("$p")
  done
  echo "${missing[@]:-}"
}

ridge_install_deps() {
  local missing
  missing=$(ridge_missing_packages)
  if [[ -n "${missing// /}" ]]; then
    echo "== installing: $missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
  fi
}

# Configures (once) and builds into build/ with clang-22 + lld when present.
ridge_build() {
  local root
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  if [[ ! -f "$root/build/build.ninja" ]]; then
    local compilers=()
    if command -v clang++-22 >/dev/null; then
      compilers=(-DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22
                 -DLLVM_USE_LINKER=lld)
    fi
    cmake -G Ninja -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release \
      -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir "${compilers[@]}" >/dev/null
  fi
  ninja -C "$root/build" -j"$(nproc)"
}

# NVIDIA's SASS disassembler from PyPI, into build/tools-venv (once): the
# lit tests that check the instructions ptxas makes of the PTX (FFMA, HMMA,
# spills) need it. Optional: those tests are skipped when it cannot be had.
RIDGE_NVDISASM_PIN=13.2.78
ridge_install_nvdisasm() {
  local root venv
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  venv="$root/build/tools-venv"
  if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; \
      sys.exit(m.version('nvidia-cuda-nvdisasm') != '$RIDGE_NVDISASM_PIN')" \
      2>/dev/null; then
    rm -rf "$venv"
    if ! /usr/bin/python3 -m venv "$venv" ||
       ! "$venv/bin/pip" install -q "nvidia-cuda-nvdisasm==$RIDGE_NVDISASM_PIN"; then
      echo "warning: cannot install nvidia-cuda-nvdisasm; SASS tests are skipped"
      return 0
    fi
  fi
}

# Triton from PyPI, into build/triton-venv (once): bench/triton_side_by_side.py
# and its lit test (`REQUIRES: triton`) compile Triton's GEMM ahead of time
# (no GPU) and run it on the emulator beside Ridgeline's. Optional and not
# called by scripts/test.sh: the wheel is 286 MB (a download on every fresh CI
# machine) and the venv 1.1 GB; from an already downloaded wheel it installs
# in 19-35 s on 2 busy cores, and the test runs in ~40 s. Pass a wheel file to
# install from it instead of the index (the same version).
RIDGE_TRITON_PIN=3.9.0
ridge_install_triton() {
  local root venv spec
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  venv="$root/build/triton-venv"
  spec=${1:-triton==$RIDGE_TRITON_PIN}
  if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; \
      sys.exit(m.version('triton') != '$RIDGE_TRITON_PIN')" 2>/dev/null; then
    rm -rf "$venv"
    if ! /usr/bin/python3 -m venv "$venv" ||
       ! "$venv/bin/pip" install -q numpy "$spec"; then
      echo "warning: cannot install triton $RIDGE_TRITON_PIN; the Triton side-by-side test is skipped"
      return 0
    fi
  fi
}

# The fuzz build (bench/fuzz-campaign.sh) only: libFuzzer and the sanitizer
# runtimes of clang-22.
RIDGE_FUZZ_APT_PACKAGES=(libclang-rt-22-dev)

# Configures (once) and builds the libFuzzer target into build-fuzz/: every
# project library with ASan, UBSan and coverage instrumentation, at -O1
# (RIDGE_ENABLE_FUZZER, tools/ridge-fuzz-import).
ridge_fuzz_build() {
  local root
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  RIDGE_APT_PACKAGES+=("${RIDGE_FUZZ_APT_PACKAGES[@]}")
  ridge_install_deps
  if [[ ! -f "$root/build-fuzz/build.ninja" ]]; then
    cmake -G Ninja -S "$root" -B "$root/build-fuzz" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" \
      -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
      -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
      -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
      -DLLVM_USE_LINKER=lld -DRIDGE_ENABLE_FUZZER=ON >/dev/null
  fi
  ninja -C "$root/build-fuzz" -j"$(nproc)" ridge-fuzz-import
}
