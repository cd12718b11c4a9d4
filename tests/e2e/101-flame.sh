#!/bin/bash
# calltrace flame: tests/progs/naps.c with two threads (main and worker each make 4 calls of
# step() -> nap(2 ms), tick() x2). Folded stacks: exactly the program's stacks; the weights of
# each thread add up to its outermost call's total time (report --tid), per thread (-T) and
# merged; with --calls the weights are the calls the program counted; a left-out function's
# time goes to its caller (-N step). The SVG parses as XML and has a frame per stack, with the
# stack's weight, a tooltip naming it with its calls, and the script for zoom and search.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

build naps O0
ct_run "$BIN" 4 2000 threads
expect_rc 0
run=$CT_DIR

# the tid of the thread whose outermost function is $1, and that call's total time
root_of() {
    ct_raw report -F "$1" -D 1 -f csv "$run"
    expect_rc 0
    local total
    total=$(python3 -c 'import csv,sys; r=[x for x in csv.DictReader(open(sys.argv[1]))]; print(r[0]["total_ns"] if len(r) == 1 and r[0]["calls"] == "1" else "")' "$CT_OUT")
    [ -n "$total" ] || fail "no single outermost call of $1: $(cat "$CT_OUT")"
    echo "$total"
}
main_total=$(root_of main)
worker_total=$(root_of worker)
tids=$(python3 -c 'import json,sys; print(" ".join(sorted({str(e["tid"]) for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("ph") == "X"})))' "$run/trace.json")

# folded_check FILE PREFIX: the lines are "STACK WEIGHT", the stacks those of naps.c (after
# PREFIX, the thread's frame or nothing), and each thread's weights add up to its root's total
check_folded() {
    python3 - "$1" "$2" "$main_total" "$worker_total" <<'PY' || fail "folded stacks (see above): $(head -c 1500 "$1")"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
per_thread = sys.argv[2] == "T"
want = {"main": int(sys.argv[3]), "worker": int(sys.argv[4])}
sums, stacks, bad = {}, set(), 0
for line in lines:
    m = re.fullmatch(r"(\S.*) (\d+)", line)
    if not m:
        print(f"not 'STACK WEIGHT': {line!r}"); bad = 1; continue
    frames = m.group(1).split(";")
    if per_thread:
        if not re.fullmatch(r"\[pid \d+ tid \d+\]", frames[0]):
            print(f"no thread frame: {line!r}"); bad = 1; continue
        frames = frames[1:]
    stacks.add(";".join(frames))
    sums[frames[0]] = sums.get(frames[0], 0) + int(m.group(2))
expect = set()
for root in ("main", "worker"):
    expect |= {root, f"{root};run", f"{root};run;step", f"{root};run;step;nap", f"{root};run;step;tick"}
if stacks != expect:
    print(f"stacks {sorted(stacks)}, expected {sorted(expect)}"); bad = 1
if sums != want:
    print(f"weights add up to {sums}, the roots' totals are {want}"); bad = 1
sys.exit(bad)
PY
}

CTX="[flame]"
ct_raw flame "$run"
expect_rc 0
check_folded "$CT_OUT" merged

CTX="[flame -T]"
ct_raw flame -T "$run"
expect_rc 0
check_folded "$CT_OUT" T
got=$(sed -n 's/^\[pid [0-9]* tid \([0-9]*\)\];.*/\1/p' "$CT_OUT" | sort -u | tr '\n' ' ')
[ "$got" = "$(printf '%s ' $tids)" ] || fail "thread frames for tids '$got', the trace has '$tids'"

CTX="[flame --calls]"
ct_raw flame --calls "$run"
expect_rc 0
got=$(tr '\n' ',' <"$CT_OUT")
want="main 1,main;run 1,main;run;step 4,main;run;step;nap 4,main;run;step;tick 8,"
want+="worker 1,worker;run 1,worker;run;step 4,worker;run;step;nap 4,worker;run;step;tick 8,"
[ "$got" = "$want" ] || fail "calls: $got"

CTX="[flame -N step]"
ct_raw flame -N step "$run"
expect_rc 0
python3 - "$CT_OUT" "$main_total" <<'PY' || fail "-N step: $(cat "$CT_OUT")"
import sys
w = dict(l.rsplit(" ", 1) for l in open(sys.argv[1]).read().splitlines())
assert not any("step" in s for s in w), w
assert "main;run;nap" in w and "main;run;tick" in w, w
assert sum(int(v) for s, v in w.items() if s.startswith("main")) == int(sys.argv[2]), w
PY

CTX="[flame svg]"
ct_raw flame -o "$T/flame.svg" "$run"
expect_rc 0
ct_raw flame --calls --format svg "$run"
expect_rc 0
cp "$CT_OUT" "$T/calls.svg"
ct_raw flame "$run"
python3 - "$T/flame.svg" "$CT_OUT" "$T/calls.svg" <<'PY' || fail "the SVG (see above)"
import sys, xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
def frames(path):
    root = ET.parse(path).getroot()
    assert root.tag == NS + "svg", root.tag
    out = []
    for g in root.iter(NS + "g"):
        if g.get("class") != "f":
            continue
        title, rect, text = g.find(NS + "title"), g.find(NS + "rect"), g.find(NS + "text")
        assert title is not None and rect is not None and text is not None, ET.tostring(g)
        out.append((title.text, int(g.get("data-x")), int(g.get("data-w")), int(g.get("data-d")),
                    float(rect.get("width"))))
    script = root.find(NS + "script")
    assert script is not None and script.text, "no script"
    for needed in ("addEventListener('click'", "RegExp", "prompt(", "zoomed", "Reset zoom",
                   "'search'", "Matched: "):
        assert needed in script.text or needed in open(path).read(), f"script lacks {needed}"
    return out
weights = {}
for line in open(sys.argv[2]).read().splitlines():
    stack, w = line.rsplit(" ", 1)
    weights[stack] = int(w)
f = frames(sys.argv[1])
all_ = f[0]
assert all_[0].startswith("all\n") and all_[3] == 0 and all_[2] == sum(weights.values()), all_
assert abs(all_[4] - 1179.5) < 0.01, all_
# every stack whose frame is at least 0.1 px wide is drawn, with its subtree's weight
names = {}
for title, x, w, d, px in f[1:]:
    name, detail = title.split("\n")
    names.setdefault(name, []).append((w, d, detail))
    assert "call" in detail and "%" in detail, title
for root in ("main", "worker"):
    sub = sum(v for s, v in weights.items() if s == root or s.startswith(root + ";"))
    assert (sub, 1) in [(w, d) for w, d, _ in names[root]], (root, sub, names[root])
    assert names[root][0][2].startswith("1 call, "), names[root]
    nap = weights[f"{root};run;step;nap"]
    assert (nap, 4) in [(w, d) for w, d, _ in names["nap"]], (nap, names["nap"])
c = frames(sys.argv[3])
assert c[0][2] == 36 and c[0][0].startswith("all\n"), c[0]  # 2 x (main, run, 4 step, 4 nap, 8 tick)
PY
exit 0
