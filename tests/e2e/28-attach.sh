#!/bin/bash
# calltrace -p: attach to a running multi-threaded program 50 times and detach
# each time, while it computes checksums through traced functions, handles
# signals, blocks in read() and nanosleep(), and creates threads. The program
# checks itself: every checksum against inline arithmetic, every signal
# handled, no EINTR, no short sleep. It must end with exit 0 and its figures.
# calltrace is stopped by SIGINT, SIGTERM and SIGHUP in turn, each as soon as
# it has recorded its first calls: wherever the program's threads are then.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
engine_unsupported inject "attaching (-p) is not supported yet"
build attachee O2

mkfifo "$T/ctl"
"$BIN" <"$T/ctl" >"$T/prog.out" 2>&1 &
PROG=$!
exec 3>"$T/ctl" # keeps the program's stdin open until we say stop
wait_until 10 "the program to start" grep -q ready "$T/prog.out"

traced_by() { grep -q "^TracerPid:[[:space:]]*$2\$" "/proc/$1/status"; }
# the run's record has grown past its header: calls are being recorded
recording() { [ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -gt 4096 ]; }

CYCLES=${ATTACH_CYCLES:-50}
calls_seen=0
for i in $(seq 1 "$CYCLES"); do
    CTX="[attach cycle $i]"
    "$CALLTRACE" -q -p "$PROG" -o "$T/run$i" 2>"$T/ct$i.err" &
    ct=$!
    wait_until 10 "calltrace to attach" traced_by "$PROG" "$ct"
    # let it record something: the record grows past its header
    wait_until 10 "calls to be recorded" recording "$T/run$i/events.ctr"
    sigs=(INT TERM HUP)
    kill -"${sigs[i % 3]}" "$ct" # each of the stop signals in turn
    wait "$ct"
    rc=$?
    [ "$rc" = 0 ] || fail "calltrace exited $rc: $(head -c 500 "$T/ct$i.err")"
    [ -s "$T/ct$i.err" ] && fail "calltrace -q wrote to stderr: $(head -c 500 "$T/ct$i.err")"
    traced_by "$PROG" 0 || fail "the program is still traced after calltrace exited"
    kill -0 "$PROG" 2>/dev/null || fail "the program died: $(cat "$T/prog.out")"
    CT_TRACE=$T/run$i/trace.json
    chk check-nesting
    n=$(python3 "$CHECKER" counts "$CT_TRACE" | awk '$1 == "step" { print $2 }')
    calls_seen=$((calls_seen + ${n:-0}))
done
CTX=""
[ "$calls_seen" -gt 0 ] || fail "no call of step() was recorded in $CYCLES attachments"

echo stop >&3
exec 3>&-
wait "$PROG"
rc=$?
[ "$rc" = 0 ] || fail "the program exited $rc after being traced: $(cat "$T/prog.out")"
grep -qx 'rounds>0 1 signals exact threads>0 1 reads exact errors 0' "$T/prog.out" ||
    fail "the program's own checks failed: $(cat "$T/prog.out")"
echo "$CYCLES cycles, $calls_seen calls of step() recorded"
