#!/bin/bash
# Honest numbers and closing line.
#  - A function the inject engine gives a breakpoint (tiny_ret, 1 byte: no jump fits it) is
#    marked "breakpoint" in report (table, csv, json), tree and both traces (traced_by), only
#    it, and counted in the closing line; under the ptrace engine nothing is marked.
#  - The closing line counts the threads and processes that made calls (an idle thread left out
#    by -F is not one) and says which engine traced them; a forked child of an injected process
#    is traced by breakpoints until it execs: "inject engine in 1, breakpoints in 1", and only
#    the child's calls are marked.
#  - The IFUNC resolver calltrace calls in the program (-l) is not recorded as the program's:
#    the trace has as many calls of it as the untraced program made.
#  - Dropped calls name their one cause (a ring that stayed full).
#  - -v says nothing of the vDSO ("linux-vdso.so.1: No such file or directory").
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build honest O2 -ldl
PROG=$BIN
FILTER=(-F caller -F work -F tiny_ret)

# counts_by KEY: "NAME VALUE N" of the run's trace (both formats agree, see chk)
CTX="[marks]"
plain_run "$PROG" 5
ct_run "${FILTER[@]}" -- "$PROG" 5
expect_trace
same_stdout
chk check-counts -f "$CT_OUT"
[ "$(query summary | awk '$1 == "threads" { print $2 }')" = 1 ] || fail "threads with calls: $(query summary)"
if [ "$CT_ENGINE" = inject ]; then
    engine="inject engine" marked=1
    want_marks="caller - 5
tiny_ret breakpoint 5
work - 5"
else
    engine="ptrace engine" marked=0
    want_marks="caller - 5
tiny_ret - 5
work - 5"
fi
got=$(query arg-counts traced_by)
[ "$got" = "$want_marks" ] || fail "traced_by in the trace: $got"
closing="calltrace: trace in $CT_DIR/trace.json and trace.pftrace: 15 calls, 1 thread, 1 process ($engine)"
grep -qxF "$closing" "$CT_ERR" || fail "closing line: expected '$closing', got: $(grep 'trace in' "$CT_ERR")"
bp_line="calltrace: 1 function traced by breakpoints (marked in report, tree and the trace): its calls' times include two ptrace stops each, some 25 us"
if [ $marked = 1 ]; then
    grep -qxF "$bp_line" "$CT_ERR" || fail "the closing line does not count the function: $(cat "$CT_ERR")"
else
    grep -q 'traced by breakpoints' "$CT_ERR" && fail "ptrace engine: $(cat "$CT_ERR")"
fi
run=$CT_DIR

ct_raw report "$run"
expect_rc 0
got=$(grep -c '(breakpoint)$' "$CT_OUT")
[ "$got" = $marked ] || fail "report: $got lines marked: $(cat "$CT_OUT")"
[ $marked = 0 ] || grep -q ' tiny_ret (breakpoint)$' "$CT_OUT" || fail "report: tiny_ret not marked: $(cat "$CT_OUT")"
[ $marked = 0 ] || grep -q "^calltrace: $run: the functions marked breakpoint were traced by breakpoints" "$CT_ERR" ||
    fail "report does not say what the mark means: $(cat "$CT_ERR")"
ct_raw report -f csv -s name "$run"
got=$(python3 -c 'import csv,sys; print(" ".join(r["function"] + "=" + r["breakpoint"] for r in csv.DictReader(open(sys.argv[1]))))' "$CT_OUT")
[ "$got" = "caller=0 tiny_ret=$marked work=0" ] || fail "report csv: $got"
ct_raw report -f json -s name "$run"
got=$(python3 -c 'import json,sys; print(" ".join("%s=%d" % (f["name"], f["breakpoint"]) for f in json.load(open(sys.argv[1]))["functions"]))' "$CT_OUT")
[ "$got" = "caller=0 tiny_ret=$marked work=0" ] || fail "report json: $got"
ct_raw tree "$run"
expect_rc 0
[ "$(grep -c 'breakpoint' "$CT_OUT")" = $((5 * marked)) ] && [ "$(grep 'breakpoint' "$CT_OUT" | grep -vc ' tiny_ret(); /\* breakpoint \*/$')" = 0 ] ||
    fail "tree: the marks are not on tiny_ret's calls alone: $(grep breakpoint "$CT_OUT" | head -5)"

