#!/usr/bin/env bash
# bench/libcall-bench.sh - cost of one library call traced at the program's boundary: calltrace
# -L (the inject engine's trampolines and --engine=ptrace's breakpoints), uftrace record --force
# (no -pg: it hooks the PLT) and ltrace (PLT breakpoints), on bench/libleaf.c: M calls of strlen.
#
#   cost per call = (traced wall time - untraced wall time) / M
#
# Everything is pinned to CPU 0 with taskset (tracer and program share it); the wall time of
# calltrace includes writing its trace. Each tool gets its own M (a run of 1-5 s); each time is
# the median of REPEAT runs. The counts are checked: each tool must see M calls of strlen.
# Built with -z lazy: ltrace 0.7.3 and uftrace --force see only a lazily bound PLT.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CALLTRACE=${CALLTRACE:-$ROOT/calltrace}
REPEAT=${REPEAT:-3}
CT_M=${CT_M:-20000000}
PTRACE_M=${PTRACE_M:-100000}
UFTRACE_M=${UFTRACE_M:-5000000}
LTRACE_M=${LTRACE_M:-20000}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cc -O2 -g -fno-builtin -Wl,-z,lazy "$ROOT/bench/libleaf.c" -o "$TMP/libleaf"

# median_ms CMD...: the median wall time of REPEAT runs, in ms
median_ms() {
    local times=() i start
    for ((i = 0; i < REPEAT; i++)); do
        rm -rf "$TMP/run"
        start=$(date +%s%N)
        taskset -c 0 "$@" >/dev/null 2>"$TMP/err" || {
            echo "FAIL: $* ($(tail -1 "$TMP/err"))" >&2
            return 1
        }
        times+=($((($(date +%s%N) - start) / 1000000)))
    done
    printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((REPEAT + 1) / 2))p"
}

# row NAME M COUNT CMD...: times CMD against the untraced program with the same M
row() {
    local name=$1 m=$2 counted=$3
    shift 3
    local base traced
    base=$(median_ms "$TMP/libleaf" "$m")
    traced=$(median_ms "$@")
    local got
    got=$($counted)
    [ "$got" = "$m" ] || echo "warning: $name saw $got calls of strlen, not $m" >&2
    awk -v n="$name" -v m="$m" -v b="$base" -v t="$traced" \
        'BEGIN { printf "%-22s %10d %10d %10d %12.1f\n", n, m, b, t, (t - b) * 1e6 / m }'
}

ct_count() { "$CALLTRACE" report "$TMP/run" 2>/dev/null | awk '$NF ~ /libc/ && $(NF-1) == "strlen" { print $1 }'; }
uf_count() { uftrace report -d "$TMP/run" 2>/dev/null | awk '$NF == "strlen" { print $(NF-1) }'; }
lt_count() { ltrace -c -e strlen "$TMP/libleaf" "$LTRACE_M" 2>&1 >/dev/null | awk '$NF == "strlen" { print $(NF-1) }'; }

printf '%-22s %10s %10s %10s %12s\n' tool calls "plain ms" "traced ms" "ns/call"
row "calltrace -L" "$CT_M" ct_count "$CALLTRACE" -q -o "$TMP/run" -L -- "$TMP/libleaf" "$CT_M"
row "calltrace -L ptrace" "$PTRACE_M" ct_count \
    "$CALLTRACE" -q -o "$TMP/run" --engine=ptrace -L -- "$TMP/libleaf" "$PTRACE_M"
if command -v uftrace >/dev/null; then
    row "uftrace --force" "$UFTRACE_M" uf_count \
        uftrace record -d "$TMP/run" --force "$TMP/libleaf" "$UFTRACE_M"
fi
if command -v ltrace >/dev/null; then
    row "ltrace -e strlen" "$LTRACE_M" lt_count ltrace -o /dev/null -e strlen "$TMP/libleaf" "$LTRACE_M"
fi
