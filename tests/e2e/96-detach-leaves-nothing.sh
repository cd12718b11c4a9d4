#!/bin/bash
# calltrace -p, detached (SIGINT, SIGTERM, -t) again and again from a multi-threaded program that
# checks its own results (tests/progs/detach_residue.c): after each detach, the program's
# /proc/PID/maps, map_files and fd table are exactly what they were before the first attach: no
# shared memfd mapping, no shadow stack, no code region is left, and nothing grows from cycle to
# cycle.
# Unless a frame still needs them: the program parks a signal handler whose signal interrupted
# one of calltrace's trampolines (its saved rip in calltrace's code), and calltrace detaches
# under it. Then exactly what the README documents stays (the code regions, the region's header
# page, the parked thread's slot: control block, shadow stack, ring), private to the program and
# naming no process; attaching and detaching again while it is parked adds nothing; once the
# handler returned (into that code: the program must survive it and go on computing right), the
# next detach unmaps it too. Once with the handler returning between two attachments, once
# while the next calltrace is attached.
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/attachlib.sh"
engine_unsupported ptrace "it parks a signal handler in the inject engine's trampolines"
require_calltrace
build detach_residue O2
target_start "$BIN"

# snapshot NAME: the program's mappings, the files they map (map_files) and its descriptors.
snapshot() {
    cat "/proc/$PROG/maps" >"$T/$1.maps" || fail "cannot read the program's maps"
    ls "/proc/$PROG/map_files" | sort >"$T/$1.map_files"
    local fd
    for fd in /proc/"$PROG"/fd/*; do
        printf '%s %s\n' "${fd##*/}" "$(readlink "$fd")"
    done | sort >"$T/$1.fds"
}

# same NAME BASE: nothing differs from snapshot BASE.
same() {
    local what
    for what in maps map_files fds; do
        cmp -s "$T/$1.$what" "$T/$2.$what" ||
            fail "the program's $what differ from $2's: $(diff "$T/$2.$what" "$T/$1.$what" | head -20)"
    done
}

parked=0 unparked=0
command_done() { [ "$(grep -c "^$1 " "$PROG_LOG")" -gt "$2" ]; }
park() {
    echo park >&3
    wait_until 60 "the handler to park" command_done '\(parked\|park failed\)' "$parked"
    parked=$((parked + 1))
    grep -q '^park failed' "$PROG_LOG" && fail "no signal landed in calltrace's code"
}
unpark() {
    echo unpark >&3
    wait_until 60 "the handler to return and the spinner to go on" command_done unparked "$unparked"
    unparked=$((unparked + 1))
}

# cycle I SIG [BEFORE]: attach, record, run the command BEFORE (park, unpark), send SIG (or let
# -t end it, SIG "t"), and check that calltrace ended well.
cycle() {
    local i=$1 sig=$2 before=${3:-} ct opts=()
    [ "$sig" = t ] && opts=(-t 1)
    "$CALLTRACE" --engine=inject -q -p "$PROG" -o "$T/run$i" "${opts[@]}" 2>"$T/ct$i.err" &
    ct=$!
    ATTACH_CT=$ct
    CT_PID=$ct
    wait_until 30 "calltrace to attach" traced_by "$PROG" "$ct"
    wait_until 30 "calls to be recorded" recording "$T/run$i/events.ctr"
    [ -n "$before" ] && $before
    [ "$sig" = t ] || kill -"$sig" "$ct"
    within 30 pid_ended "$ct" || fail "calltrace still runs 30 s after SIG$sig: $(stuck_state "$ct")"
    wait "$ct"
    CT_RC=$?
    ATTACH_CT=""
    attach_checks "$i"
}

snapshot before
i=0
for sig in INT TERM t INT; do
    i=$((i + 1))
    CTX="[cycle $i, SIG$sig]"
    cycle $i $sig
    snapshot after$i
    same after$i before
done

# What stays for a parked handler: every added mapping private and anonymous (no memfd, nothing
# map_files or another process could open), r-x (the code regions) or rw- summing to the
# region's header page and one slot (4 KiB control block, 8 MiB shadow stack, the default 8 MiB
# ring and its 64 KiB of slack), and not one word of it naming the calltrace that left it.
check_kept() {
    local name=$1 ct_pid=$2 added rw=0 lo hi perms rest
    comm -23 <(sort "$T/before.maps") <(sort "$T/$name.maps") | grep . &&
        fail "a mapping of the program changed: $(diff "$T/before.maps" "$T/$name.maps")"
    added=$(comm -13 <(sort "$T/before.maps") <(sort "$T/$name.maps"))
    [ -n "$added" ] || fail "nothing was kept for the parked handler"
    while read -r range perms _ _ inode rest; do
        lo=$((16#${range%-*})) hi=$((16#${range#*-}))
        [ "$inode" = 0 ] && [ -z "$rest" ] || fail "a kept mapping maps a file: $range $perms $rest"
        case $perms in
        r-xp) ;;
        rw-p) rw=$((rw + hi - lo)) ;;
        *) fail "a kept mapping is $perms: $range" ;;
        esac
    done <<<"$added"
    [ "$rw" = $((4096 + 4096 + (8 << 20) + (8 << 20) + (64 << 10))) ] ||
        fail "kept $rw bytes of data, not the header and one slot: $added"
    cmp -s "$T/$name.map_files" "$T/before.map_files" || fail "map_files differ: $(cat "$T/$name.map_files")"
    cmp -s "$T/$name.fds" "$T/before.fds" || fail "descriptors differ: $(cat "$T/$name.fds")"
    python3 - "$PROG" "$ct_pid" <<<"$added" <<'EOF' || fail "a kept word names calltrace's pid $ct_pid"
import struct, sys
pid, ct = int(sys.argv[1]), int(sys.argv[2])
with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
    for line in sys.stdin.read().split("\n"):
        if " rw-p " not in line:
            continue
        lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
        mem.seek(lo)
        data = mem.read(hi - lo)
        for off in range(0, len(data), 8):
            if struct.unpack_from("<Q", data, off)[0] == ct:
                sys.exit(1)
EOF
}

CTX="[parked at the detach]"
i=$((i + 1))
cycle $i INT park
snapshot kept
check_kept kept "$CT_PID"
for sig in TERM INT; do
    i=$((i + 1))
    CTX="[cycle $i, handler still parked]"
    cycle $i $sig
    snapshot after$i
    same after$i kept
done
CTX="[the handler returns, calltrace gone]"
unpark
snapshot unparked
same unparked kept
i=$((i + 1))
CTX="[cycle $i, after the handler returned]"
cycle $i INT
snapshot after$i
same after$i before

CTX="[parked, then returns while the next calltrace is attached]"
i=$((i + 1))
cycle $i INT park
snapshot kept2
check_kept kept2 "$CT_PID"
i=$((i + 1))
cycle $i TERM unpark
snapshot after$i
same after$i before

target_finish 'rounds >0 spins 2 errors 0 bad_sum 0 bad_spin 0'
echo "$i attach/detach cycles: nothing left after each, what a parked handler used kept and then unmapped"
