#!/bin/bash
# Fault: calltrace itself is SIGKILLed at a pseudo-random moment. The program must die with it
# (PTRACE_O_EXITKILL), and `calltrace export RUN` must turn what was written of the binary
# record into a valid trace: everything up to the last flush (every ~10 ms, or each 256 KiB
# of record), marked incomplete. Under the inject engine, the events not drained from the rings
# yet (at most a millisecond's) are lost too. The program calls at a pace of its own, one
# level1 -> level2 -> work chain every 75 us, so that a time lost is a number of calls.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build faults O2
RANDOM=${CT_SEED:-52}

complete_flag() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["otherData"]["complete"])' "$CT_TRACE"; }

for run in 1 2 3 4; do
    n=$((600 + RANDOM % 2000))
    CTX="[run $run, SIGKILL after $n markers]"
    rm -f "$T/ctr" "$T/pid"
    ct_start_bg "$BIN" busy "$T/ctr" "$T/pid" 75
    wait_until 60 "$n progress markers" progress_ge "$T/ctr" "$n"
    BG_PROG=$(cat "$T/pid")
    kill -KILL "$BG"
    at=$(progress "$T/ctr")
    ct_wait_bg 20
    expect_rc 137 "calltrace was killed"
    wait_until 20 "the program (pid $BG_PROG) to die with calltrace" pid_ended "$BG_PROG"
    [ -f "$CT_DIR/events.ctr" ] || fail "no events.ctr in $CT_DIR: $(ls -A "$CT_DIR")"
    [ ! -e "$CT_TRACE" ] || fail "a trace.json exists although calltrace was killed before the end"
    size=$(stat -c %s "$CT_DIR/events.ctr")

    run_dir=$CT_DIR
    ct_raw export "$run_dir"
    CT_DIR=$run_dir CT_TRACE=$run_dir/trace.json
    expect_rc 0 "calltrace export of a killed run"
    expect_trace
    chk check-nesting
    chk check-unfinished --may main --may level1 --may level2 --may work
    [ "$(complete_flag)" = False ] || fail "trace of a killed run says complete: $(complete_flag)"
    grep -q "^calltrace: trace in $run_dir/trace.json: [0-9]* calls\\?" "$CT_ERR" ||
        fail "export printed no closing line: $(head -c 500 "$CT_ERR")"
    works=$(query counts | sed -n 's/^work //p')
    # About 10 ms of calls can be lost (130 work calls at this pace); 1,000 allowed, for the
    # signal's own delivery and a loaded machine.
    [ "${works:-0}" -ge $((at - 1000)) ] ||
        fail "export recovered ${works:-0} work calls of $at: more than ~75 ms of calls lost"
    [ "${works:-0}" -le "$at" ] || fail "export recovered ${works:-0} work calls, more than the $at made"
    note "killed after $at markers: record $size bytes, export recovered ${works:-0} work calls, $(query summary | sed -n 's/^calls //p') calls"
done
