#!/bin/bash
# Signal handlers calling traced functions, nested in what they interrupted:
# raise() from a traced function, a handler on a sigaltstack, a handler
# nested in another handler, and SIGALRM from setitimer interrupting a loop.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
for opt in O0 O2; do
    CTX="[signals -$opt]"
    build signals "$opt"
    plain_run "$BIN"
    ct_run "$BIN"
    expect_trace
    same_rc
    # timer-driven loop counts differ from run to run: compare the rest
    same_stdout --ignore-counts
    grep -qx 'ticks>=10 yes' "$CT_OUT" || fail "the program under calltrace did not see its 10 SIGALRMs: $(grep ticks "$CT_OUT")"
    chk check-nesting
    # on_alarm: 10 or more, as the program counted them: a tick may land between the loop's
    # end and the timer's stop, more likely when the tracer is slow (sanitizers, valgrind)
    chk check-counts -f "$CT_OUT" on_usr1=5 on_usr2=7 on_hup=3
    chk check-parent on_usr1 do_raise
    chk check-parent in_handler on_usr1
    chk check-parent on_usr2 do_raise_alt on_hup
    chk check-parent in_alt_handler on_usr2
    chk check-parent on_hup do_raise_nested
    chk check-parent on_alarm spin leaf_work main
    chk check-parent tick_work on_alarm
    chk check-parent leaf_work spin
    chk check-unfinished
done
