#!/bin/bash
# Unwinding through traced frames, under both engines: C++ exceptions (destructors that call
# traced functions, rethrow, nested try, catch (...), a throw from a qsort comparator, a throw
# caught inside a destructor run by another unwinding, frames that go on and return normally
# after a catch), backtrace() from inside traced calls, and a forked child throwing through the
# calls it inherited. The program's output (its backtraces included) is the same as untraced,
# its counters match the trace, and both engines give the same tree: the inject engine handles
# these itself (no line saying the ptrace engine traces it instead). Threads and cancellation:
# 83-unwind-threads.sh; C and static unwinders: 84-unwind-stackwalk.sh.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/unwind.sh"
require_calltrace

for opt in O0 O2; do
    build unwind "$opt"
    UNFINISHED=()
    run_both "unwind -$opt" "$BIN"
    deep_backtrace
    chk check-parent 'Guard::~Guard()' 'dive(int)' 'relay(int)' 'inner(int)' 'survivor(int)'
    chk check-parent 'note(int)' 'Guard::~Guard()' 'relay(int)' 'Careful::~Careful()'
    chk check-parent 'compare(void const*, void const*)' 'sorter()'
    chk check-parent 'after(int)' 'survivor(int)' 'outer(int)'
    chk check-parent 'survivor(int)' 'outer(int)'
    chk check-parent 'inner(int)' 'Careful::~Careful()'
    chk check-parent 'show()' 'walk(int)'
    for f in 'outer(int)' 'survivor(int)' 'catch_all(int)' 'relay(int)'; do
        d=$(query maxdepth "$f")
        [ "$d" = 1 ] || fail "$f frames pile up after exceptions: max nesting $d, expected 1"
    done

    UNFINISHED=(--may 'dive(int)') # unfinished if no traced call follows the catch (-O2)
    run_both "unwind fork -$opt" "$BIN" fork
    grep -q '^child status 7$' "$CT_OUT" || fail "the child did not catch: $(cat "$CT_OUT")"
done
