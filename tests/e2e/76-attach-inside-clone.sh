#!/bin/bash
# calltrace -p while a thread of the program is inside clone(), from before calltrace seized it:
# the kernel decided then that the new thread is not traced, and the thread exists only once the
# clone is over, after calltrace's scans of /proc/PID/task. tests/progs/clone_stall.c holds its
# clone up in the kernel (userfaultfd) until calltrace waits for that thread to stop; then the
# new thread makes traced calls. calltrace must have taken it over before it puts breakpoints in
# (an untraced thread's first int3 kills the program with SIGTRAP), and record its calls.
# Under load the same happens without userfaultfd, rarely (seen in e2e 28, 38 and 75).
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/attachlib.sh"
require_calltrace
build clone_stall O2

mkfifo "$T/ctl" || fail "cannot create a FIFO in $T"
"$BIN" <"$T/ctl" >"$T/prog.out" 2>&1 &
PROG=$! PROG_LOG=$T/prog.out
BG_PROG=$PROG # killed, with its helper, if the test ends early (testlib.sh)
exec 3>"$T/ctl"
wait_until 10 "the program's clone to stall" grep -qE '^(stalled|unsupported)' "$PROG_LOG"
if grep -q '^unsupported' "$PROG_LOG"; then
    exec 3>&-
    wait "$PROG"
    echo "SKIP: $(grep '^unsupported' "$PROG_LOG")"
    exit 77
fi
helper=$(awk '$1 == "helper" { print $2 }' "$PROG_LOG")

# waiting in wait4: calltrace has scanned the threads and waits for the one inside clone()
in_wait4() { [ "$(cut -d' ' -f1 "/proc/$1/syscall" 2>/dev/null)" = 61 ]; }
gone() { # PID has exited (a zombie included)
    local state
    state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)
    [ -z "$state" ] || [ "$state" = Z ]
}
done_or_dead() { grep -qx 'thread done' "$PROG_LOG" || gone "$PROG"; }
# SIGINT to calltrace, and its exit status in CT_RC; HUNG=" (calltrace hung, SIGKILLed)" when it
# had not exited 30 s later
HUNG=""
stop_calltrace() {
    kill -INT "$ct" 2>/dev/null
    for _ in $(seq 1 3000); do
        gone "$ct" && break
        sleep 0.01
    done
    gone "$ct" || { HUNG=" (calltrace hung after SIGINT, SIGKILLed)" && kill -KILL "$ct"; }
    wait "$ct"
    CT_RC=$?
    BG=""
}

"$CALLTRACE" -q ${CALLTRACE_ENGINE:+--engine=$CALLTRACE_ENGINE} -p "$PROG" -o "$T/run" 2>"$T/ct.err" &
ct=$! BG=$!
wait_until 30 "calltrace to seize the program" traced_by "$PROG" "$ct"
for _ in $(seq 1 300); do # where /proc/PID/syscall says nothing, 3 s will do
    in_wait4 "$ct" && break
    sleep 0.01
done
kill -USR1 "$helper" # the clone goes on
wait_until 30 "the new thread's calls" done_or_dead
if ! grep -qx 'thread done' "$PROG_LOG"; then
    stop_calltrace
    exec 3>&-
    wait "$PROG"
    rc=$?
    fail "the program died (status $rc$([ "$rc" = 133 ] && echo ', SIGTRAP')): the thread its" \
        "clone made while calltrace attached ran untraced into a breakpoint$HUNG:" \
        "$(tail -3 "$PROG_LOG")"
fi
stop_calltrace
[ -z "$HUNG" ] || fail "calltrace$HUNG"
attach_checks ""
n=$(python3 "$CHECKER" counts "$CT_TRACE" | awk '$1 == "work" { print $2 }')
[ "${n:-0}" = 40 ] || fail "the new thread made 40 calls of work(), the trace has ${n:-0}"
target_finish 'calls 40 errors 0'
echo "the thread born inside the attach was traced: its 40 calls recorded"
