# shellcheck shell=bash
# attachlib.sh -- helpers for the tests of `calltrace -p` (tests/e2e/28, 38, 39, 75, 76), sourced
# after testlib.sh.
#
#   target_start BIN ARG...  start BIN ARG... in the background, its stdin a FIFO the test holds
#                         open (fd 3), and wait for it to print "ready"; sets PROG and PROG_LOG
#                         (its output; a test that starts its program itself sets both)
#   target_finish LINE    send it a line and close its stdin (its cue to stop), wait for it;
#                         fail unless it exits 0 and printed exactly LINE among its figures
#   traced_by PID TRACER  true when PID's tracer is TRACER (0: not traced)
#   recording RECORD      true once the binary record RECORD holds a call, i.e. calls are being
#                         recorded (tests/lib/record_has_calls.py)
#   attach_cycle I SIG    cycle I: calltrace -q -p PROG -o $T/runI, once it records calls send
#                         it SIG, then attach_checks; CT_TRACE is the cycle's trace
#   attach_checks I       after calltrace of cycle I exited with CT_RC: it exited 0 and silent,
#                         left the program untraced and alive, and its trace nests

# A test that fails in the middle of a cycle leaves neither its calltrace nor its program
# behind (a calltrace still attached would keep the program traced, and spinning, for ever).
ATTACH_CT=""
_attach_cleanup() {
    [ -n "$ATTACH_CT" ] && kill -KILL "$ATTACH_CT" 2>/dev/null
    [ -n "${PROG:-}" ] && kill -KILL "$PROG" 2>/dev/null
    _cleanup
}
trap _attach_cleanup EXIT

target_start() {
    mkfifo "$T/ctl" || fail "cannot create a FIFO in $T"
    "$@" <"$T/ctl" >"$T/prog.out" 2>&1 &
    PROG=$! PROG_LOG=$T/prog.out
    exec 3>"$T/ctl"
    wait_until 10 "the program to start" grep -q ready "$T/prog.out"
}

target_finish() {
    CTX=""
    echo stop >&3
    exec 3>&-
    wait "$PROG"
    local rc=$?
    PROG=""
    [ "$rc" = 0 ] || fail "the program exited $rc after being traced: $(cat "$T/prog.out")"
    grep -qx "$1" "$T/prog.out" || fail "the program's own checks failed: $(cat "$T/prog.out")"
}

# stuck_state CT: what calltrace CT and the program's threads are doing, for a failure message.
stuck_state() {
    local t
    printf 'calltrace %s wchan %s;' "$(proc_state "$1")" "$(cat "/proc/$1/wchan" 2>/dev/null)"
    for t in /proc/"$PROG"/task/*; do
        printf ' thread %s %s %s tracer %s;' "${t##*/}" "$(proc_state "$PROG/task/${t##*/}")" \
            "$(cat "$t/wchan" 2>/dev/null)" "$(awk '/^TracerPid/ { print $2 }' "$t/status" 2>/dev/null)"
    done
    tail -c 300 "$T/ct$i.err" 2>/dev/null
}

traced_by() { grep -q "^TracerPid:[[:space:]]*$2\$" "/proc/$1/status"; }

recording() { python3 "$TESTS_DIR/lib/record_has_calls.py" "$1"; }

attach_checks() {
    local i=$1
    [ "$CT_RC" = 0 ] || fail "calltrace exited $CT_RC: $(head -c 500 "$T/ct$i.err")"
    [ -s "$T/ct$i.err" ] && fail "calltrace -q wrote to stderr: $(head -c 500 "$T/ct$i.err")"
    traced_by "$PROG" 0 || fail "the program is still traced after calltrace exited"
    kill -0 "$PROG" 2>/dev/null || fail "the program died: $(tail -5 "$PROG_LOG")"
    if [ -f "$T/run$i/trace.json" ]; then
        CT_TRACE=$T/run$i/trace.json
        chk check-nesting
    fi
}

attach_cycle() {
    local i=$1 sig=$2 ct
    "$CALLTRACE" "${CT_ENGINE_OPT[@]}" --format=both -q -p "$PROG" -o "$T/run$i" 2>"$T/ct$i.err" &
    ct=$!
    ATTACH_CT=$ct
    wait_until 30 "calltrace to attach" traced_by "$PROG" "$ct"
    wait_until 30 "calls to be recorded" recording "$T/run$i/events.ctr"
    kill -"$sig" "$ct"
    within 30 pid_ended "$ct" ||
        fail "calltrace (pid $ct) still runs 30 s after SIG$sig: $(stuck_state "$ct")"
    wait "$ct"
    CT_RC=$?
    ATTACH_CT=""
    attach_checks "$i"
}
