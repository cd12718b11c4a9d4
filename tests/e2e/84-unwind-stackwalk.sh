#!/bin/bash
# Stack walks through traced frames in a C program, under both engines (see 82-unwind.sh): the C
# library loads libgcc_s only when it first walks the stack; backtrace() from inside traced
# calls, _Unwind_Backtrace called by a tail call, a thread cancelled inside traced calls. And an
# unwinder linked into the executable, which the inject engine hands to the ptrace engine.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/unwind.sh"
require_calltrace

for opt in O0 O2; do
    build stackwalk "$opt"
    UNFINISHED=(cancelled stuck stuck stuck stuck)
    run_both "stackwalk -$opt" "$BIN"
    deep_backtrace
    chk check-parent leaf walk main
    chk check-parent count_frame walk_direct
done

# An unwinder linked into the executable cannot be stopped at: the ptrace engine traces it.
CTX="[unwind, static libgcc and libstdc++, --engine=inject]"
build unwind O2 -static-libgcc -static-libstdc++
CALLTRACE_ENGINE=inject standard_case "$BIN"
grep -q 'an unwinder linked into the executable .* it is traced by the ptrace engine' "$CT_ERR" ||
    fail "no line says the ptrace engine traces it: $(cat "$CT_ERR")"