CTX="[one call]"
ct_run -F caller -- "$PROG" 1
expect_rc 0
chk check-counts caller=1
closing="calltrace: trace in $CT_DIR/trace.json and trace.pftrace: 1 call, 1 thread, 1 process ($engine)"
grep -qxF "$closing" "$CT_ERR" || fail "closing line: expected '$closing', got: $(grep 'trace in' "$CT_ERR")"

CTX="[threads with calls]"
ct_run "$PROG" 5
expect_rc 0
[ "$(query summary | awk '$1 == "threads" { print $2 }')" = 2 ] || fail "idle traced: $(query summary)"
grep -q "^calltrace: trace in .*: [0-9]* calls, 2 threads, 1 process ($engine)\$" "$CT_ERR" ||
    fail "closing line: $(grep 'trace in' "$CT_ERR")"

CTX="[forked child]"
build forks O2
ct_run "$BIN"
expect_rc 0
if [ $marked = 1 ]; then
    grep -q "^calltrace: trace in .*: 42 calls, 2 threads, 2 processes (inject engine in 1, breakpoints in 1)\$" "$CT_ERR" ||
        fail "closing line: $(grep 'trace in' "$CT_ERR")"
    child=$(query processes | sed -n 2p)
    ct_raw tree "$CT_DIR"
    python3 - "$CT_OUT" "$child" <<'PY' || fail "tree: the marks are not on the child's calls alone"
import re, sys
pid, marks = None, {}
for line in open(sys.argv[1]):
    m = re.match(r"# pid (\d+),", line)
    if m:
        pid = m.group(1)
    elif re.search(r"\bwork\(\);", line):
        marks.setdefault(pid, set()).add(line.rstrip().endswith("/* breakpoint */"))
child = sys.argv[2]
ok = marks.get(child) == {True} and all(v == {False} for p, v in marks.items() if p != child)
sys.exit(0 if ok else "marks by pid: %s (child %s)" % (marks, child))
PY
else
    grep -q "^calltrace: trace in .*: 42 calls, 2 threads, 2 processes (ptrace engine)\$" "$CT_ERR" ||
        fail "closing line: $(grep 'trace in' "$CT_ERR")"
fi

CTX="[IFUNC resolver]"
build_shared ifunc_lib O2 honest/libifunc.so
plain_run "$PROG" 1 ifunc "$LIB"
untraced=$(awk '$1 == "resolver" { print $2 }' "$PL_OUT")
[ "$untraced" = 1 ] || fail "the untraced program called the resolver $untraced times"
ct_run -l 'libifunc*' -F pick_twice -F twice_shift -F twice_add -- "$PROG" 1 ifunc "$LIB"
expect_rc 0
got=$(query counts | awk '$1 == "pick_twice" { print $2 }')
[ "$got" = "$untraced" ] || fail "the trace has $got calls of the resolver, the program made $untraced"

if [ "$CT_ENGINE" = inject ]; then
    CTX="[dropped: ring full]"
    build ring_overflow O2
    ct_run --buffer-size 64K -- "$BIN" 20000
    expect_rc 0
    grep -qE "^calltrace: [0-9]+ calls were not recorded: a thread's ring stayed full \(--buffer-size makes rings larger\)\$" "$CT_ERR" ||
        fail "not the one cause: $(grep 'not recorded' "$CT_ERR")"
fi

CTX="[-v]"
ct_run -v -- "$PROG" 1
expect_rc 0
ct_run -v -l 'libc.so*' -F 'nomatch*' -- "$PROG" 1
grep -E 'vdso|No such file' "$CT_ERR" && fail "-v: harmless-looking errors"
exit 0
