#!/bin/bash
# Fault: calltrace -p gets SIGINT, SIGTERM or SIGHUP at a pseudo-random moment
# from its start: before it attached, while it stops the threads, while it
# puts the breakpoints in, while it records. Every time the program must run
# on untraced and unharmed; it checks its checksums, signals and sleeps
# itself and must end with exit 0. calltrace exits 0, or dies of the signal
# when it came before calltrace could catch it (it had not attached then).
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/attachlib.sh"
require_calltrace
build attachee O2
RANDOM=${CT_SEED:-75}
target_start "$BIN"

# sigint_ignored PID: does PID (still alive) ignore SIGINT?
sigint_ignored() {
    local ign
    ign=$(awk '/^SigIgn:/ {print $2}' "/proc/$1/status" 2>/dev/null) || return 1
    [ -n "$ign" ] && (((16#$ign >> 1) & 1))
}
sigint_taken() { ! sigint_ignored "$1"; }

sigs=(INT TERM HUP)
signums=(2 15 1)
early=0 recorded=0
CYCLES=${ATTACH_CYCLES:-30}
for i in $(seq 1 "$CYCLES"); do
    k=$((i % 3))
    delay_ms=$((RANDOM % 60))
    CTX="[SIG${sigs[k]} after ${delay_ms} ms, cycle $i]"
    # a background job of a script starts with SIGINT ignored: give calltrace the default, as a
    # terminal would, or a SIGINT before calltrace installs its handler would be lost
    env --default-signal=INT "$CALLTRACE" "${CT_ENGINE_OPT[@]}" -q -p "$PROG" -o "$T/run$i" 2>"$T/ct$i.err" &
    ct=$!
    # until env has run, the job still ignores SIGINT: one sent then would be lost (calltrace
    # would trace on, never told to stop), not early
    wait_until 10 "calltrace's job to take SIGINT" sigint_taken "$ct"
    # the moment, not a synchronisation: any point of calltrace's life is right
    sleep "$(printf '0.%03d' "$delay_ms")"
    kill -"${sigs[k]}" "$ct"
    wait "$ct"
    CT_RC=$?
    if [ "$CT_RC" = $((128 + signums[k])) ]; then
        early=$((early + 1)) # killed before its handlers were in: it never attached
        [ -e "$T/run$i/events.ctr" ] && fail "calltrace died of the signal after it had started recording"
        CT_RC=0
    fi
    attach_checks "$i"
    [ -f "$T/run$i/trace.json" ] && recorded=$((recorded + 1))
done
target_finish 'rounds>0 1 signals exact threads>0 1 reads exact errors 0'
echo "$CYCLES cycles: $recorded with a trace, $early ended before attaching"
