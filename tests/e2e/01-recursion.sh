#!/bin/bash
# Recursion (fib) and non-tail mutual recursion (is_even/is_odd):
# counts equal the program's own, calls nest, and each call's direct parent
# is what the call graph says.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
for opt in O0 O2; do
    CTX="[recursion -$opt]"
    build recursion "$opt"
    standard_case "$BIN" 18
    chk check-parent fib fib main
    chk check-parent is_even is_odd main
    chk check-parent is_odd is_even main
    chk check-parent main '<root>'
    chk check-unfinished
    d=$(query maxdepth fib)
    [ "$d" = 18 ] || fail "fib(18) nests 18 deep, the trace says $d"
    d=$(query maxdepth is_even)
    [ "$d" = 389 ] || fail "is_even(777) recursion has 389 nested is_even frames, the trace says $d"
done
