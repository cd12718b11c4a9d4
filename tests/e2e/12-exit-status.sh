#!/bin/bash
# Exit status propagation: exit(3) from 3 levels deep, return 4 from main,
# SIGSEGV -> 139, SIGKILL -> 137, SIGABRT -> 134.  When the program dies the
# trace is still written and the open calls (main, outer, middle, inner) are
# unfinished.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
for opt in O0 O2; do
    build exitstatus "$opt"
    for mode in "exit 3" "ret 4" "segv" "kill" "abort"; do
        CTX="[exitstatus $mode -$opt]"
        # shellcheck disable=SC2086
        plain_run "$BIN" $mode
        # shellcheck disable=SC2086
        ct_run "$BIN" $mode
        case $mode in
        "exit 3") want=3 ;; "ret 4") want=4 ;; segv) want=139 ;; kill) want=137 ;; abort) want=134 ;;
        esac
        [ "$PL_RC" = "$want" ] || fail "untraced program exited $PL_RC, test expects $want"
        expect_rc "$want"
        expect_trace
        same_stdout
        chk check-nesting
        chk check-counts main=1 outer=1 middle=1 inner=1
        if [ "$mode" = "ret 4" ]; then
            chk check-unfinished
        else
            chk check-unfinished main outer middle inner
        fi
    done
done
