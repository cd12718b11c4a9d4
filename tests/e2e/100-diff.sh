#!/bin/bash
# calltrace diff: tests/progs/naps.c run with 5 calls of step() -> nap(3 ms) and 3 of only_a()
# (built -O0), then with 10 and 5 of only_b() (built -O2: another build, matched by name).
# The calls and their changes are exact; nap's total time is what the program measured
# around its sleeps, plus at most 5 ms a call (the tracing, the printf, a loaded machine); the
# change and % are B - A of the figures shown; rows are sorted by the size of the change;
# only_a is gone and only_b new; --tree aligns the stacks: main;run same, main;run;step changed
# 5 -> 10, main;run;only_a vanished, main;run;only_b appeared; csv, json and table agree.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

# csv_rows FILE FORMAT: each row of the csv FILE as FORMAT (str.format over its columns),
# space-separated
csv_rows() {
    python3 - "$1" "$2" <<'PY'
import csv, sys
print(" ".join(sys.argv[2].format(**r) for r in csv.DictReader(open(sys.argv[1]))))
PY
}

build naps O0
bin_a=$BIN
build naps O2
bin_b=$BIN
ct_run "$bin_a" 5 3000 a
expect_rc 0
run_a=$CT_DIR out_a=$CT_OUT
ct_run "$bin_b" 10 3000 b
expect_rc 0
run_b=$CT_DIR out_b=$CT_OUT

CTX="[diff csv]"
ct_raw diff -f csv "$run_a" "$run_b"
expect_rc 0
python3 - "$CT_OUT" "$out_a" "$out_b" <<'PY' || fail "diff disagrees with the programs (see above)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {r["function"]: r for r in rows}
def counts(path):
    c, slept, naps = {}, 0, 0
    for line in open(path):
        w = line.split()
        if w[0] == "count":
            c[w[1]] = int(w[2])
        elif w[0] == "nap":
            slept += int(w[2]); naps += 1
    return c, slept, naps
ca, slept_a, naps_a = counts(sys.argv[2])
cb, slept_b, naps_b = counts(sys.argv[3])
bad = 0
def check(cond, what):
    global bad
    if not cond:
        print(what); bad = 1
want = {"main": (1, 1)}
for f in ("run", "step", "nap", "tick", "only_a", "only_b"):
    want[f] = (ca[f], cb[f])
check(want["step"] == (5, 10) and want["only_a"] == (3, 0) and want["only_b"] == (0, 5),
      f"the programs counted {want}")
