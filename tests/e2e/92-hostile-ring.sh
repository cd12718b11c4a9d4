#!/bin/bash
# --engine=inject: the traced program is untrusted, and so is everything it can write into the
# memory it shares with calltrace. tests/progs/hostile_ring.c finds its control block and ring
# as the trampolines do and, in separate runs: scribbles random bytes over them, writes
# positions near 2^64 with a record whose length wraps past it, forges calls that nest for ever
# and exits that match no open call, and truncates the region's memfd; and, while calltrace is
# told to stop, forges calls on no stack at all (each a read of /proc/PID/maps, before). Each
# run: calltrace ends within a time limit and a memory limit, with its closing line and a valid
# trace whose calls nest, and says once that the program wrote over that memory; told SIGTERM
# while the program forges events for ever, it ends within seconds, likewise.
# The runs that leave a quarter of a million calls open write trace.json alone: checking a
# trace.pftrace of that size too would take the test's time.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
engine_unsupported ptrace "the rings are the inject engine's"
build hostile_ring O2

# Under valgrind (make check VALGRIND=1) calltrace is some 50 times slower, and its memory is
# valgrind's: shorter attacks, longer limits, no memory limit.
LIMIT=30 STOP_LIMIT=10 NEST=4000000 BADEXITS=1000000
[ -n "${CALLTRACE_REAL:-}" ] && LIMIT=400 STOP_LIMIT=60 NEST=300000 BADEXITS=20000
DEPTH_MAX=262142 # the calls a thread's shadow stack holds (tracer/inject/space.h)
SAID='wrote over the memory it shares with calltrace; what makes no sense there is left out'

# hostile_run [CALLTRACE_OPTIONS... --] MODE [N]: calltrace on the program, ended by timeout
# after LIMIT seconds, under /usr/bin/time: RSS_KB is the most memory calltrace (or the
# program) had, RUN_MS how long it ran.
hostile_run() {
    local opts=()
    if [ "${1:-}" != "${1#-}" ]; then
        while [ "$1" != -- ]; do opts+=("$1") && shift; done
        shift
    fi
    _prepare_run "${opts[@]}" -- "$BIN" "$@"
    local start
    start=$(now_ms)
    /usr/bin/time -f %M -o "$T/rss" timeout -k 5 "$LIMIT" "$CALLTRACE" -o "$CT_DIR" \
        "${_CT_OPTS[@]}" -- "${_CT_ARGS[@]}" <"$RUN_STDIN" >"$CT_OUT" 2>"$CT_ERR"
    CT_RC=$?
    RUN_MS=$(($(now_ms) - start))
    [ "$CT_RC" = 124 ] && fail "calltrace did not end within $LIMIT s"
    RSS_KB=$(tail -n 1 "$T/rss")
}

# closing_calls: the calls the closing line counts; fails when there is none.
closing_calls() {
    sed -n 's/^calltrace: trace in .*: \([0-9]*\) calls\?.*/\1/p' "$CT_ERR" | grep . ||
        fail "no closing line: $(head -c 2000 "$CT_ERR")"
}

# valid_trace: the closing line, and a trace that is valid and whose calls nest (check-nesting
# validates it first).
valid_trace() {
    closing_calls >/dev/null
    [ -f "$CT_TRACE" ] || fail "no trace.json in $CT_DIR (calltrace exit $CT_RC)"
    chk check-nesting
}

# within_memory KB: no more than MEM_LIMIT_KB.
within_memory() {
    if [ -n "${MEM_LIMIT_KB:-}" ] && [ "${1:-0}" -gt "$MEM_LIMIT_KB" ]; then
        fail "calltrace took $1 KB of memory, more than $MEM_LIMIT_KB KB"
    fi
}

# ended_well: exit 0, a valid trace, memory within MEM_LIMIT_KB, and the counts the program
# keeps in its control block (calls and returns not recorded) not taken for true when no
# thread could have reached them.
ended_well() {
    expect_rc 0
    valid_trace
    within_memory "$RSS_KB"
    local n
    for n in $(sed -n 's/^calltrace: \([0-9]*\) \(calls\|returns\) were not recorded.*/\1/p' "$CT_ERR"); do
        [ "${#n}" -le 15 ] || fail "a count the program wrote over is taken as it is: $n"
    done
}

