#!/bin/bash
# fork(): the child process is traced too (its calls carry the child's pid);
# work() is called 10 times in the parent and 30 times in the child, which
# _exit()s from main. The child's main is its parent's call, inherited: shown
# (child_main nests in it) but neither a call of the child nor unfinished.
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
    # the child's copy of main is inherited, not a call it made
    chk check-unfinished
    chk check-counts main=1 child_main=1
done
