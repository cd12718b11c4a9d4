#!/bin/bash
# calltrace -p: attach to a running multi-threaded program 30 times and detach
# each time, while it computes checksums through traced functions, handles
# signals, blocks in read() and nanosleep(), and creates threads. The program
# checks itself: every checksum against inline arithmetic, every signal
# handled, no EINTR, no short sleep. It must end with exit 0 and its figures.
# calltrace is stopped by SIGINT, SIGTERM and SIGHUP in turn, each as soon as
# it has recorded its first calls: wherever the program's threads are then. The program must
# not keep the memory of the attachments: its resident size grows by little.
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/attachlib.sh"
require_calltrace
build attachee O2
target_start "$BIN"

CYCLES=${ATTACH_CYCLES:-30}
[ -n "${CALLTRACE_REAL:-}" ] && CYCLES=${ATTACH_CYCLES:-9} # under valgrind: 264 s for 30
calls_seen=0
for i in $(seq 1 "$CYCLES"); do
    CTX="[attach cycle $i]"
    sigs=(INT TERM HUP)
    attach_cycle "$i" "${sigs[i % 3]}" # each of the stop signals in turn
    # the trace itself is checked by attach_checks; the count comes from the record, which
    # costs no second reading of trace.json
    n=$("$CALLTRACE" report -f csv "$T/run$i" | awk -F, '$1 == "\"step\"" { print $3 }')
    calls_seen=$((calls_seen + ${n:-0}))
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$PROG/status")
    [ "$i" = 1 ] && rss_first=$rss
done
CTX=""
[ "$calls_seen" -gt 0 ] || fail "no call of step() was recorded in $CYCLES attachments"
# what each attachment's threads wrote into their rings is given back at detach (it was ~9 MB an
# attachment); the control blocks, shadow stacks and code stay, ~70 kB
[ $((rss - rss_first)) -le $((CYCLES * 512)) ] ||
    fail "the program grew from $rss_first kB to $rss kB of resident memory in $CYCLES attachments"
target_finish 'rounds>0 1 signals exact threads>0 1 reads exact errors 0'
echo "$CYCLES cycles, $calls_seen calls of step() recorded"
