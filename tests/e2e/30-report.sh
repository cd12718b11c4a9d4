#!/bin/bash
# calltrace report: the calls column equals the programs' own counts; self <= total; the self
# times add up to the outermost call's total (nothing lost, nothing counted twice); recursion
# (fib, is_even/is_odd) not double counted; --sort, --top, --tid, csv/json/table.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

# report_check CSV COUNTS: calls equal the "count NAME N" lines; time invariants.
report_check() {
    python3 - "$1" "$2" <<'PY' || fail "report disagrees with the program (see above)"
import csv, sys
rows = {r["function"]: r for r in csv.DictReader(open(sys.argv[1]))}
want = {}
for line in open(sys.argv[2]):
    if line.startswith("count "):
        _, name, n = line.split()
        want[name] = int(n)
bad = 0
for name, n in want.items():
    got = int(rows[name]["calls"]) if name in rows else 0
    if got != n:
        print(f"{name}: report says {got} calls, the program counted {n}"); bad = 1
for name, r in rows.items():
    t, s = int(r["total_ns"]), int(r["self_ns"])
    if not 0 <= s <= t:
        print(f"{name}: self {s} ns not within 0..total {t} ns"); bad = 1
    if not int(r["min_ns"]) <= int(r["avg_ns"]) <= int(r["max_ns"]):
        print(f"{name}: avg not between min and max"); bad = 1
main_total = int(rows["main"]["total_ns"])
self_sum = sum(int(r["self_ns"]) for r in rows.values())
if self_sum != main_total:
    print(f"self times add up to {self_sum} ns, main's total is {main_total} ns"); bad = 1
for name, r in rows.items():
    if int(r["total_ns"]) > main_total:
        print(f"{name}: total {r['total_ns']} ns exceeds main's {main_total} ns: counted twice?"); bad = 1
sys.exit(bad)
PY
}

for prog in nested recursion; do
    CTX="[report $prog]"
    build $prog O0
    ct_run "$BIN"
    expect_rc 0
    run=$CT_DIR out=$CT_OUT
    ct_raw report -f csv "$run"
    expect_rc 0
    report_check "$CT_OUT" "$out"
done

CTX="[report recursion]"
# fib(18): 8361 calls, 18 deep; its total must be one outermost call's time (min..max of one
# call is at most that), so total == max.
python3 - "$CT_OUT" <<'PY' || fail "fib's total is not its outermost call's time"
import csv, sys
r = {r["function"]: r for r in csv.DictReader(open(sys.argv[1]))}["fib"]
sys.exit(0 if int(r["calls"]) == 8361 and r["total_ns"] == r["max_ns"] else 1)
PY

ct_raw report -s calls -n 2 -f csv "$run"
expect_rc 0
got=$(cut -d, -f1,3 "$CT_OUT" | tail -n +2 | tr '\n' ' ')
[ "$got" = '"fib",8361 "is_odd",640 ' ] || fail "--sort calls --top 2: got '$got'"

ct_raw report -s name "$run"
expect_rc 0
got=$(awk 'NR > 1 { print $NF }' "$CT_OUT" | tr '\n' ' ')
[ "$got" = 'fib is_even is_odd main ' ] || fail "--sort name table: got '$got'"

ct_raw report -f json "$run"
expect_rc 0
python3 - "$CT_OUT" <<'PY' || fail "json report: $(head -c 300 "$CT_OUT")"
import json, sys
d = json.load(open(sys.argv[1]))
f = {x["name"]: x for x in d["functions"]}
assert d["complete"] is True
assert f["main"]["calls"] == 1 and f["is_odd"]["calls"] == 640, f
assert [x["name"] for x in d["functions"]][0] == "main"  # sorted by total
PY

tid=$(python3 -c 'import json,sys; print([e["tid"] for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("ph") == "X"][0])' "$run/trace.json")
ct_raw report --tid "$tid" -f csv "$run"
expect_rc 0
grep -q '^"main",.*,1,' "$CT_OUT" || fail "--tid $tid lost main"

# a threaded program: --tid keeps one thread's calls
CTX="[report threads]"
build threads O0
ct_run "$BIN"
run=$CT_DIR
ct_raw report -f csv "$run"
grep -q '^"work",[^,]*,600,' "$CT_OUT" || fail "work: expected 600 calls over all threads: $(grep work "$CT_OUT")"
