#!/bin/bash
# Unwinding through traced frames, under both engines: C++ exceptions (destructors that call
# traced functions, rethrow, nested try, catch (...), a throw from a qsort comparator, a throw
# caught inside a destructor run by another unwinding, frames that go on and return normally
# after a catch), threads throwing at once, a thread cancelled inside traced frames, a forked
# child throwing through the calls it inherited, and
# backtrace() from inside traced calls, in C++ and in C (where the C library loads libgcc_s only
# when it first walks the stack). The program's output (its backtraces included) is the same as
# untraced, its counters match the trace, and both engines give the same tree: the inject
# engine handles these itself (no line saying the ptrace engine traces it instead), except with
# an unwinder linked into the executable, which it hands to the ptrace engine, saying so.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

# The trees of every thread, without durations or ids, threads sorted (their tids differ), and
# without "unwound" marks: the ptrace engine takes a call for returned when the catch block goes
# on at its return address; the inject engine knows it was unwound (README, the inject engine).
tree_shape() {
    "$CALLTRACE" tree "$1" | python3 -c '
import sys
blocks, cur = [], []
for line in sys.stdin:
    if line.startswith("# pid"):
        if cur:
            blocks.append("".join(cur))
        cur = []
        continue
    cur.append(line[12:].replace(" /* unwound */", ""))
if cur:
    blocks.append("".join(cur))
sys.stdout.write("".join(sorted(blocks)))' >"$2" || fail "calltrace tree $1 failed"
}

# run_both CASE BIN ARGS...: the standard checks under each engine, then the same tree.
run_both() {
    local name=$1
    shift
    for engine in ptrace inject; do
        CTX="[$name, --engine=$engine]"
        CALLTRACE_ENGINE=$engine standard_case "$@"
        chk check-unfinished "${UNFINISHED[@]}"
        if grep -q 'it is traced by the ptrace engine' "$CT_ERR"; then
            fail "the inject engine handed it to the ptrace engine: $(cat "$CT_ERR")"
        fi
        tree_shape "$CT_DIR" "$T/$name.$engine.tree"
    done
    CTX="[$name]"
    diff "$T/$name.ptrace.tree" "$T/$name.inject.tree" >"$T/tree.diff" ||
        fail "the engines' trees differ (< ptrace, > inject): $(head -20 "$T/tree.diff")"
}

# The backtrace goes through the traced frames (walk, 4 deep, and its callers): untraced, it has
# at least 8; an unwinder stopped by a hooked return address sees 2.
deep_backtrace() {
    local n
    n=$(sed -n 's/^backtrace: \([0-9]*\) frames$/\1/p' "$CT_OUT" | head -1)
    [ "${n:-0}" -ge 8 ] || fail "the first backtrace has ${n:-no} frames, expected at least 8"
}

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

    UNFINISHED=('cancelled(void*)' 'stuck(int)')
    run_both "unwind threads -$opt" "$BIN" threads
    chk check-per-tid 'catch_all(int)' 40 40 40 40
    chk check-per-tid 'stuck(int)' 3
    grep -q '^cancelled yes$' "$CT_OUT" || fail "the thread was not cancelled: $(cat "$CT_OUT")"

    UNFINISHED=(--may 'dive(int)') # unfinished if no traced call follows the catch (-O2)
    run_both "unwind fork -$opt" "$BIN" fork
    grep -q '^child status 7$' "$CT_OUT" || fail "the child did not catch: $(cat "$CT_OUT")"

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
