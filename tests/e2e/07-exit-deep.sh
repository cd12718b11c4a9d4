#!/bin/bash
# exit() from 3 traced levels deep: main, l1, l2, l3 stay open and must be
# marked unfinished (exactly those); the atexit handler (run inside exit,
# inside l3) finishes normally.  Exit status 5 is propagated.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
for opt in O0 O2; do
    CTX="[exit_deep -$opt]"
    build exit_deep "$opt"
    standard_case "$BIN"
    expect_rc 5
    chk check-unfinished main l1 l2 l3
    chk check-parent at_exit_hook l3
    chk check-parent helper l3 at_exit_hook
done
