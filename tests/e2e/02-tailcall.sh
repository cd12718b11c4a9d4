#!/bin/bash
# Tail calls: at -O2 top/mid/ping/pong/to_lib end in a jmp to another
# function.  Counts must still be exact, calls must nest, nothing may be left
# unfinished, and the frame above each tail chain (driver) must stay intact.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
for opt in O0 O2; do
    CTX="[tailcall -$opt]"
    build tailcall "$opt"
    if [ $opt = O2 ]; then
        # make sure the compiler really emitted the tail jumps we test
        objdump -d --no-show-raw-insn "$BIN" | grep -Eq 'jmp +[0-9a-f]+ <mid>' ||
            fail "test program has no 'jmp mid' at -O2; the tail-call test is void"
    fi
    standard_case "$BIN"
    chk check-unfinished
    chk check-parent driver main
    # whatever a tracer does with a tail call, the chain stays under driver
    chk check-parent top driver
    chk check-parent to_lib driver
    chk check-parent mid top driver
    chk check-parent leaf mid top driver ping pong
    chk check-parent ping driver pong ping
    chk check-parent pong ping driver pong
done
