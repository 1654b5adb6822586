#!/usr/bin/env bash
# The second conformance suite: the node tests of a pinned `onnx` wheel (newer
# than Debian's 1.12), against test/conformance/expected-failures-onnx-$pin.txt.
#  1. installs the wheel into a venv under build/ (once; PyPI must be
#     reachable the first time);
#  2. renders its node tests with python/ridgeline/make_node_suite.py into
#     build/node-suite-onnx-$pin (once per onnx version and renderer);
#  3. runs python/ridgeline/conformance.py over them.
# Called by scripts/test.sh after the build; extra arguments go to
# conformance.py (e.g. --filter REGEX). The last line is the summary
# `onnx $pin node suite: N passed, M failed`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
onnx_pin=1.23.0
numpy_pin=2.1.3
venv="$root/build/onnx-$onnx_pin-venv"
suite="$root/build/node-suite-onnx-$onnx_pin"
label="onnx $onnx_pin node suite"

if ! "$venv/bin/python" -c "import onnx, sys; sys.exit(onnx.__version__ != '$onnx_pin')" \
    2>/dev/null; then
  echo "== $label: installing onnx==$onnx_pin numpy==$numpy_pin into $venv"
  rm -rf "$venv"
  if ! /usr/bin/python3 -m venv "$venv" ||
     ! "$venv/bin/pip" install -q "onnx==$onnx_pin" "numpy==$numpy_pin"; then
    echo "$label: not run (cannot install onnx==$onnx_pin)"
    exit 1
  fi
fi
# The rendering is cached, keyed by the onnx version (the folder's name) and
# the renderer (its hash in .rendered).
renderer="$root/python/ridgeline/make_node_suite.py"
key=$(sha256sum "$renderer" | cut -d' ' -f1)
if [[ "$(cat "$suite/.rendered" 2>/dev/null)" != "$key" ]]; then
  rm -rf "$suite" "$suite.tmp"
  "$venv/bin/python" "$renderer" "$suite.tmp"
  echo "$key" > "$suite.tmp/.rendered"
  mv "$suite.tmp" "$suite"
fi
python3 "$root/python/ridgeline/conformance.py" --quiet --label "$label" \
  --suite "$suite" \
  --expected-failures "$root/test/conformance/expected-failures-onnx-$onnx_pin.txt" \
  "$@"
