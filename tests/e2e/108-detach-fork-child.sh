#!/bin/bash
# calltrace -p detaches while a child the program forked has not run yet: its first stop comes
# only with the detach. The child still has its parent's patched entries, the call it was forked
# from hooked, and its copy of calltrace's code and shared region; it must be let go as any
# forked child is (entries back, the region a private copy, the inherited return address put
# back) before anything is unmapped in it. It then returns from that call and computes through
# the functions that were patched, checking every result (tests/progs/fork_on_cue.c).
#
# Made deterministic by stopping calltrace (SIGSTOP) before the program forks: the fork's event
# and the child's first stop wait, unseen, until calltrace is continued with SIGINT already
# pending, so the handler runs before calltrace looks at either of them and it detaches next.
# On the code before the fix the child died of SIGSEGV (its code region unmapped under it, the
# return address still leading there); before the detach unmapped anything, it ran on with its
# parent's shared region still mapped (/memfd:calltrace-rings).
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/attachlib.sh"
require_calltrace
engine_unsupported ptrace "a breakpoint would stop the program before it forks, calltrace stopped"
build fork_on_cue O2
target_start "$BIN" "$T/child"
cat "/proc/$PROG/maps" >"$T/before.maps" || fail "cannot read the program's maps"

# child: the pid of the program's one child, or nothing.
child() {
    local c=""
    read -r c _ <"/proc/$PROG/task/$PROG/children" 2>/dev/null
    printf '%s' "$c"
}
# in_first_stop: the program's one child exists and sits in a ptrace stop (its first).
in_first_stop() {
    local c
    c=$(child)
    [ -n "$c" ] && [ "$(proc_state "$c")" = t ]
}

variants=("" --attach-breakpoints)
i=0
for opt in "${variants[@]}"; do
    i=$((i + 1))
    CTX="[fork $i${opt:+, $opt}]"
    opts=("${CT_ENGINE_OPT[@]}")
    [ -n "$opt" ] && opts+=("$opt")
    "$CALLTRACE" "${opts[@]}" -q -p "$PROG" -o "$T/run$i" 2>"$T/ct$i.err" &
    ct=$!
    ATTACH_CT=$ct
    wait_until 30 "calltrace to attach" traced_by "$PROG" "$ct"
    wait_until 30 "calls to be recorded" recording "$T/run$i/events.ctr"
    kill -STOP "$ct"
    wait_until 10 "calltrace to stop" test "$(proc_state "$ct")" = T
    echo fork >&3
    wait_until 10 "the child to be forked and stopped" in_first_stop
    child=$(child)
    kill -INT "$ct"
    kill -CONT "$ct"
    within 30 pid_ended "$ct" || fail "calltrace still runs 30 s after SIGINT: $(stuck_state "$ct")"
    wait "$ct"
    CT_RC=$?
    ATTACH_CT=""
    attach_checks "$i"
    wait_until 30 "the child to end" grep -q "^child $i " "$PROG_LOG"
    grep -qx "child $i exit 0" "$PROG_LOG" ||
        fail "the child (pid $child) failed: $(grep "^child $i " "$PROG_LOG")"
    # What the child has that the program had not before the attach: its private copy of the
    # region (README, What detach leaves behind), nothing shared, no code of calltrace's.
    added=$(comm -13 <(sort "$T/before.maps") <(sort "$T/child.$i"))
    grep -v '^[0-9a-f]*-[0-9a-f]* rw-p 00000000 00:00 0 *$' <<<"$added" | grep . &&
        fail "the child kept more than private data: $added"
    [ -n "$added" ] || fail "the child's copy of the region is gone: a mapping it may use"
    cmp -s <(sort "$T/before.maps") <(sort "/proc/$PROG/maps") ||
        fail "the program's maps differ: $(diff "$T/before.maps" "/proc/$PROG/maps" | head -20)"
done
target_finish "rounds >0 forks $i errors 0"
echo "$i children forked at the detach: released whole, they ran their checks"
