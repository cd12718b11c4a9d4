#!/bin/bash
# Fault: the traced program is SIGKILLed in the middle of a call. calltrace must exit with
# 128+9 like the program, and write a valid trace whose open calls are marked unfinished:
#   park: killed while parked in main -> hold -> park after N calls (exact expectations)
#   busy: killed after a pseudo-random number of its own progress markers (several runs)
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build faults O2
RANDOM=${CT_SEED:-50}

summary_calls() { query summary | sed -n 's/^calls //p'; }

CTX="[park]"
ct_start_bg "$BIN" park "$T/ctr" "$T/pid" 500
wait_until 30 "the program to park after 500 calls" progress_ge "$T/ctr" 501
BG_PROG=$(cat "$T/pid")
kill -KILL "$BG_PROG"
ct_wait_bg 30
expect_rc 137 "the program was killed by SIGKILL"
expect_trace
chk check-nesting
chk check-counts work=500 hold=1 park=1
chk check-unfinished main hold park
chk check-parent park hold
note "killed while parked: $(summary_calls) calls in the trace"

for run in 1 2 3 4; do
    n=$((1000 + RANDOM % 20000))
    CTX="[busy run $run, kill after $n markers]"
    rm -f "$T/ctr" "$T/pid"
    ct_start_bg "$BIN" busy "$T/ctr" "$T/pid" 75
    wait_until 60 "$n progress markers" progress_ge "$T/ctr" "$n"
    BG_PROG=$(cat "$T/pid")
    kill -KILL "$BG_PROG"
    at=$(progress "$T/ctr")
    ct_wait_bg 30
    expect_rc 137 "the program was killed by SIGKILL"
    expect_trace
    chk check-nesting
    chk check-unfinished --may main --may level1 --may level2 --may work
    # Every work call that returned is in the trace: at least as many as the markers seen.
    works=$(query counts | sed -n 's/^work //p')
    [ "${works:-0}" -ge "$n" ] || fail "trace has ${works:-0} work calls, the program counted $at"
    note "killed after $at markers: $works work calls, $(summary_calls) calls in the trace"
done
