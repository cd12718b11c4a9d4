#!/bin/bash
# --engine=inject, overflow: when calltrace does not drain a ring in time, the program runs on
# and its calls are dropped and counted, never blocked for good. The count is the same in the
# closing line, in trace.json's otherData.dropped_calls and in `calltrace report --format
# json` (and summed by merge), and it is exact: recorded + dropped = the calls the program counted.
# The program stops calltrace itself (SIGSTOP, then waits until /proc shows it stopped) and
# makes 20000 calls into a 64 KiB ring (2048 events): drops are certain, with no timing.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
export CALLTRACE_ENGINE=inject

for opt in O0 O2; do
    CTX="[ring overflow -$opt]"
    build ring_overflow "$opt"
    plain_run "$BIN" 20000
    ct_run --buffer-size 64K -- "$BIN" 20000
    expect_trace
    same_rc
    same_stdout
    chk check-nesting
    line=$(grep -E '^calltrace: [0-9]+ calls were not recorded' "$CT_ERR") ||
        fail "no closing line counts dropped calls: $(cat "$CT_ERR")"
    closing=$(printf '%s\n' "$line" | awk '{ print $2 }')
    [ "$closing" -gt 0 ] || fail "no call was dropped"
    meta=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["otherData"]["dropped_calls"])' "$CT_TRACE") ||
        fail "trace.json has no otherData.dropped_calls"
    [ "$meta" = "$closing" ] || fail "trace.json says $meta dropped calls, the closing line $closing"
    made=$(awk '$1 == "count" && $2 == "work" { print $3 }' "$CT_OUT")
    recorded=$(query counts | awk '$1 == "work" { print $2 }')
    [ $((recorded + meta)) = "$made" ] ||
        fail "recorded $recorded + dropped $meta != $made calls the program made"
    chk check-counts main=1

    report=$("$CALLTRACE" report --format json "$CT_DIR" 2>"$T/report.err") ||
        fail "calltrace report failed: $(cat "$T/report.err")"
    from_report=$(printf '%s' "$report" | python3 -c 'import json,sys; print(json.load(sys.stdin)["dropped_calls"])')
    [ "$from_report" = "$closing" ] || fail "report says $from_report dropped calls, the closing line $closing"
    grep -q "$closing calls were not recorded" "$T/report.err" ||
        fail "report does not say that calls are missing: $(cat "$T/report.err")"

    # a merged run misses what its runs missed
    ct_raw merge "$CT_DIR" "$CT_DIR" -o "$T/merged-$opt"
    expect_rc 0
    merged=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["otherData"]["dropped_calls"])' "$T/merged-$opt/trace.json")
    [ "$merged" = $((2 * closing)) ] || fail "a run merged with itself says $merged dropped calls, not $((2 * closing))"
    note "ok: $made calls, $recorded recorded, $meta dropped"
done

CTX="[no drops]"
build ring_overflow O2
unset CALLTRACE_ENGINE
ct_run --engine=inject -- "$BIN" 0
expect_trace
meta=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["otherData"]["dropped_calls"])' "$CT_TRACE")
[ "$meta" = 0 ] || fail "dropped_calls is $meta for a run that dropped nothing"
grep -q 'not recorded' "$CT_ERR" && fail "a closing line counts drops that did not happen: $(cat "$CT_ERR")"
echo "PASS $TEST_NAME"
