#!/bin/bash
# calltrace -p leaving a program while one of its threads waits in vfork() (system(), popen()
# and posix_spawn() do this): the parent is blocked in the kernel until its child execs or
# exits, and nothing stops it meanwhile. calltrace must let the child go first, and the parent
# once it can stop; holding the child while waiting for the parent stops both for ever.
#   held:  the vfork child of tests/progs/vforker.c waits for a line from the test, so the
#          detach always finds the parent inside vfork(), its child traced and running.
#   spawn: attach and detach at pseudo-random moments while a thread posix_spawns /bin/true
#          without pause (the detach then also meets vfork events and children being born).
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/attachlib.sh"
require_calltrace
build vforker O2
RANDOM=${CT_SEED:-77}

tracer_of() { awk '/^TracerPid:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
# stop_ct [SIG]: sends calltrace ($ct) SIG, if given, and waits for it, at most 60 s (then
# SIGKILLs it and fails: a hung detach); sets CT_RC
stop_ct() {
    [ -n "${1:-}" ] && kill -"$1" "$ct"
    if ! within 60 pid_ended "$ct"; then
        kill -KILL "$ct"
        wait "$ct"
        BG=""
        fail "calltrace did not finish its detach within 60 s after SIGINT (SIGKILLed): the" \
            "program's tasks: $(for t in /proc/"$PROG"/task/*; do printf '%s ' "${t##*/}:$(proc_state "${t##*/}")"; done)"
    fi
    wait "$ct"
    CT_RC=$?
    BG=""
}

# ---- held: the detach finds the parent inside vfork() -----------------------------------------
CTX="[held]"
target_start "$BIN"
BG_PROG=$PROG # killed if the test ends early (testlib.sh)
"$CALLTRACE" "${CT_ENGINE_OPT[@]}" -q -p "$PROG" -o "$T/run1" 2>"$T/ct1.err" &
ct=$! BG=$!
wait_until 30 "calltrace to attach" traced_by "$PROG" "$ct"
wait_until 30 "calls to be recorded" recording "$T/run1/events.ctr"
echo vfork >&3
wait_until 30 "the vfork child to start" grep -q '^child ' "$PROG_LOG"
child=$(awk '$1 == "child" { print $2 }' "$PROG_LOG")
[ "$(tracer_of "$child")" = "$ct" ] || fail "the vfork child $child is not traced by calltrace"
kill -INT "$ct"
# The child must be let go while its parent still waits for it: calltrace cannot stop the
# parent before that. Not let go within 30 s: calltrace holds it and waits for the parent.
if ! within 30 traced_by "$child" 0; then
    state=$(proc_state "$child")
    kill -KILL "$ct"
    fail "30 s after SIGINT calltrace still traces the vfork child (state $state) while its" \
        "parent waits in vfork(): the detach waits for a parent that cannot stop (hung, SIGKILLed)"
fi
echo go >&3 # the child execs, the parent returns from vfork() and can stop
stop_ct
attach_checks 1
wait_until 30 "the parent to see its child's end" grep -q '^vfork done' "$PROG_LOG"
target_finish 'calls>0 1 spawns>0 0 vforks 1 errors 0'

# ---- spawn: attach and detach at any moment while a thread posix_spawns -----------------------
CTX="[spawn]"
rm -f "$T/ctl"
target_start_spawn() {
    mkfifo "$T/ctl" || fail "cannot create a FIFO in $T"
    "$BIN" spawn <"$T/ctl" >"$T/prog.out" 2>&1 &
    PROG=$! PROG_LOG=$T/prog.out BG_PROG=$!
    exec 3>"$T/ctl"
    wait_until 10 "the program to start" grep -q ready "$T/prog.out"
}
target_start_spawn
CYCLES=${ATTACH_CYCLES:-12}
[ -n "${CALLTRACE_REAL:-}" ] && CYCLES=${ATTACH_CYCLES:-3} # under valgrind: 20x slower
for i in $(seq 2 $((CYCLES + 1))); do
    delay_ms=$((RANDOM % 300))
    CTX="[spawn, SIGINT ${delay_ms} ms after the first calls, cycle $i]"
    "$CALLTRACE" "${CT_ENGINE_OPT[@]}" -q -p "$PROG" -o "$T/run$i" 2>"$T/ct$i.err" &
    ct=$! BG=$!
    wait_until 30 "calltrace to attach" traced_by "$PROG" "$ct"
    wait_until 30 "calls to be recorded" recording "$T/run$i/events.ctr"
    # the moment, not a synchronisation: any point of the spawn loop is right
    sleep "$(printf '0.%03d' "$delay_ms")"
    stop_ct INT
    attach_checks "$i"
    rm -rf "$T/run$i"
done
CTX="[spawn]"
target_finish 'calls>0 1 spawns>0 1 vforks 0 errors 0'
echo "held vfork: child let go, then its parent; $CYCLES attach cycles on a posix_spawn loop"
