#!/bin/bash
# The closing line: exactly one line on stderr starting "calltrace: ", last,
# naming the run directory and giving the numbers of calls, threads and
# processes that are in trace.json.  -q / --quiet silence it (stderr stays
# empty for a program that writes nothing there); -v still works and lists
# skipped C runtime functions.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build threads O0

has_number() { printf '%s\n' "$1" | grep -Eq "(^|[^0-9.])$2([^0-9.]|$)"; }

CTX="[closing line]"
plain_run "$BIN"
ct_run "$BIN"
expect_rc 0
expect_trace
same_stdout
n=$(grep -c '' "$CT_ERR")
[ "$n" = 1 ] || fail "expected exactly 1 stderr line (the program writes none), got $n"
line=$(cat "$CT_ERR")
case $line in "calltrace: "*) ;; *) fail "stderr line does not start with 'calltrace: ': $line" ;; esac
printf '%s\n' "$line" | grep -qF "$CT_DIR" || printf '%s\n' "$line" | grep -qF "${CT_DIR##*/}" ||
    fail "closing line does not say where the trace is ($CT_DIR): $line"
calls=$(query summary | awk '$1 == "calls" {print $2}')
threads=$(query summary | awk '$1 == "threads" {print $2}')
procs=$(query summary | awk '$1 == "processes" {print $2}')
[ "$calls" = 610 ] || fail "trace has $calls calls, the program made 610"
has_number "$line" "$calls" || fail "closing line does not give the number of calls ($calls): $line"
has_number "$line" "$threads" || fail "closing line does not give the number of threads ($threads): $line"
has_number "$line" "$procs" || fail "closing line does not give the number of processes ($procs): $line"
note "closing line: $line"

for q in -q --quiet; do
    CTX="[$q]"
    ct_run "$q" -- "$BIN"
    expect_rc 0
    expect_trace
    same_stdout
    [ -s "$CT_ERR" ] && fail "$q: stderr is not empty: $(head -5 "$CT_ERR")"
    chk check-counts -f "$CT_OUT"
done

CTX="[-q with program stderr]"
build stdio O0
printf 'abc\n' >"$T/in"
RUN_STDIN=$T/in
plain_run "$BIN"
ct_run -q -- "$BIN"
expect_rc 0
cmp -s "$PL_ERR" "$CT_ERR" || fail "-q: stderr should be exactly the program's: '$(cat "$CT_ERR")'"
RUN_STDIN=/dev/null

CTX="[-v]"
build threads O0
plain_run "$BIN"
ct_run -v -- "$BIN"
expect_rc 0
expect_trace
same_stdout
chk check-counts -f "$CT_OUT"
grep -q '^calltrace: ' "$CT_ERR" || fail "-v: no closing line"
grep -q 'frame_dummy\|_start\|register_tm_clones' "$CT_ERR" ||
    fail "-v: does not list skipped C runtime functions (README: '-v lists what is skipped and why'): $(head -5 "$CT_ERR")"
tail -n 1 "$CT_ERR" | grep -q '^calltrace: ' || fail "-v: the closing line is not the last line of stderr: $(tail -n 1 "$CT_ERR")"
