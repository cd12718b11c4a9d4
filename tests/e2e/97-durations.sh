#!/bin/bash
# One duration syntax everywhere (a number with ns, us, ms, s, m or h, or without a unit,
# seconds), and -t for a program calltrace started: at -t, calltrace leaves every traced process
# as -p leaves one, writes the run while the program runs on untraced, then waits for it and
# exits with its status. tests/progs/outlive.c makes its traced calls, waits (making none) until
# no tracer is left in /proc/self/status, then waits for the run's trace to exist before its
# calls of after(): so the trace has every before() and no after(), and calltrace cannot wait
# for the program before writing the run (the program would give up after 30 s, and say so).
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/viewlib.sh"
require_calltrace
build outlive O2

# outlive_case TIME END EXPECTED_RC: -t TIME, and the program ends as END says.
outlive_case() {
    local time=$1 end=$2 want_rc=$3
    CTX="[-t $time, $end]"
    local run=$T/run.$((_RUN_SEQ + 1)) start
    start=$(now_ms)
    ct_run -t "$time" -- "$BIN" "$run/trace.json" "$end"
    local took=$(($(now_ms) - start))
    [ "$CT_DIR" = "$run" ] || fail "the run went to $CT_DIR, not $run"
    expect_rc "$want_rc" "the program's own status"
    grep -q '^gave up' "$CT_OUT" && fail "the program: $(cat "$CT_OUT")"
    grep -q '^child before 200 after 200$' "$CT_OUT" || fail "the child did not finish: $(cat "$CT_OUT")"
    grep -q '^count after 400$' "$CT_OUT" || fail "the program did not run on: $(cat "$CT_OUT")"
    expect_trace
    chk check-nesting
    # every call made before the detach, none after; inside() was open across it
    chk check-counts before=600 inside=1 after=0
    chk check-unfinished inside worker --may main
    [ "$(query processes | wc -l)" = 2 ] || fail "the trace does not show the two processes"
    grep -q "^calltrace: -t [0-9.]* s: tracing stopped; process [0-9]* runs on untraced, and calltrace waits for its end$" "$CT_ERR" ||
        fail "no line says the program runs on: $(cat "$CT_ERR")"
    [ "$took" -ge 1900 ] || fail "calltrace ended after $took ms, before -t $time"
    note "-t $time: ended after $took ms, exit status $CT_RC"
}

outlive_case 2s 7 7
outlive_case 2000ms kill 137
# SIGTERM to calltrace, once it only waits, is passed on to the program, which dies of it
outlive_case 2 term-parent 143

# A program that ends before -t: as without -t
CTX="[-t 1m, the program ends first]"
build recursion O0
plain_run "$BIN" 6
ct_run -t 1m -- "$BIN" 6
expect_trace
same_rc
same_stdout
chk check-counts -f "$CT_OUT"
grep -q "tracing stopped" "$CT_ERR" && fail "-t said it stopped a program that had ended: $(cat "$CT_ERR")"

for bad in "-t 0" "-t x" "-t -1" "-t 5xs" "-t 1e3" "-t 0x10" "-t 745h" "--min-duration 5sec"; do
    CTX="[$bad]"
    # shellcheck disable=SC2086
    ct_raw $bad "$BIN"
    one_stderr_line_error "$bad"
    grep -q "not a duration" "$CT_ERR" || fail "the message does not say 'not a duration': $(cat "$CT_ERR")"
done

# --min-duration in seconds without a unit: slow() alone lasts 100 ms
CTX="[--min-duration 0.05]"
build depths O0
ct_run --min-duration 0.05 -- "$BIN"
expect_trace
chk check-counts main=1 work=1 slow=1 rec=0 leaf=0
RUN=$CT_DIR

# view --timeout and export --from/--to in the same syntax
for timeout in 0.5 500ms; do
    CTX="[view --timeout $timeout]"
    start=$(now_ms)
    view_start view --server-only --port 0 --timeout "$timeout" "$RUN"
    view_wait_exit 30
    took=$(($(now_ms) - start))
    [ "$VIEW_RC" = 0 ] || fail "view exited with status $VIEW_RC: $(cat "$VIEW_ERR")"
    grep -q '^calltrace: stopped serving after 0.5 s$' "$VIEW_ERR" ||
        fail "no 'stopped serving after 0.5 s': $(cat "$VIEW_ERR")"
    [ "$took" -ge 500 ] || fail "served for $took ms only"
done
for bad in 2x 0 -1; do
    CTX="[view --timeout $bad]"
    ct_raw view --server-only --port 0 --timeout "$bad" "$RUN"
    one_stderr_line_error "view --timeout $bad"
done

CTX="[export --from 0 --to 10]"
ct_raw export -q --format json --from 0 --to 10 "$RUN"
expect_rc 0
CT_TRACE=$RUN/trace.json
chk check-counts main=1 work=1 slow=1
