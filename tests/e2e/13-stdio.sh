#!/bin/bash
# stdin, stdout, stderr, argv, environment and cwd are untouched: the program
# reads stdin (a file, then a pipe), uppercases it to stdout, writes stderr,
# and reports argv, $CT_TEST_VAR, its cwd, isatty() of fds 0-2 and its open
# fds; all identical to the untraced run.  Large stdin goes through too.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
printf 'hello world\nsecond line\n\nlast line without newline' >"$T/input"
for i in $(seq 500); do echo "line $i of a longer input"; done >"$T/big"
export CT_TEST_VAR="value with spaces & stuff"
mkdir -p "$T/cwd dir"
for opt in O0 O2; do
    CTX="[stdio -$opt]"
    build stdio "$opt"
    cd "$T/cwd dir" || fail "cd"
    RUN_STDIN=$T/input
    standard_case "$BIN" "arg one" '' '*'
    grep -qx 'HELLO WORLD' "$CT_OUT" || fail "stdin did not reach the program: $(head -5 "$CT_OUT")"
    cmp -s "$PL_ERR" <(grep -v '^calltrace: ' "$CT_ERR") ||
        fail "program stderr differs: untraced: '$(cat "$PL_ERR")', traced (minus calltrace lines): '$(grep -v '^calltrace: ' "$CT_ERR")'"
    grep -q '^fds ' "$CT_OUT" || fail "no fds line"
    # the run directory must be where -o said, not relative to anything else
    [ -z "$(ls -A "$T/cwd dir")" ] || fail "calltrace left files in the program's cwd: $(ls -A "$T/cwd dir")"

    CTX="[stdio pipe -$opt]"
    RUN_STDIN=/dev/null
    _next_files
    pl_out=$_OUT
    cat "$T/big" | "$BIN" | cat >"$pl_out"
    _next_files
    CT_OUT=$_OUT CT_ERR=$_ERR CT_DIR=$T/run.$_RUN_SEQ CT_TRACE=$T/run.$_RUN_SEQ/trace.json
    cat "$T/big" | timeout -k 5 "$CT_TIMEOUT" "$CALLTRACE" "${CT_ENGINE_OPT[@]}" -o "$CT_DIR" -- "$BIN" 2>"$CT_ERR" | cat >"$CT_OUT"
    CT_RC=${PIPESTATUS[1]}
    expect_rc 0
    expect_trace
    CTX="[stdio pipe -$opt]" PL_OUT=$pl_out
    same_stdout
    chk check-counts -f "$CT_OUT"
    cd "$T" || fail "cd"
done
