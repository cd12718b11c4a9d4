#!/bin/bash
# calltrace -p on a program that creates threads and processes from its main
# thread without pause: attaches often find it inside clone() or fork(), where
# calltrace must not run its own system calls in that thread before the
# kernel has returned the new thread's or child's id. The program checks
# every pthread_create, fork, join and child status itself.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build spawner O2

mkfifo "$T/ctl"
"$BIN" <"$T/ctl" >"$T/prog.out" 2>&1 &
PROG=$!
exec 3>"$T/ctl"
wait_until 10 "the program to start" grep -q ready "$T/prog.out"

traced_by() { grep -q "^TracerPid:[[:space:]]*$2\$" "/proc/$1/status"; }
recording() { [ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -gt 4096 ]; }

CYCLES=${ATTACH_CYCLES:-40}
for i in $(seq 1 "$CYCLES"); do
    CTX="[attach cycle $i]"
    "$CALLTRACE" -q -p "$PROG" -o "$T/run$i" 2>"$T/ct$i.err" &
    ct=$!
    wait_until 10 "calltrace to attach" traced_by "$PROG" "$ct"
    wait_until 10 "calls to be recorded" recording "$T/run$i/events.ctr"
    kill -INT "$ct"
    wait "$ct"
    rc=$?
    [ "$rc" = 0 ] || fail "calltrace exited $rc: $(head -c 500 "$T/ct$i.err")"
    [ -s "$T/ct$i.err" ] && fail "calltrace -q wrote to stderr: $(head -c 500 "$T/ct$i.err")"
    kill -0 "$PROG" 2>/dev/null || fail "the program died: $(cat "$T/prog.out")"
    grep -vqx ready "$T/prog.out" && fail "the program saw an error: $(grep -vx ready "$T/prog.out" | head -3)"
    CT_TRACE=$T/run$i/trace.json
    chk check-nesting
done
CTX=""
exec 3>&-
wait "$PROG"
rc=$?
[ "$rc" = 0 ] || fail "the program exited $rc after being traced: $(cat "$T/prog.out")"
grep -qx 'threads>0 1 processes>0 1 errors 0' "$T/prog.out" ||
    fail "the program's own checks failed: $(cat "$T/prog.out")"
echo "$CYCLES cycles"
