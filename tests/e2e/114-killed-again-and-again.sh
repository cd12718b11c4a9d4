#!/bin/bash
# calltrace -p SIGKILLed while it records, attached again at once, and again, on a program of
# 4096 small functions close together that checks every result (tests/progs/stale_torn.c); a
# last calltrace detaches normally. The program must go on computing right through all of it.
#
# What each calltrace finds there is what the one before left: a stale jump to a dead stub over
# every entry, and a thread inside the dead calltrace's code, often waiting for room in a ring
# that nobody drains now. Before the fixes:
#   - some displacement bytes of those jumps read as a 2-byte jcc to another stale jump, the
#     shape of a hop: taken for one, the file's 2 bytes put back over them tore the jump, and
#     the next call ran the torn half (SIGTRAP; redis in e2e 90);
#   - a thread waiting in the dead ring could not be stepped out within 4096 steps (200 futex
#     waits of 1 ms): it kept the dead block while the new calltrace patched, its calls hooked
#     through the new code into the old shadow stack, and after the next kill and attach it
#     returned through an exit whose shadow entry was gone (SIGILL, ud2 "cannot happen").
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/attachlib.sh"
require_calltrace
engine_unsupported ptrace "the ptrace engine's breakpoints kill a program whose calltrace died"
build stale_torn O2
target_start "$BIN"
ROUNDS=${KILL_ROUNDS:-8}
[ -n "${CALLTRACE_REAL:-}" ] && ROUNDS=${KILL_ROUNDS:-3} # under valgrind: 43 s for 8

alive() { ! pid_ended "$PROG"; }
let_go() { pid_ended "$PROG" || traced_by "$PROG" 0; }
stuck() { grep -q "cannot move it out" "$T/ct$r.err"; }
recording_or_stuck() { recording "$T/run$r/events.ctr" || stuck; }

for r in $(seq 1 "$ROUNDS"); do
    CTX="[kill $r]"
    "$CALLTRACE" --engine=inject -q -p "$PROG" -o "$T/run$r" 2>"$T/ct$r.err" &
    ATTACH_CT=$!
    wait_until 30 "calltrace to attach" traced_by "$PROG" "$ATTACH_CT"
    wait_until 30 "calls to be recorded" recording_or_stuck
    stuck && fail "a thread stayed in the dead calltrace's code: $(head -c 500 "$T/ct$r.err")"
    kill -KILL "$ATTACH_CT"
    wait "$ATTACH_CT" 2>/dev/null
    ATTACH_CT=""
    wait_until 10 "the program to be let go" let_go
    alive || fail "the program died after calltrace was killed: $(tail -3 "$PROG_LOG")"
    rm -rf "$T/run$r"
done

CTX="[last, -t 1]"
"$CALLTRACE" --engine=inject -q -t 1 -p "$PROG" -o "$T/last" 2>"$T/last.err"
CT_RC=$?
[ "$CT_RC" = 0 ] || fail "calltrace exited $CT_RC: $(head -c 500 "$T/last.err")"
[ -s "$T/last.err" ] && fail "calltrace -q wrote to stderr: $(head -c 500 "$T/last.err")"
traced_by "$PROG" 0 || fail "the program is still traced after calltrace exited"
alive || fail "the program died: $(tail -3 "$PROG_LOG")"
target_finish "rounds ok"
echo "the program computed right through $ROUNDS SIGKILLs of calltrace, each attached again at once"
