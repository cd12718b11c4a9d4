#!/bin/bash
# Recursion 100,000 frames deep (in a pthread with a 64 MiB stack): all
# 100,000 calls recorded and really nested 100,000 deep.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
CT_TIMEOUT=${CT_TIMEOUT_DEEP:-100}
for opt in O0 O2; do
    CTX="[deep -$opt]"
    build deep "$opt"
    standard_case "$BIN" 100000
    chk check-counts deep=100000
    chk check-unfinished
    chk check-parent runner '<root>'
    d=$(query maxdepth deep)
    [ "$d" = 100000 ] || fail "max nesting depth of deep is $d, expected 100000"
done
