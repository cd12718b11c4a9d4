#!/bin/bash
# --engine=inject -p: attach to a multi-threaded program whose threads are deep inside traced
# calls, record, detach; twice; then a third time, SIGKILL calltrace, and the program goes on:
# new threads, a fork while its threads make traced calls, full rings. The program drives its
# threads in phases through a FIFO (tests/progs/attach_phases.c), so the calls made while
# calltrace was there are exactly those of a phase: the trace must hold exactly them. It checks
# its own results, and that every return address a detach left behind is its own; it must end
# with exit 0.
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/attachlib.sh"
require_calltrace
build attach_phases O2
WORKERS=4 HOLD=300 ROUNDS=40 DEPTH=200
target_start "$BIN"

attached() { grep -q "functions traced in process $PROG" "$1"; }

# attach_phase N [OPTIONS]: attach, run phase N ("go"), wait until the program's threads hold
# their calls again; calltrace is left running as $ct.
attach_phase() {
    local n=$1
    shift
    "$CALLTRACE" -v --engine=inject -p "$PROG" -o "$T/run$n" "$@" 2>"$T/ct$n.err" &
    ct=$!
    wait_until 30 "calltrace to attach" attached "$T/ct$n.err"
    echo go >&3
    wait_until 30 "phase $n to end" grep -qx "p$n done" "$PROG_LOG"
    grep "^p$n count " "$PROG_LOG" | sed "s/^p$n //" >"$T/p$n.counts"
}

for n in 1 2; do
    CTX="[attach $n]"
    attach_phase $n
    kill -INT "$ct"
    wait "$ct"
    CT_RC=$?
    [ "$CT_RC" = 0 ] || fail "calltrace exited $CT_RC: $(tail -5 "$T/ct$n.err")"
    traced_by "$PROG" 0 || fail "the program is still traced after calltrace exited"
    grep -v '^calltrace\[' "$T/ct$n.err" | grep -v '^calltrace: trace in' | grep . &&
        fail "calltrace said more than its summary: $(cat "$T/ct$n.err")"
    CT_TRACE=$T/run$n/trace.json
    chk check-nesting
    chk check-counts -f "$T/p$n.counts"
    # exactly the calls held at the detach are unfinished: hold(HOLD)..hold(0) in each thread
    unfinished=()
    for _ in $(seq 1 $((WORKERS * (HOLD + 1)))); do unfinished+=(hold); done
    chk check-unfinished "${unfinished[@]}"
    grep -qx "count descend $((WORKERS * ROUNDS * (DEPTH + 1)))" "$T/p$n.counts" ||
        fail "the program's own count is not what the test expects: $(cat "$T/p$n.counts")"
done

CTX="[SIGKILL]"
attach_phase 3 --buffer-size 64K
kill -KILL "$ct"
wait "$ct" 2>/dev/null
echo go-killed >&3 # full rings, new threads, a fork, returns through hooks nobody took out
wait_until 60 "the phase after calltrace died to end" grep -qx "p4 done" "$PROG_LOG"
target_finish 'rounds >0 errors 0 bad_sum 0 bad_return 0 bad_child 0'
echo "2 attach/detach cycles with exact counts, then SIGKILL: the program ran on unharmed"
