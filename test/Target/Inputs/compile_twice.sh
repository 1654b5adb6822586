#!/usr/bin/env bash
# compile_twice.sh DIR OUTPUT-NAME COMPILER ARGS...: runs COMPILER ARGS -o
# DIR/{1,2}/OUTPUT-NAME twice (same file name in two folders, as two builds
# would) and fails unless both outputs are byte-identical.
set -euo pipefail
dir=$1 name=$2
shift 2
mkdir -p "$dir/1" "$dir/2"
"$@" -o "$dir/1/$name"
"$@" -o "$dir/2/$name"
cmp "$dir/1/$name" "$dir/2/$name"
