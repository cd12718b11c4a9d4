#!/bin/bash
# calltrace merge: calls of the merged run equal the sum; two copies of one run keep distinct
# pids; --align starts each at zero; calls/ folders copied; bad input (not a run, truncated,
# still being written, existing output) is refused and writes nothing.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build nested O0
ct_run "$BIN"
r1=$CT_DIR
build recursion O0
ct_run "$BIN" 10
r2=$CT_DIR
mkdir -p "$r1/calls/a/1" && echo '{}' >"$r1/calls/a/1/call.json"

CTX="[merge]"
ct_raw merge "$r1" "$r2" "$r1" -o "$T/m"
expect_rc 0
chk_file() { CT_TRACE=$1 chk validate; }
chk_file "$T/m/trace.json"
python3 - "$T/m/trace.json" <<'PY' || fail "merged trace (see above)"
import json, sys
from collections import Counter
d = json.load(open(sys.argv[1]))
xs = [e for e in d["traceEvents"] if e.get("ph") == "X"]
c = Counter(e["name"] for e in xs)
# nested twice (main a b c = 1 100 200 250) and recursion 10 (fib 177, is_even 639, is_odd 640)
want = {"main": 3, "a": 200, "b": 400, "c": 500, "fib": 177, "is_even": 639, "is_odd": 640}
bad = {k: (c[k], v) for k, v in want.items() if c[k] != v}
pids = {e["pid"] for e in xs}
if bad: print("calls (got, want):", bad); sys.exit(1)
if len(pids) != 3: print("expected 3 distinct pids, got", pids); sys.exit(1)
PY
ct_raw report -f csv "$T/m"
grep -q '^"c",.*,500,' "$CT_OUT" || fail "report of the merged run: $(grep '"c"' "$CT_OUT")"
[ -f "$T/m/calls/${r1##*/}/a/1/call.json" ] || fail "calls/ not copied: $(find "$T/m" | head)"

CTX="[merge --align]"
ct_raw merge --align "$r1" "$r2" -o "$T/ma"
expect_rc 0
python3 - "$T/ma/trace.json" <<'PY' || fail "--align: runs do not start near zero"
import json, sys
xs = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("ph") == "X"]
first = {}
for e in xs:
    first[e["pid"]] = min(first.get(e["pid"], 1e18), e["ts"])
assert len(first) == 2 and all(0 <= t < 10e6 for t in first.values()), first
PY

CTX="[merge bad input]"
nothing_written() {
    [ -e "$T/bad" ] && fail "$1: output written"
    ls "$T" | grep -q partial && fail "$1: temporary output left behind"
    return 0
}
ct_raw merge "$r1" "$T/nonexistent" -o "$T/bad"
one_stderr_line_error "missing run"
nothing_written "missing run"
mkdir "$T/notrun"
ct_raw merge "$r1" "$T/notrun" -o "$T/bad"
one_stderr_line_error "not a run"
nothing_written "not a run"
ct_raw merge "$r1" "$r2" -o "$T/m"
one_stderr_line_error "existing output"
grep -q "already exists" "$CT_ERR" || fail "existing output: $(cat "$CT_ERR")"
cp -r "$r2" "$T/trunc"
python3 -c 'import os,sys; os.truncate(sys.argv[1], os.path.getsize(sys.argv[1]) - 5)' "$T/trunc/events.ctr"
ct_raw merge "$r1" "$T/trunc" -o "$T/bad"
one_stderr_line_error "truncated run"
grep -q "truncated" "$CT_ERR" || fail "truncated: $(cat "$CT_ERR")"
nothing_written "truncated run"
cp -r "$r2" "$T/live"
python3 - "$T/live/events.ctr" <<'PY'
import struct, sys
with open(sys.argv[1], "r+b") as f:   # clear REC_F_COMPLETE: what a run being written has
    f.seek(12); flags, = struct.unpack("<I", f.read(4)); f.seek(12); f.write(struct.pack("<I", flags & ~2))
PY
ct_raw merge "$r1" "$T/live" -o "$T/bad"
one_stderr_line_error "run being written"
grep -q "still being written" "$CT_ERR" || fail "live run: $(cat "$CT_ERR")"
nothing_written "run being written"
ct_raw merge "$r1"
one_stderr_line_error "no -o"
