#!/bin/bash
# Soak, not part of make check (it does not pass yet; run it as
#   CALLTRACE=$PWD/calltrace bash tests/soak/attach-killed-at-each-write.sh
# from the top of the tree, after make check built the test programs). What it shows, issue 16:
# kills at the first few moments and in the middle of the patching leave the program running,
# but after five or six kills in a row (each attaching onto what the last one left) the program
# dies of SIGTRAP at a later kill point. Kills inside the first remote system call (writes 1-2:
# "syscall; int3" over the thread's own instruction) are left out: they kill the program.
#
# SIGKILL of calltrace at any moment of an attachment is harmless: strace's fault injection kills
# calltrace right before its N-th write into the program (pwrite64 on /proc/PID/mem: the code
# region, each page of jumps and hops, the threads' control blocks, the detach's restores), for
# N spread over the whole attachment (first writes, middle of the patching, binding the threads,
# recording, detaching, last write). The program (tests/progs/attach_unwind.cc: threads that
# throw through traced frames, walk their stacks, call functions patched through hops, check
# every value) goes on right after each kill, forks, and is attached again by the next kill's
# calltrace, which finds what the killed one left; at the end a calltrace that is not killed
# attaches and detaches, and the program ends with exit 0 and its checks held. Before, a kill
# between two pages of jumps could leave an entry leading to a hop not written yet.
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/attachlib.sh"
require_calltrace
engine_unsupported ptrace "the ptrace engine is made of breakpoints"
command -v strace >/dev/null || fail "strace is not installed (scripts/install-deps.sh --test installs it)"
build attach_unwind O2
target_start "$BIN"
FUNCS=(-F dive -F catcher -F relay -F 'walk*' -F round_trip -F fork_child -F 'tiny_*' -F spin_down
    -F leaf)

# How many writes one attachment makes, start to end.
CTX="[an attachment's writes, counted]"
strace -qq -o "$T/writes.log" -e trace=pwrite64 "$CALLTRACE" -q -p "$PROG" -o "$T/run0" -t 1 \
    "${FUNCS[@]}" 2>"$T/ct0.err" || fail "calltrace under strace failed: $(tail -5 "$T/ct0.err")"
total=$(grep -c '^pwrite64(' "$T/writes.log")
[ "$total" -ge 8 ] || fail "only $total writes counted: $(head -5 "$T/writes.log")"

forks=0
for n in 3 4 5 $((total / 8)) $((total / 4)) $((total / 2)) $((total * 3 / 4)) $((total - 1)) "$total"; do
    CTX="[killed before write $n of $total]"
    strace -qq -o /dev/null -e trace=pwrite64 -e inject=pwrite64:signal=KILL:when="$n" \
        "$CALLTRACE" -q -p "$PROG" -o "$T/run$n" -t 1 "${FUNCS[@]}" 2>"$T/ct$n.err"
    wait_until 10 "the program to be let go" traced_by "$PROG" 0
    kill -0 "$PROG" 2>/dev/null || fail "the program died: $(tail -3 "$PROG_LOG")"
    forks=$((forks + 1))
    echo fork >&3
    wait_until 30 "the program's fork after the kill" grep -q "^forked $forks\$" "$PROG_LOG"
done

CTX="[attached again, not killed]"
"$CALLTRACE" -q -p "$PROG" -o "$T/last" -t 1 "${FUNCS[@]}" 2>"$T/last.err"
CT_RC=$?
[ "$CT_RC" = 0 ] || fail "calltrace exited $CT_RC: $(tail -5 "$T/last.err")"
traced_by "$PROG" 0 || fail "the program is still traced after calltrace exited"
CT_TRACE=$T/last/trace.json
chk check-nesting
[ "$(query counts | awk '$1 == "spin_down" { print $2 }')" -gt 0 ] || fail "no call of spin_down() recorded"
target_finish 'rounds>0 1 errors 0'
echo "calltrace killed before each of $total writes' moments: the program ran on unharmed"
