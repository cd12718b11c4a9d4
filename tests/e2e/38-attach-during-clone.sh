#!/bin/bash
# calltrace -p on a program that creates threads and processes from its main
# thread without pause: attaches often find it inside clone() or fork(), where
# calltrace must not run its own system calls in that thread before the
# kernel has returned the new thread's or child's id. The program checks
# every pthread_create, fork, join and child status itself.
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/attachlib.sh"
require_calltrace
build spawner O2
target_start "$BIN"

CYCLES=${ATTACH_CYCLES:-40}
[ -n "${CALLTRACE_REAL:-}" ] && CYCLES=${ATTACH_CYCLES:-10} # under valgrind: 69 s for 40
for i in $(seq 1 "$CYCLES"); do
    CTX="[attach cycle $i]"
    attach_cycle "$i" INT
    grep -vqx ready "$T/prog.out" && fail "the program saw an error: $(grep -vx ready "$T/prog.out" | head -3)"
done
target_finish 'threads>0 1 processes>0 1 errors 0'
echo "$CYCLES cycles"
