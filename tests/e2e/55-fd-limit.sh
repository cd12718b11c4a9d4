#!/bin/bash
# Fault: more open files than allowed. calltrace needs one descriptor per traced process:
#   soft limit 16: calltrace raises its own limit to the hard one, the program keeps 16 (it
#                  opens as many files as untraced) and 40 live children are all traced
#   hard limit 12: calltrace cannot follow every child's memory: the program still runs as
#                  untraced, the trace is valid, and calltrace says which limit to raise
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build faults O2

CTX="[soft limit 16]"
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] || [ "$hard" -ge 200 ] || fail "hard limit of open files is only $hard"
(
    ulimit -Sn 16 || exit 1
    plain_run "$BIN" openmax
    ct_run "$BIN" openmax
    expect_trace
    # Under valgrind (make check VALGRIND=1) the program inherits valgrind's real limit, not
    # the one valgrind shows calltrace: only the trace is compared then.
    [ -n "${CALLTRACE_REAL:-}" ] || same_stdout
    chk check-counts -f "$CT_OUT"
    note "the program opened $(sed -n 's/^opened //p' "$CT_OUT") files traced, $(sed -n 's/^opened //p' "$PL_OUT") untraced"
    if [ -n "${CALLTRACE_REAL:-}" ]; then
        note "40 live children: skipped under valgrind, which keeps the limit it started with"
        exit 0
    fi
    ct_run "$BIN" forks 40 3
    expect_rc 0
    expect_trace
    grep -qx 'children failed 0' "$CT_OUT" || fail "children failed: $(cat "$CT_OUT")"
    chk check-nesting
    chk check-counts work=121 level1=121 level2=121
    chk check-unfinished --may main
    n=$(query processes | wc -l)
    [ "$n" = 41 ] || fail "trace has calls in $n processes, expected 41"
    grep -q 'could not be recorded' "$CT_ERR" && fail "calltrace lost processes: $(cat "$CT_ERR")"
    note "40 live children under a soft limit of 16: $(query summary | sed -n 's/^calls //p') calls, all recorded"
) || exit 1

if [ -n "${CALLTRACE_REAL:-}" ]; then
    note "skipped under valgrind: it needs more than 12 descriptors to start"
    exit 0
fi
CTX="[hard limit 12]"
(
    ulimit -n 12 || exit 1
    plain_run "$BIN" forks 20 3
    ct_run "$BIN" forks 20 3
    expect_trace
    same_rc
    same_stdout
    chk check-nesting
    grep -q '^calltrace: process [0-9]*: cannot open /proc/[0-9]*/mem: Too many open files; its calls are not recorded (raise the limit of open files, ulimit -n)$' "$CT_ERR" ||
        fail "no 'Too many open files' message: $(head -c 800 "$CT_ERR")"
    lost=$(sed -n 's/^calltrace: the calls of \([0-9]*\) process.* could not be recorded$/\1/p' "$CT_ERR")
    [ -n "$lost" ] && [ "$lost" -gt 0 ] || fail "no closing count of processes not recorded: $(cat "$CT_ERR")"
    note "20 live children under a hard limit of 12: $lost not recorded, $(query summary | sed -n 's/^calls //p') calls in the trace"
) || exit 1
