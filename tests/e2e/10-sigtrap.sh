#!/bin/bash
# The program's own SIGTRAP: a handler plus raise(SIGTRAP) x3 and int3 x4.
# The handler must run 7 times, as without calltrace.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
for opt in O0 O2; do
    CTX="[sigtrap -$opt]"
    build sigtrap "$opt"
    standard_case "$BIN"
    chk check-counts on_trap=7 trap_helper=7
    chk check-parent on_trap do_raise do_int3
    chk check-parent trap_helper on_trap
    chk check-unfinished
done
