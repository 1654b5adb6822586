#!/usr/bin/env bash
# Builds Ridgeline and runs the whole test suite (lit: FileCheck tests per
# pass, importer and bad-input tests, PTX/ptxas checks, CPU end-to-end runs,
# ONNX backend node tests, runtime unit test).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/deps.sh"
ridge_install_deps
ridge_build
ninja -C "$root/build" ridge-opt ridgec ridge-run ridge-runtime-test >/dev/null

set +e
/usr/lib/llvm-22/bin/lit -sv "$root/build/test" | tee "$root/build/lit.log"
status=${PIPESTATUS[0]}
set -e
passed=$(grep -E '^\s*Passed' "$root/build/lit.log" | grep -oE '[0-9]+' | head -1 || true)
failed=$(grep -E '^\s*Failed' "$root/build/lit.log" | grep -oE '[0-9]+' | head -1 || true)
echo "${passed:-0} passed, ${failed:-0} failed"
exit "$status"