said_once() {
    [ "$(grep -c "$SAID" "$CT_ERR")" = 1 ] ||
        fail "calltrace does not say once that the program wrote over the region: $(head -c 2000 "$CT_ERR")"
}

CTX="[truncate]"
hostile_run truncate
grep -q '^map_files: ' "$CT_OUT" || fail "the program did not reach its memfd: $(cat "$CT_OUT")"
if grep -E '^(map_files|tracer fd): truncated' "$CT_OUT"; then
    fail "the program truncated the region's memfd (calltrace exit $CT_RC: $(tail -n 3 "$CT_ERR"))"
fi
ended_well
chk check-counts -f "$CT_OUT"
grep -q "$SAID" "$CT_ERR" && fail "calltrace says the region was written over: $(cat "$CT_ERR")"
# the memory limit of the other runs: this small run's, and 64 MB more (192 MB under
# AddressSanitizer, whose redzones and quarantine make each of the nest run's allocations
# larger: 89.7 MB there against a limit of 88.7 MB)
margin_kb=65536
ldd "$CALLTRACE" 2>/dev/null | grep -q libasan && margin_kb=$((3 * 65536))
[ -z "${CALLTRACE_REAL:-}" ] && MEM_LIMIT_KB=$((RSS_KB + margin_kb))
note "ok: $(grep -c refused "$CT_OUT") ways to the memfd refused; $RSS_KB KB, $RUN_MS ms"

CTX="[wrap]"
hostile_run wrap
grep -qx 'ok wrapping head' "$CT_OUT" || fail "the program did not end its attack: $(cat "$CT_OUT")"
ended_well
said_once
grep -q 'events the program wrote .* made no sense and were left out' "$CT_ERR" ||
    fail "the closing lines do not count the events left out: $(cat "$CT_ERR")"

for seed in 1 2 3; do
    CTX="[scribble $seed]"
    hostile_run scribble $seed
    grep -qx 'ok scribbled 64 rounds' "$CT_OUT" || fail "the program did not end its attack: $(cat "$CT_OUT")"
    ended_well
done

CTX="[nest $NEST]"
hostile_run --format json -- nest $NEST
ended_well
said_once
calls=$(closing_calls)
# the forged calls up to the shadow stack's depth, then main's and probe's
[ "$calls" -le $((DEPTH_MAX + 2)) ] || fail "$calls calls recorded: deeper than a shadow stack holds"
grep -q 'opened more calls than its shadow stack holds' "$CT_ERR" ||
    fail "calltrace does not say why calls were left out: $(head -c 2000 "$CT_ERR")"
note "ok: $calls calls recorded; $RSS_KB KB, $RUN_MS ms"

CTX="[badexit $BADEXITS]"
hostile_run badexit $BADEXITS
ended_well
note "ok: $BADEXITS exits of no open call under 20000 open calls; $RSS_KB KB, $RUN_MS ms"

# Told to stop while the program forges events for ever: SIGTERM to calltrace once the attack
# is under way (a ring's worth of calls on no stack, past the shadow stack's depth; bad exits
# past a ring's worth; many rounds of scribbling).
for attack in "unmapped $((2 * DEPTH_MAX))" "badexit $((20000 + 2 * DEPTH_MAX))" "scribble 64"; do
    set -- $attack
    CTX="[SIGTERM, $1 for ever]"
    export HOSTILE_PROGRESS=$T/progress.$1
    ct_start_bg --format json -- "$BIN" "$1" 0
    unset HOSTILE_PROGRESS
    wait_until "$LIMIT" "the program to write $2 events" progress_ge "$T/progress.$1" "$2"
    rss=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$BG/status")
    start=$(now_ms)
    kill -TERM "$BG"
    ct_wait_bg "$STOP_LIMIT"
    stop_ms=$(($(now_ms) - start))
    [ "$stop_ms" -le $((STOP_LIMIT * 1000)) ] ||
        fail "calltrace ended $stop_ms ms after SIGTERM, not within $STOP_LIMIT s"
    expect_rc 143 "killed by SIGTERM"
    valid_trace
    within_memory "$rss"
    note "ok: ended $stop_ms ms after SIGTERM; $rss KB before it"
done
echo "PASS $TEST_NAME"
