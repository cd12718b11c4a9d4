#!/usr/bin/env bash
# bench/output-bench.sh - what a whole traced run costs with its viewable output: calltrace
# writing trace.json or trace.pftrace, against `uftrace record -P .` alone and followed by
# `uftrace dump --chrome` (uftrace's viewable output).
#
# Workloads (built -O2 -g into a temporary directory; Debian's sqlite3):
#   fib N      bench/fib.c: 2*fib(N+1)-1 calls of fib() (recursion, deep stacks)
#   leaf M     bench/leaf.c: M calls of a 5-instruction leaf() (a flat loop)
#   sqlite3    Debian's sqlite3 on an in-memory database (a recursive CTE inserting ROWS rows,
#              an index, a grouped query): the calls of libsqlite3 (calltrace -l 'libsqlite3*',
#              uftrace -P .@libsqlite3.so.0)
# Every run is pinned to CPU 0 with taskset: tracer, program and output share it.
#
# Columns: wall s (the whole run: recording and, where there is one, the viewable output),
# calls (each tool's own count: calltrace's closing line, the sum of `uftrace report`),
# ns/call (wall / calls), B/call (bytes of the tool's output: calltrace's trace file;
# uftrace's data directory, or its chrome JSON), and x uftrace (wall over `uftrace record -P`
# alone on the same workload; the target is at most 0.5 with a viewable output).
#
# Each measurement is the median of REPEAT runs (default 3).
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
CALLTRACE=${CALLTRACE:-$ROOT/calltrace}
UFTRACE=${UFTRACE:-uftrace}
FIB_N=${FIB_N:-32}
LEAF_M=${LEAF_M:-7000000}
ROWS=${ROWS:-200000}
REPEAT=${REPEAT:-3}

case ${1:-} in
-h | --help)
    sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
    echo "Environment: CALLTRACE, UFTRACE, FIB_N [32], LEAF_M [7000000], ROWS [200000], REPEAT [3]"
    exit 0
    ;;
esac

[ -x "$CALLTRACE" ] || { echo "output-bench.sh: $CALLTRACE not built (make)" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cc -O2 -g -o "$TMP/fib" "$SCRIPT_DIR/fib.c"
cc -O2 -g -o "$TMP/leaf" "$SCRIPT_DIR/leaf.c"
cat >"$TMP/work.sql" <<EOF
create table t(a integer primary key, b text, c integer);
with recursive n(i) as (select 1 union all select i + 1 from n where i < $ROWS)
insert into t select i, hex(randomblob(8)), i % 97 from n;
create index tc on t(c);
select c, count(*), max(b) from t group by c order by 2 desc limit 3;
EOF

# timed CMD...: runs CMD pinned to CPU 0, prints its wall time in seconds
timed() {
    local start end
    start=$(date +%s%N)
    taskset -c 0 "$@" >/dev/null 2>"$TMP/last.err" </dev/null ||
        { echo "FAILED: $* ($(tail -c 300 "$TMP/last.err"))" >&2; return 1; }
    end=$(date +%s%N)
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f\n", (b - a) / 1e9 }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# workload NAME: sets PROG_ARGS (the program and its arguments), CT_LIBS and UF_PATTERN
workload() {
    case $1 in
    fib) PROG_ARGS=("$TMP/fib" "$FIB_N") CT_LIBS=() UF_PATTERN=. ;;
    leaf) PROG_ARGS=("$TMP/leaf" "$LEAF_M") CT_LIBS=() UF_PATTERN=. ;;
    sqlite3)
        PROG_ARGS=(/usr/bin/sqlite3 -init "$TMP/work.sql" :memory: .quit)
        CT_LIBS=(-l 'libsqlite3*') UF_PATTERN=.@libsqlite3.so.0
        ;;
    esac
}

ct_calls() { sed -n 's/^calltrace: trace in [^:]*: \([0-9]*\) calls.*/\1/p' "$TMP/last.err"; }

uf_calls() {
    "$UFTRACE" report -d "$1" --no-pager -f call 2>/dev/null |
        awk '$1 ~ /^[0-9]+$/ { n += $1 } END { print n + 0 }'
}

row() { # LABEL WALL CALLS BYTES BASE
    awk -v l="$1" -v w="$2" -v c="$3" -v b="$4" -v base="$5" 'BEGIN {
        printf "| %-28s | %7.3f | %10d | %7.1f | %6.1f | %5.2f |\n",
            l, w, c, c ? w * 1e9 / c : 0, c ? b / c : 0, base ? w / base : 0 }'
}

