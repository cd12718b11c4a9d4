#!/bin/bash
# Stress: a program with 200 child processes alive at once, each making its calls after all
# were forked. Every process and every call must be in the trace, properly nested.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build faults O2
CTX="[200 forks]"
start=$(now_ms)
ct_run "$BIN" forks 200 5
took=$(($(now_ms) - start))
expect_rc 0
expect_trace
grep -qx 'children failed 0' "$CT_OUT" || fail "children failed: $(cat "$CT_OUT")"
chk check-nesting
chk check-metadata
chk check-counts work=1001 level1=1001 level2=1001
chk check-unfinished --may main
n=$(query processes | wc -l)
[ "$n" = 201 ] || fail "trace has calls in $n processes, expected 201"
note "201 processes, $(query summary | sed -n 's/^calls //p') calls, traced in $took ms"
