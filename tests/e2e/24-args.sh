#!/bin/bash
# Argument passing: everything after PROGRAM (or after "--") belongs to the
# program, even if it looks like a calltrace option; odd arguments survive.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build args O0

CTX="[after --]"
plain_run "$BIN" -o x -q -- -v ''
ct_run -- "$BIN" -o x -q -- -v ''
expect_rc 0
expect_trace
same_stdout
chk check-counts show=6

CTX="[options after PROGRAM without --]"
plain_run "$BIN" -q -v -o somewhere
_next_files
CT_OUT=$_OUT CT_ERR=$_ERR CT_DIR=$T/run.$_RUN_SEQ CT_TRACE=$CT_DIR/trace.json
timeout -k 5 "$CT_TIMEOUT" "$CALLTRACE" -o "$CT_DIR" "$BIN" -q -v -o somewhere </dev/null >"$CT_OUT" 2>"$CT_ERR"
CT_RC=$?
expect_rc 0
expect_trace
same_stdout
grep -q '^calltrace: ' "$CT_ERR" || fail "the program's -q silenced calltrace's closing line: options after PROGRAM went to calltrace"
[ -e "$CT_DIR/../somewhere" ] || [ -e somewhere ] && fail "the program's '-o somewhere' was taken by calltrace"
chk check-counts show=4

CTX="[odd arguments]"
plain_run "$BIN" 'a b' '*' '$HOME' $'tab\there' "$(printf 'x%.0s' $(seq 3000))"
ct_run "$BIN" 'a b' '*' '$HOME' $'tab\there' "$(printf 'x%.0s' $(seq 3000))"
expect_rc 0
same_stdout
