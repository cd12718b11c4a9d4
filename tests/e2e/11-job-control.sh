#!/bin/bash
# Job control: SIGSTOP must really stop the traced program (it stays stopped,
# makes no progress) and SIGCONT must resume it; its SIGCONT handler runs
# once; the program then finishes normally with the right output and trace.
#   wait mode: the program is blocked reading its stdin (a fifo)
#   busy mode: the program is busy calling traced functions (a call every 20 us);
#              its progress counter (a shared 8-byte file) must not move while stopped.
#   burst: busy with calls back to back, stopped as soon as it runs: under the inject
#              engine, most often in the middle of a trampoline, between reserving an
#              event and committing it; held stopped longer than calltrace gives a
#              running writer (200 ms), no event may be lost.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

BG=""
kill_bg() { [ -n "$BG" ] && kill -KILL "$BG" 2>/dev/null; [ -n "${PID:-}" ] && kill -KILL "$PID" 2>/dev/null; return 0; }
trap 'kill_bg; _cleanup' EXIT

is_stopped() { local s; s=$(proc_state "$PID"); [ "$s" = T ] || [ "$s" = t ]; }
is_running() { local s; s=$(proc_state "$PID"); [ -n "$s" ] && [ "$s" != T ] && [ "$s" != t ]; }
counter() { od -An -tu8 -N8 "$CTR" 2>/dev/null | tr -d ' '; }
counter_gt() { local c; c=$(counter); [ -n "$c" ] && [ "$c" -gt "$1" ]; }

start_bg() {   # start_bg MODE [PACE_US]: calltrace in the background, sets BG, PID, CTR
    _next_files
    CT_OUT=$_OUT CT_ERR=$_ERR CT_DIR=$T/run.$_RUN_SEQ CT_TRACE=$T/run.$_RUN_SEQ/trace.json
    PIDFILE=$T/pid.$_RUN_SEQ CTR=$T/ctr.$_RUN_SEQ
    rm -f "$T/in"; mkfifo "$T/in" || fail "mkfifo failed"
    exec 3<>"$T/in"
    local extra=()
    [ "$1" = busy ] && extra=("$CTR" ${2:+"$2"})
    timeout -k 5 "$CT_TIMEOUT" "$CALLTRACE" "${CT_ENGINE_OPT[@]}" -o "$CT_DIR" -- "$BIN" "$PIDFILE" "$1" "${extra[@]}" \
        <"$T/in" >"$CT_OUT" 2>"$CT_ERR" &
    BG=$!
    wait_until 20 "the traced program to write its pid file" test -s "$PIDFILE"
    PID=$(cat "$PIDFILE")
}

stop_and_verify() {
    kill -STOP "$PID" || fail "kill -STOP $PID failed"
    wait_until 10 "state T/t of pid $PID after SIGSTOP (state is '$(proc_state "$PID")')" is_stopped
    local c1 i s
    c1=$(counter)
    for i in $(seq 30); do   # verification, not synchronisation
        s=$(proc_state "$PID")
        [ "$s" = T ] || [ "$s" = t ] || fail "after SIGSTOP the program did not stay stopped: state '${s:-gone}' after $((i * 10)) ms"
        [ "$(counter)" = "$c1" ] || fail "after SIGSTOP the program kept running: progress counter moved from $c1 to $(counter)"
        sleep 0.01
    done
}

finish_bg() {
    wait "$BG"
    CT_RC=$?
    BG=""
    exec 3>&-
    [ "$CT_RC" = 124 ] && fail "calltrace did not finish within ${CT_TIMEOUT}s after SIGCONT"
    PID=""
}

for opt in O0 O2; do
    build jobctl "$opt"

    CTX="[jobctl wait -$opt]"
    start_bg wait
    stop_and_verify
    echo go >&3                  # input available while stopped
    s=$(proc_state "$PID")
    [ "$s" = T ] || [ "$s" = t ] || fail "program left the stopped state before SIGCONT: '${s:-gone}'"
    kill -CONT "$PID"
    finish_bg
    expect_rc 0
    expect_trace
    grep -qx 'got go' "$CT_OUT" || fail "program output lacks 'got go': $(cat "$CT_OUT")"
    grep -qx 'cont handler ran 1' "$CT_OUT" || fail "SIGCONT handler should have run once: $(grep cont "$CT_OUT")"
    chk check-nesting
    chk check-counts -f "$CT_OUT"
    chk check-unfinished

    CTX="[jobctl busy -$opt]"
    start_bg busy 20
    wait_until 10 "the program's progress counter to move" counter_gt 0
    stop_and_verify
    c1=$(counter)
    kill -CONT "$PID"
    wait_until 10 "progress after SIGCONT (counter stuck at $c1)" counter_gt "$c1"
    kill -USR1 "$PID"
    finish_bg
    expect_rc 0
    expect_trace
    grep -qx 'busy done' "$CT_OUT" || fail "program output lacks 'busy done': $(cat "$CT_OUT")"
    grep -qx 'cont handler ran 1' "$CT_OUT" || fail "SIGCONT handler should have run once: $(grep cont "$CT_OUT")"
    chk check-nesting
    chk check-counts -f "$CT_OUT"
    chk check-parent on_cont work main
    chk check-unfinished
done

build jobctl O0
for round in 1 2 3; do
    CTX="[jobctl burst, round $round]"
    start_bg busy
    stop_and_verify
    kill -CONT "$PID"
    kill -USR1 "$PID"
    finish_bg
    expect_rc 0
    grep -qx 'busy done' "$CT_OUT" || fail "program output lacks 'busy done': $(cat "$CT_OUT")"
    grep -q 'not recorded' "$CT_ERR" && fail "calls were lost: $(grep 'not recorded' "$CT_ERR")"
    chk check-nesting
    chk check-counts -f "$CT_OUT"
done
