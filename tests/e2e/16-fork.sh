#!/bin/bash
# fork(): the child process is traced too (its calls carry the child's pid);
# work() is called 10 times in the parent and 30 times in the child, which
# _exit()s from main (so the child's main is unfinished).
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
for opt in O0 O2; do
    CTX="[forks -$opt]"
    build forks "$opt"
    standard_case "$BIN"
    p=$(query processes | wc -l)
    [ "$p" = 2 ] || fail "expected calls in 2 processes, the trace has $p"
    chk check-per-tid work 10 30
    chk check-parent child_main main
    # the child leaves main through _exit(): its main call is unfinished
    chk check-unfinished main
done
