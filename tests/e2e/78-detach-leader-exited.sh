#!/bin/bash
# calltrace -p leaving a program whose main thread called pthread_exit while calltrace was
# attached: the process runs on, its main thread a zombie that never stops again, and that
# waitpid reports only once every other thread has ended (while calltrace holds them stopped:
# never). The detach must not wait for it, must let the other threads go, and the program must
# run on untraced and end as usual, its exit status reaching its parent.
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/attachlib.sh"
require_calltrace
build leader_exit O2

leader_zombie() { [ "$(proc_state "$PROG")" = Z ]; }

CTR=$T/progress
mkfifo "$T/ctl" || fail "cannot create a FIFO in $T"
"$BIN" "$CTR" <"$T/ctl" >"$T/prog.out" 2>&1 &
PROG=$! PROG_LOG=$T/prog.out
BG_PROG=$PROG # killed if the test ends early (testlib.sh)
exec 3>"$T/ctl"
wait_until 10 "the program to start" grep -q ready "$PROG_LOG"

"$CALLTRACE" "${CT_ENGINE_OPT[@]}" -q -p "$PROG" -o "$T/run" 2>"$T/ct.err" &
ct=$! BG=$!
wait_until 30 "calltrace to attach" traced_by "$PROG" "$ct"
wait_until 30 "calls to be recorded" recording "$T/run/events.ctr"
echo exit >&3 # the main thread calls pthread_exit
wait_until 30 "the main thread to end (a zombie)" leader_zombie
kill -INT "$ct"
if ! within 30 pid_ended "$ct"; then
    kill -KILL "$ct"
    fail "calltrace did not finish its detach within 30 s after SIGINT (SIGKILLed): it waits" \
        "for the main thread, a zombie until the threads it holds end"
fi
wait "$ct"
CT_RC=$? BG=""
attach_checks ""
n=$(python3 "$CHECKER" counts "$CT_TRACE" | awk '$1 == "work" { print $2 }')
[ "${n:-0}" -gt 0 ] || fail "the trace has no call of work() (the worker thread's)"
# untraced, the worker goes on
before=$(progress "$CTR")
wait_until 10 "the worker thread to go on after the detach" progress_ge "$CTR" $((before + 10))
target_finish 'calls>0 1 errors 0'
echo "main thread exited under calltrace: detached, $n calls of work() recorded, the program ran on"
