#!/bin/bash
# longjmp out of 3 nested traced frames, 150 times in a loop, and siglongjmp
# out of a signal handler.  The frames jumped over must be closed: after each
# jump the next calls (after, jumper, level1) are attached to the right
# parents, nothing is unfinished, and everything nests.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
for opt in O0 O2; do
    CTX="[longjmp -$opt]"
    build longjmp "$opt"
    standard_case "$BIN"
    chk check-unfinished
    chk check-parent jumper main
    chk check-parent level1 jumper
    chk check-parent level2 level1
    chk check-parent level3 level2
    chk check-parent after jumper sig_jumper
    chk check-parent sig_jumper main
    chk check-parent sig_level1 sig_jumper
    chk check-parent on_usr1 sig_level2
    d=$(query maxdepth jumper)
    [ "$d" = 1 ] || fail "jumper calls must not pile up after longjmp: max nesting of jumper is $d, expected 1"
done
