#!/bin/bash
# A run whose calltrace is SIGKILLed while calls are open: report, tree and trace.json read the
# calls of the record through one reader (src/record/call_reader.h) and must agree on every one,
# the unfinished calls included: the same calls, the same durations to the nanosecond (tree's to
# its printed digits), though the record has no end anchor (its time base is the last periodic
# one) and ends with calls open on two threads. The program's inner() calls last a known 2 ms.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build timed_calls O2

# record_holds RECORD: the record written so far has a periodic clock anchor and calls
# (REC_CLOCK 8; REC_ENTER 4, REC_EXIT 5, REC_CALLS 12 in src/record/format.h).
record_holds() {
    python3 - "$1" <<'PY'
import struct, sys
try:
    data = open(sys.argv[1], "rb").read()
except OSError:
    sys.exit(1)
pos, seen = 64, set()
while pos + 8 <= len(data):
    rtype, _flags, size = struct.unpack_from("<BBH", data, pos)
    if size < 8 or size % 8 or pos + size > len(data):
        break
    seen.add(rtype)
    pos += size
sys.exit(0 if 8 in seen and seen & {4, 5, 12} else 1)
PY
}

ct_start_bg "$BIN" "$T/ctr" 150 2000
wait_until 60 "both threads to park" progress_ge "$T/ctr" 2000000
wait_until 30 "a clock anchor and calls in the record" record_holds "$CT_DIR/events.ctr"
kill -KILL "$BG"
ct_wait_bg 20
expect_rc 137 "calltrace was killed"
run=$CT_DIR

ct_raw export "$run"
expect_rc 0 "calltrace export of a killed run"
CT_DIR=$run CT_TRACE=$run/trace.json
expect_trace
ct_raw tree "$run"
expect_rc 0 "calltrace tree"
tree=$CT_OUT
ct_raw report --format json "$run"
expect_rc 0 "calltrace report"
report=$CT_OUT

cat >"$T/agree.py" <<'PY'
import collections, json, re, sys

def fmt(ns):  # util/duration.c's duration_format
    for scale, unit in ((10**9, "s"), (10**6, "ms"), (1000, "us")):
        if ns >= scale:
            return "%d.%03d %s" % (ns // scale, ns % scale * 1000 // scale, unit)
    return "%d ns" % ns

trace = json.load(open(sys.argv[1]))
calls = collections.defaultdict(list)  # tid -> [(name, dur_ns, unfinished)] in exit order
for e in trace["traceEvents"]:
    if e.get("ph") == "X":
        calls[e["tid"]].append((e["name"], round(e["dur"] * 1000), bool(e.get("args", {}).get("unfinished"))))
assert trace["otherData"]["complete"] is False, "the trace of a killed run says complete"

tree = collections.defaultdict(list)
tid = None
for line in open(sys.argv[2]):
    line = line.rstrip("\n")
    m = re.match(r"# pid \d+, thread (\d+)$", line)
    if m:
        tid = int(m.group(1))
        continue
    if not line or line.lstrip().startswith("DURATION"):
        continue
    dur, text = line[:12].strip(), line[14:].lstrip()
    if text.endswith(" {"):
        continue  # opens a call: its duration is on its closing line
    m = re.match(r"\} /\* (\S+) \*/", text) or re.match(r"([^(]+)\(", text)
    tree[tid].append((m.group(1), dur, "/* unfinished */" in text))

assert sorted(calls) == sorted(tree), "threads: trace.json %s, tree %s" % (sorted(calls), sorted(tree))
unfinished = inner = 0
for t in calls:
    want = [(n, fmt(d), u) for n, d, u in calls[t]]
    if want != tree[t]:
        for i, (a, b) in enumerate(zip(want, tree[t])):
            if a != b:
                break
        sys.exit("thread %d, call %d of %d/%d: trace.json %s, tree %s" %
                 (t, i, len(want), len(tree[t]), want[i:i + 1], tree[t][i:i + 1]))
    for n, d, u in calls[t]:
        unfinished += u
        if n == "inner" and not u:
            inner += 1
            # it spins until a whole microsecond 2000 us after its start, read in microseconds
            assert d >= 1990000, "an inner() call of %d ns, less than its 2 ms" % d

stats = {}
for t in calls:
    for n, d, u in calls[t]:
        s = stats.setdefault(n, {"calls": 0, "total_ns": 0, "min_ns": d, "max_ns": d, "unfinished": 0})
        s["calls"] += 1
        s["total_ns"] += d  # no recursion here: every call counts
        s["min_ns"], s["max_ns"] = min(s["min_ns"], d), max(s["max_ns"], d)
        s["unfinished"] += u
report = {f["name"]: f for f in json.load(open(sys.argv[3]))["functions"]}
assert sorted(report) == sorted(stats), "functions: report %s, trace.json %s" % (sorted(report), sorted(stats))
for n, s in stats.items():
    got = {k: int(report[n][k]) for k in s}
    assert got == s, "%s: report %s, trace.json %s" % (n, got, s)
assert unfinished >= 2, "only %d unfinished calls: main and the worker's should be open" % unfinished
assert inner >= 10, "only %d inner() calls finished" % inner
print("%d calls on %d threads agree, %d unfinished" % (sum(map(len, calls.values())), len(calls), unfinished))
PY
out=$(python3 "$T/agree.py" "$run/trace.json" "$tree" "$report" 2>&1) || fail "$out"
note "$out"