check(set(by) == set(want), f"functions {sorted(by)}, expected {sorted(want)}")
for f, (a, b) in want.items():
    r = by.get(f)
    if not r:
        continue
    check((int(r["calls_a"]), int(r["calls_b"])) == (a, b),
          f"{f}: calls {r['calls_a']} -> {r['calls_b']}, the programs counted {a} -> {b}")
    check(int(r["calls_change"]) == b - a, f"{f}: calls_change {r['calls_change']}")
    present = "both" if a and b else "a" if a else "b"
    check(r["present"] == present, f"{f}: present {r['present']}, expected {present}")
    for k in ("total", "self", "avg"):
        ka, kb = int(r[f"{k}_a_ns"]), int(r[f"{k}_b_ns"])
        check(int(r[f"{k}_change_ns"]) == kb - ka, f"{f}: {k}_change_ns is not {k}_b - {k}_a")
        pct = r[f"{k}_change_pct"]
        if ka:
            check(abs(float(pct) - 100.0 * (kb - ka) / ka) < 0.01, f"{f}: {k}_change_pct {pct}")
        else:
            check(pct == "", f"{f}: a % of nothing: {pct!r}")
    check(int(r["avg_a_ns"]) == (int(r["total_a_ns"]) // a if a else 0) or f in ("main", "run"),
          f"{f}: avg_a is not total / calls")
# nap: what the program measured around its sleeps, plus at most 5 ms a call
for side, slept, naps in (("a", slept_a, naps_a), ("b", slept_b, naps_b)):
    t = int(by["nap"][f"total_{side}_ns"])
    check(slept <= t <= slept + naps * 5_000_000,
          f"nap total in {side}: {t} ns, the program slept {slept} ns in {naps} naps")
sizes = [abs(int(r["total_change_ns"])) for r in rows]
check(sizes == sorted(sizes, reverse=True), f"not sorted by the change in total: {sizes}")
sys.exit(bad)
PY

CTX="[diff -s calls]"
ct_raw diff -s calls -f csv "$run_a" "$run_b"
expect_rc 0
got=$(csv_rows "$CT_OUT" '{function}:{calls_change}')
[ "$got" = "tick:10 nap:5 only_b:5 step:5 only_a:-3 main:0 run:0" ] || fail "sorted by calls: $got"

CTX="[diff -n 2 json]"
ct_raw diff -n 2 -f json "$run_a" "$run_b"
expect_rc 0
python3 - "$CT_OUT" <<'PY' || fail "json: $(head -c 600 "$CT_OUT")"
import json, sys
d = json.load(open(sys.argv[1]))
f = d["functions"]
assert len(f) == 2, f
assert all(x["a"] and x["b"] for x in f)
assert abs(f[0]["change"]["total_ns"]) >= abs(f[1]["change"]["total_ns"])
PY
ct_raw diff -s name -f json "$run_a" "$run_b"
python3 - "$CT_OUT" <<'PY' || fail "json gone/new: $(head -c 600 "$CT_OUT")"
import json, sys
f = {x["name"]: x for x in json.load(open(sys.argv[1]))["functions"]}
assert f["only_a"]["b"] is None and f["only_a"]["a"]["calls"] == 3 and f["only_a"]["present"] == "a"
assert f["only_b"]["a"] is None and f["only_b"]["b"]["calls"] == 5
assert f["only_b"]["change"]["total_pct"] is None
assert f["step"]["change"]["calls"] == 5
assert list(f) == sorted(f), list(f)
PY

CTX="[diff table]"
ct_raw diff "$run_a" "$run_b"
expect_rc 0
grep -qE '^ +- +5 .* new  only_b$' "$CT_OUT" || fail "only_b is not shown new: $(cat "$CT_OUT")"
grep -qE '^ +3 +- .* gone  only_a$' "$CT_OUT" || fail "only_a is not shown gone: $(cat "$CT_OUT")"
grep -qE '^ +5 +10 .*  step$' "$CT_OUT" || fail "step: $(cat "$CT_OUT")"

CTX="[diff --tree]"
ct_raw diff --tree -f csv "$run_a" "$run_b"
expect_rc 0
got=$(csv_rows "$CT_OUT" '{stack}:{status}:{calls_a}>{calls_b}')
want="main:same:1>1 main;run:same:1>1 main;run;only_a:vanished:3>0 main;run;only_b:appeared:0>5"
want+=" main;run;step:changed:5>10 main;run;step;nap:changed:5>10 main;run;step;tick:changed:10>20"
[ "$got" = "$want" ] || fail "aligned trees: $got"
ct_raw diff --tree "$run_a" "$run_b"
expect_rc 0
grep -qE '^- +3 +- .*gone +only_a$' "$CT_OUT" || fail "tree table, only_a: $(cat "$CT_OUT")"
grep -qE '^\+ +- +5 .*new +only_b$' "$CT_OUT" || fail "tree table, only_b: $(cat "$CT_OUT")"
grep -qE '^~ +5 +10 .*      nap$' "$CT_OUT" || fail "tree table, nap indented: $(cat "$CT_OUT")"
ct_raw diff --tree -f json "$run_a" "$run_b"
python3 - "$CT_OUT" <<'PY' || fail "tree json: $(head -c 800 "$CT_OUT")"
import json, sys
t = json.load(open(sys.argv[1]))["tree"]
assert [x["name"] for x in t] == ["main"]
run = t[0]["children"][0]
assert run["name"] == "run" and run["status"] == "same"
kids = {x["name"]: x for x in run["children"]}
assert kids["only_a"]["status"] == "vanished" and kids["only_a"]["b"] is None
assert kids["step"]["a"]["calls"] == 5 and kids["step"]["b"]["calls"] == 10
assert [x["name"] for x in kids["step"]["children"]] == ["nap", "tick"]
PY

CTX="[diff filters]"
ct_raw diff -N step -f csv "$run_a" "$run_b"
expect_rc 0
grep -q '^"step"' "$CT_OUT" && fail "-N step: step still shown"
grep -q '^"nap",both,5,10,' "$CT_OUT" || fail "-N step lost nap: $(cat "$CT_OUT")"

CTX="[diff errors]"
ct_raw diff "$run_a"
expect_rc 2
grep -q 'give two run directories' "$CT_ERR" || fail "one run: $(cat "$CT_ERR")"
ct_raw diff "$run_a" "$T/nothing-here"
expect_rc 1
ct_raw diff -s bogus "$run_a" "$run_b"
expect_rc 2
grep -q "one of total, self, calls, avg, name" "$CT_ERR" || fail "bad key: $(cat "$CT_ERR")"
exit 0
