#!/bin/bash
# -F/--filter and -N/--exclude choose the functions that get a breakpoint:
# the chosen ones keep their exact counts, the others leave no trace, and a
# pattern that matches nothing is a warning that says what exists.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

for opt in O0 O2; do
    build recursion "$opt"
    plain_run "$BIN"
    grep '^count fib ' "$PL_OUT" >"$T/fib.count"
    grep -E '^count is_(even|odd) ' "$PL_OUT" >"$T/parity.count"

    CTX="[-F fib -$opt]"
    ct_run -F fib -- "$BIN"
    expect_trace
    same_stdout
    chk check-counts -f "$T/fib.count"
    [ "$(query counts | cut -d' ' -f1 | tr '\n' ' ')" = "fib " ] ||
        fail "functions other than fib were traced: $(query counts | tr '\n' ' ')"

    CTX="[--exclude fib -$opt]"
    ct_run --exclude fib -- "$BIN"
    expect_trace
    chk check-counts -f "$T/parity.count" fib=0 main=1

    CTX="[-F 'is_*' -N is_odd -$opt]"
    ct_run -F 'is_*' -N is_odd -- "$BIN"
    expect_trace
    [ "$(query counts | cut -d' ' -f1 | tr '\n' ' ')" = "is_even " ] ||
        fail "expected only is_even: $(query counts | tr '\n' ' ')"
    chk check-counts "$(grep '^count is_even ' "$PL_OUT" | sed 's/^count \(.*\) \(.*\)/\1=\2/')"
done

CTX="[a pattern that matches nothing]"
ct_run -F 'no_such_fn*' -- "$BIN"
expect_rc 0
grep -q "^calltrace: warning: -F no_such_fn\*: matches no function of .* (it has .*fib" "$CT_ERR" ||
    fail "no clear warning: $(cat "$CT_ERR")"

CTX="[empty pattern]"
ct_raw -F '' "$BIN"
one_stderr_line_error "-F ''"
