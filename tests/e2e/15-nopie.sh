#!/bin/bash
# A non-PIE executable (-no-pie): breakpoints at absolute addresses.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
for opt in O0 O2; do
    CTX="[nested -no-pie -$opt]"
    build nested "$opt" -no-pie
    file -b "$BIN" | grep -q 'LSB executable' || fail "test binary is not a non-PIE executable: $(file -b "$BIN")"
    standard_case "$BIN"
    chk check-parent a main
    chk check-parent b a
    chk check-parent c b main
    chk check-parent main '<root>'
    chk check-unfinished
    for skip in _start _init _fini frame_dummy register_tm_clones deregister_tm_clones __do_global_dtors_aux; do
        n=$(query counts | awk -v n="$skip" '$1 == n {print $2}')
        [ -z "$n" ] || fail "C runtime function $skip must not be traced, the trace has $n call(s)"
    done
done
