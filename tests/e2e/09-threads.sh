#!/bin/bash
# Threads: 4 threads, then 2 more created later that each create a
# grandchild; work() counts per thread must be exact; 10 threads in all
# (main + 9); the thread still blocked in blocker() when main returns has an
# unfinished blocker call.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
for opt in O0 O2; do
    CTX="[threads -$opt]"
    build threads "$opt"
    standard_case "$BIN"
    chk check-per-tid work 25 25 25 25 50 100 150 200
    chk check-per-tid worker 1 1 1 1 1 1
    chk check-per-tid main 1
    n=$(query threads | wc -l)
    [ "$n" = 10 ] || fail "expected calls on 10 distinct threads, the trace has $n: $(query threads | tr '\n' ' ')"
    p=$(query processes | wc -l)
    [ "$p" = 1 ] || fail "expected 1 process, the trace has $p"
    chk check-unfinished blocker
    chk check-parent work worker parent_worker
    chk check-parent worker '<root>'
    chk check-parent blocker '<root>'
done
