#!/bin/bash
# A statically linked program: libc is part of the executable and traced too;
# our functions a/b/c/main are counted exactly and nest as in the source.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
for opt in O0 O2; do
    CTX="[nested -static -$opt]"
    build nested "$opt" -static
    file -b "$BIN" | grep -q 'statically linked' || fail "test binary is not static: $(file -b "$BIN")"
    standard_case "$BIN"
    chk check-parent a main
    chk check-parent b a
    chk check-parent c b main
    chk check-parent main __libc_start_call_main '<root>' __libc_start_main
    # main returns into libc, which calls exit() -> _exit(): in a static
    # binary these libc functions are traced and never return.
    chk check-unfinished --may __libc_start_call_main --may __libc_start_main \
        --may exit --may __run_exit_handlers --may _exit --may _Exit
    for skip in _start _init _fini frame_dummy register_tm_clones deregister_tm_clones __do_global_dtors_aux __libc_start_main; do
        n=$(query counts | awk -v n="$skip" '$1 == n {print $2}')
        [ -z "$n" ] || fail "C runtime function $skip must not be traced, the trace has $n call(s)"
    done
done
