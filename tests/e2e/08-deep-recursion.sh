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
CTX="[tree of a 100,000-deep run]"
# indented up to 100 levels, then the depth as a number: the output grows with the calls, not
# with the square of the depth (this one would be 10 GB of spaces)
"$CALLTRACE" tree "$CT_DIR" >"$T/tree.out" 2>"$T/tree.err" || fail "tree: $(cat "$T/tree.err")"
[ "$(stat -c %s "$T/tree.out")" -lt 60000000 ] ||
    fail "tree printed $(stat -c %s "$T/tree.out") bytes for 200,000 lines"
grep -qx ' *[0-9.]* [mun]*s  *\[100001\] deep(n=0);' "$T/tree.out" ||
    grep -qx ' *[0-9.]* [mun]*s  *\[100001\] deep();' "$T/tree.out" ||
    fail "the innermost call is not shown at depth 100001: $(grep -m3 'deep(n=0\|\[1000' "$T/tree.out")"
[ "$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$T/tree.out")" -lt 260 ] ||
    fail "a line is longer than 100 levels of indent and a name"
