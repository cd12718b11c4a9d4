# shellcheck shell=bash
# unwind.sh -- helpers of the unwinding tests (tests/e2e/8[234]-unwind*.sh), sourced after testlib.sh.

# The trees of every thread, without durations or ids, threads sorted (their tids differ), and
# without "unwound" marks: the ptrace engine takes a call for returned when the catch block goes
# on at its return address; the inject engine knows it was unwound (README, the inject engine);
# nor "breakpoint" marks: which engine traced a call is not the call's shape.
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
    cur.append(line[12:].replace(" /* unwound */", "").replace(" /* breakpoint */", ""))
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
