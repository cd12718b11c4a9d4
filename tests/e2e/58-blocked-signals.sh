#!/bin/bash
# A program that blocks every signal: its breakpoints still work (the int3 traps are reported
# to calltrace whatever the mask), and SIGINT/SIGTERM to calltrace and the program's process
# group still end it, since calltrace kills it with SIGKILL, which cannot be blocked.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build faults O2
RANDOM=${CT_SEED:-58}

CTX="[blocked, runs to the end]"
standard_case "$BIN" blocked 3000
chk check-unfinished

for sig in INT TERM; do
    n=$((500 + RANDOM % 8000))
    CTX="[blocked, SIG$sig to the process group after $n markers]"
    rm -f "$T/ctr" "$T/pid"
    _next_files
    CT_DIR=$T/run.$_RUN_SEQ CT_TRACE=$T/run.$_RUN_SEQ/trace.json CT_OUT=$_OUT CT_ERR=$_ERR
    setsid "$CALLTRACE" "${CT_ENGINE_OPT[@]}" -o "$CT_DIR" -- "$BIN" blocked-busy "$T/ctr" "$T/pid" 75 \
        </dev/null >"$CT_OUT" 2>"$CT_ERR" &
    BG=$!
    wait_until 60 "$n progress markers" progress_ge "$T/ctr" "$n"
    BG_PROG=$(cat "$T/pid")
    # All blocked but KILL and STOP (and glibc's two internal signals), as untraced, except
    # SIGTRAP: the kernel's force_sig unblocks it at the first int3 (see sigtrap_guard.h), a
    # known difference under calltrace.
    blk=$(sed -n 's/^SigBlk:[[:space:]]*//p' "/proc/$BG_PROG/status")
    case $blk in
    fffffffe7ffbfeff | fffffffe7ffbfeef) ;;
    *) fail "the program does not block all signals: SigBlk $blk" ;;
    esac
    start=$(now_ms)
    kill -s "$sig" -- "-$BG" || fail "cannot signal process group $BG"
    wait_until 20 "the program (pid $BG_PROG) to end after SIG$sig" pid_ended "$BG_PROG"
    ct_wait_bg 20
    took=$(($(now_ms) - start))
    expect_rc $((128 + $(kill -l "$sig")))
    expect_trace
    chk check-nesting
    chk check-unfinished --may main --may level1 --may level2 --may work
    note "ended ${took} ms after the signal, $(query summary | sed -n 's/^calls //p') calls in the trace"
done
