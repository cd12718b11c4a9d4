#!/bin/bash
# bench/report-bench.sh [EVENTS] -- times `calltrace report`, `graph`, `tree --tid`, `report -f csv`
# (its percentiles), `flame -o x.svg` and `diff --tree` (two records) on a
# synthetic record of EVENTS events (default 20 million, ~480 MB) and prints events/s and the
# peak RSS of each (CALLTRACE_STATS=1). Run from the top of the repository after `make`.
set -eu
EVENTS=${1:-20000000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
make -s -C "$ROOT" calltrace bench/gen-record
T=$(mktemp -d "${TMPDIR:-/tmp}/ct-report-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
"$ROOT/bench/gen-record" "$T/run" "$EVENTS"
cat "$T/run/events.ctr" >/dev/null # from the page cache, like a run just recorded
export CALLTRACE_STATS=1
"$ROOT/calltrace" report "$T/run" >/dev/null
"$ROOT/calltrace" graph -o "$T/graph.dot" "$T/run"
"$ROOT/calltrace" tree --tid 1000 "$T/run" >/dev/null
"$ROOT/calltrace" report -f csv "$T/run" >/dev/null
"$ROOT/calltrace" flame -o "$T/flame.svg" "$T/run"
"$ROOT/calltrace" diff --tree "$T/run" "$T/run" >/dev/null
