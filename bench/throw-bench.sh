#!/usr/bin/env bash
# bench/throw-bench.sh - what an exception or a backtrace() through traced frames costs: the
# program (bench/throw.cc) times N of them itself, untraced and under each engine, pinned to
# CPU 0 with calltrace (one run each). THROWS=N and WALKS=N set the counts.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
g++ -O2 -g -o "$TMP/throw" "$ROOT/bench/throw.cc"
THROWS=${THROWS:-20000}
WALKS=${WALKS:-20000}
printf '%-22s %14s %18s\n' "" "ns per throw" "ns per backtrace"
row() {
    local name=$1
    shift
    local t w
    t=$(taskset -c 0 "$@" "$TMP/throw" throw "$THROWS" 2>/dev/null | awk '{print $4}')
    w=$(taskset -c 0 "$@" "$TMP/throw" backtrace "$WALKS" 2>/dev/null | awk '{print $4}')
    printf '%-22s %14s %18s\n' "$name" "$t" "$w"
}
row untraced env
for engine in ptrace inject; do
    row "calltrace $engine" "$ROOT/calltrace" --engine="$engine" -o "$TMP/run-$engine" --
done
