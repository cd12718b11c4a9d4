#!/bin/bash
# C++ exceptions thrown through traced frames and caught higher up; the
# destructors run during unwinding (the program prints how many ran).
# Names are demangled with parameter lists: thrower(int), Obj::~Obj().
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
for opt in O0 O2; do
    CTX="[exceptions -$opt]"
    build exceptions "$opt"
    standard_case "$BIN"
    # under CALLTRACE_ENGINE=inject, the inject engine itself (tests/e2e/82-unwind.sh)
    if grep -q 'it is traced by the ptrace engine' "$CT_ERR"; then
        fail "handed to the ptrace engine: $(cat "$CT_ERR")"
    fi
    chk check-unfinished
    chk check-parent 'catcher(int)' main
    chk check-parent 'middle(int)' 'catcher(int)' 'rethrower(int)'
    chk check-parent 'thrower(int)' 'middle(int)' 'thrower(int)'
    chk check-parent 'Obj::~Obj()' 'thrower(int)' 'middle(int)' 'rethrower(int)'
    d=$(query maxdepth 'catcher(int)')
    [ "$d" = 1 ] || fail "catcher(int) frames pile up after exceptions: max nesting $d, expected 1"
done
