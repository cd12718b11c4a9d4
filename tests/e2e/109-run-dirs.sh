#!/bin/bash
# Run directories: a run that recorded no call because no -F pattern matched a function says so
# and leaves no run directory (with or without -l, named or the default); a run with calls
# keeps it. `calltrace calls` gives a call's entry and exit from the run's start: within the
# wall time of the run (measured here), in call order, and exit minus entry as in call.json.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build recursion O0

# no_run_left OPTIONS...: the run of recursion with OPTIONS leaves nothing, and says why
no_run_left() {
    CTX="[$*]"
    plain_run "$BIN" 4
    mkdir -p "$T/cwd.$_RUN_SEQ" && cd "$T/cwd.$_RUN_SEQ" || fail "cannot make a directory"
    ct_raw "${CT_ENGINE_OPT[@]}" "$@" "$BIN" 4
    cd "$T" || fail "cannot go back to $T"
    same_rc
    same_stdout
    grep -qE "^calltrace: no call recorded: no function matched -F nomatch\*( or the other -F patterns)?; no run directory was left" "$CT_ERR" ||
        fail "it does not say why nothing was left: $(cat "$CT_ERR")"
    [ -z "$(ls -A "$T/cwd.$((_RUN_SEQ - 1))")" ] || fail "something was left: $(ls -A "$T/cwd.$((_RUN_SEQ - 1))")"
    [ -e "$T/named" ] && fail "the run directory $T/named was left"
    return 0
}
no_run_left -F 'nomatch*'
no_run_left -o "$T/named" -F 'nomatch*'
no_run_left -o "$T/named" -F 'nomatch*' -F 'nomatch2' -l 'libc.so*'
grep -q "matches no function of the program nor of the libraries -l selected" "$CT_ERR" ||
    fail "no warning for the -F patterns with -l: $(cat "$CT_ERR")"

CTX="[-F matching]"
ct_run -F 'nomatch*' -F 'is_*' -- "$BIN" 4
expect_trace
chk check-counts is_even=639 is_odd=640 fib=0
grep -q "no call recorded" "$CT_ERR" && fail "$(cat "$CT_ERR")"

# calls: times from the run's start
CTX="[calls times]"
start=$(now_ms)
ct_run -A -F fib -- "$BIN" 4
wall_ns=$((($(now_ms) - start + 1) * 1000000))
expect_trace
to_ns() { # "1.500 ms" -> 1500000
    awk -v v="$1" -v u="$2" 'BEGIN { s = u == "s" ? 1e9 : u == "ms" ? 1e6 : u == "us" ? 1e3 : 1; printf "%.0f\n", v * s }'
}
prev=0
for n in 1 2 3 4 5; do
    "$CALLTRACE" calls "$CT_DIR" fib "$n" >"$T/call.txt" 2>"$T/call.err" || fail "calls fib $n: $(cat "$T/call.err")"
    read -r entry eu exit xu < <(sed -n 's/^fib #'"$n"'  pid [0-9]*  tid [0-9]*  entry \([0-9.]*\) \([a-z]*\)  exit \([0-9.]*\) \([a-z]*\).*/\1 \2 \3 \4/p' "$T/call.txt")
    [ -n "$xu" ] || fail "calls fib $n: $(cat "$T/call.txt")"
    entry_ns=$(to_ns "$entry" "$eu") exit_ns=$(to_ns "$exit" "$xu")
    [ "$entry_ns" -ge "$prev" ] && [ "$exit_ns" -ge "$entry_ns" ] && [ "$exit_ns" -le "$wall_ns" ] ||
        fail "fib #$n: entry $entry $eu, exit $exit $xu: not within the run's $wall_ns ns, after call $((n - 1))'s entry"
    prev=$entry_ns
    "$CALLTRACE" calls --json "$CT_DIR" fib "$n" >"$T/call.json" || fail "calls --json fib $n"
    python3 - "$T/call.json" "$CT_DIR/calls/fib/$n/call.json" <<'PY' || fail "calls --json fib $n: $(cat "$T/call.json")"
import json, sys
shown, kept = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
d_shown = shown["exit_from_start_us"] - shown["entry_from_start_us"]
d_kept = kept["exit_us"] - kept["entry_us"]
assert abs(d_shown - d_kept) < 0.002, (d_shown, d_kept)
assert 0 <= shown["entry_from_start_us"] < shown["entry_us"], shown
PY
done
exit 0