run_workload() {
    workload "$1"
    echo
    echo "### $1: ${PROG_ARGS[*]}"
    echo
    echo "| run | wall s | calls | ns/call | B/call | x uftrace |"
    echo "| --- | --- | --- | --- | --- | --- |"
    local i w uf_base="" uf_calls_n=0 uf_bytes=0 uf_chrome_bytes=0 walls
    walls=()
    if command -v "$UFTRACE" >/dev/null; then
        for i in $(seq "$REPEAT"); do
            rm -rf "$TMP/uft"
            timed "$UFTRACE" record --no-libcall -P "$UF_PATTERN" -d "$TMP/uft" -- "${PROG_ARGS[@]}"
        done | median >"$TMP/uf.wall"
        uf_base=$(cat "$TMP/uf.wall")
        uf_calls_n=$(uf_calls "$TMP/uft")
        uf_bytes=$(du -sb "$TMP/uft" | cut -f1)
        row "uftrace record -P" "$uf_base" "$uf_calls_n" "$uf_bytes" "$uf_base"
        for i in $(seq "$REPEAT"); do
            rm -rf "$TMP/uft"
            local start end
            start=$(date +%s%N)
            taskset -c 0 "$UFTRACE" record --no-libcall -P "$UF_PATTERN" -d "$TMP/uft" -- \
                "${PROG_ARGS[@]}" >/dev/null 2>&1 </dev/null
            taskset -c 0 "$UFTRACE" dump -d "$TMP/uft" --chrome >"$TMP/uft.json" 2>/dev/null
            end=$(date +%s%N)
            awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f\n", (b - a) / 1e9 }'
        done | median >"$TMP/ufc.wall"
        uf_chrome_bytes=$(stat -c %s "$TMP/uft.json")
        row "uftrace record + dump --chrome" "$(cat "$TMP/ufc.wall")" "$uf_calls_n" \
            "$uf_chrome_bytes" "$uf_base"
    else
        echo "| uftrace | N/A | | | | |"
    fi
    local fmt file
    for fmt in json perfetto; do
        file=trace.json
        [ $fmt = perfetto ] && file=trace.pftrace
        for i in $(seq "$REPEAT"); do
            rm -rf "$TMP/ct"
            timed "$CALLTRACE" -o "$TMP/ct" --format $fmt "${CT_LIBS[@]}" -- "${PROG_ARGS[@]}"
        done | median >"$TMP/ct.wall"
        row "calltrace --format $fmt" "$(cat "$TMP/ct.wall")" "$(ct_calls)" \
            "$(stat -c %s "$TMP/ct/$file")" "${uf_base:-0}"
    done
}

# The writers alone: `calltrace export` of the fib run's record into each format, less the
# same export with --max-calls 1 (the record read and paired, almost nothing written).
writers() {
    workload fib
    rm -rf "$TMP/ct"
    taskset -c 0 "$CALLTRACE" -q -o "$TMP/ct" --format perfetto -- "${PROG_ARGS[@]}" >/dev/null
    local calls base json pf i
    base=$(for i in $(seq "$REPEAT"); do timed "$CALLTRACE" export -q --format perfetto --max-calls 1 "$TMP/ct"; done | median)
    json=$(for i in $(seq "$REPEAT"); do timed "$CALLTRACE" export -q --format json "$TMP/ct"; done | median)
    pf=$(for i in $(seq "$REPEAT"); do timed "$CALLTRACE" export -q --format perfetto "$TMP/ct"; done | median)
    calls=$((2 * $(awk -v n="$FIB_N" 'BEGIN { a = 0; b = 1; for (i = 0; i < n + 1; i++) { t = a + b; a = b; b = t } print a }') - 1 + 1))
    echo
    echo "### the writers alone (export of the fib record, $calls calls)"
    echo
    echo "| export | wall s | ns/call over reading |"
    echo "| --- | --- | --- |"
    awk -v c="$calls" -v r="$base" -v j="$json" -v p="$pf" 'BEGIN {
        printf "| read only (--max-calls 1) | %.3f | - |\n", r
        printf "| --format json | %.3f | %.1f |\n", j, (j - r) * 1e9 / c
        printf "| --format perfetto | %.3f | %.1f |\n", p, (p - r) * 1e9 / c
        printf "| json / perfetto | | %.1fx |\n", (j - r) / (p - r) }'
}

echo "calltrace output benchmark, $(date -u +%Y-%m-%d), $(nproc) CPUs, pinned to CPU 0, median of $REPEAT"
for w in fib leaf sqlite3; do
    run_workload $w
done
writers
