#!/usr/bin/env bash
# A long libFuzzer campaign on ridge-fuzz-import (ONNX bytes -> importer ->
# graph pipeline up to linalg, ASan + UBSan), on one core.
#   bench/fuzz-campaign.sh [RUNS] [OUT]
# RUNS: executions (default 1000000). OUT: the campaign folder (default
# build-fuzz/campaign): seeds/ (scripts/fuzz-corpus.sh), corpus/ (the inputs
# the campaign adds), crashes/ (crash-*, timeout-*, oom-*, leak-*: each a
# plain .onnx that `ridgec FILE --emit=linalg` replays) and campaign.log.
# RIDGE_FUZZ_MAX_TIME=S stops it after S seconds instead (libFuzzer's
# -max_total_time; it still ends with the DONE line). RIDGE_FUZZ_JOBS=N runs
# N fuzzers on N cores, RUNS/N executions each, sharing the corpus
# (libFuzzer's -jobs/-workers; each writes OUT/fuzz-K.log).
# Configures and builds build-fuzz/ first when it is missing
# (scripts/deps.sh, ridge_fuzz_build). Per-input limit 10 s, 4 GiB RSS.
# Ends with libFuzzer's final stats and its `DONE cov: ... ft: ...` line;
# exits non-zero when libFuzzer stopped on a finding.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-1000000}
out=${2:-$root/build-fuzz/campaign}
source "$root/scripts/deps.sh"
fuzzer="$root/build-fuzz/bin/ridge-fuzz-import"
if [[ ! -x "$fuzzer" ]]; then
  ridge_fuzz_build
fi

mkdir -p "$out/corpus" "$out/crashes"
rm -rf "$out/seeds"
bash "$root/scripts/fuzz-corpus.sh" "$out/seeds"
# UBSan findings abort (-fno-sanitize-recover=undefined); print their stack.
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

jobs=${RIDGE_FUZZ_JOBS:-1}
parallel=()
if [[ "$jobs" -gt 1 ]]; then
  runs=$((runs / jobs))
  parallel=(-jobs="$jobs" -workers="$jobs")
  rm -f "$out"/fuzz-*.log
fi
set +e
(cd "$out" && nice -n 10 "$fuzzer" -runs="$runs" \
  -max_total_time="${RIDGE_FUZZ_MAX_TIME:-0}" "${parallel[@]}" \
  -timeout=10 -rss_limit_mb=4096 \
  -print_final_stats=1 -artifact_prefix="$out/crashes/" \
  "$out/corpus" "$out/seeds") 2>&1 | tee "$out/campaign.log"
status=${PIPESTATUS[0]}
set -e
if [[ "$jobs" -gt 1 ]]; then
  cat "$out"/fuzz-*.log >>"$out/campaign.log"
  # A job's failure is in its log, not in the parent's status.
  grep -qE '^SUMMARY: |ERROR: libFuzzer' "$out"/fuzz-*.log && status=1
  for log in "$out"/fuzz-*.log; do
    echo "== $(basename "$log"): $(grep -E '^#[0-9]+\s+DONE' "$log" | tail -1 || true)"
  done
fi
echo "== $(grep -E '^#[0-9]+\s+DONE' "$out/campaign.log" | tail -1 || true)"
echo "== findings: $(find "$out/crashes" -type f | wc -l) in $out/crashes"
exit "$status"
