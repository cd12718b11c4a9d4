#!/bin/bash
# -A -R: every kind of parameter and return value of tests/progs/argtypes.c (C) and argcxx.cc
# (C++ references, this, operators, templates), at -O0 and -O2, equals what gdb prints for the
# same calls (info args after the prologue, the value finish returns); trace.json's args and
# the call folders agree, and their times are the trace's.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
command -v gdb >/dev/null || fail "gdb is not installed (scripts/install-deps.sh installs it)"

compare_with_gdb() { # compare_with_gdb PROG FUNCS...
    local prog=$1
    shift
    plain_run "$prog"
    ct_run -A -R -- "$prog"
    expect_rc 0
    same_stdout
    [ -f "$CT_DIR/calls/index.json" ] || fail "no call folders in $CT_DIR"
    FUNCS="$*" timeout -k 5 60 gdb -q -batch -nx -x "$TESTS_DIR/lib/gdb_values.py" "$prog" \
        >"$T/gdb.out" 2>"$T/gdb.err" </dev/null || fail "gdb failed: $(tail -5 "$T/gdb.err")"
    python3 "$TESTS_DIR/lib/compare_args.py" "$T/gdb.out" "$CT_DIR" >"$T/cmp.out" ||
        fail "calltrace and gdb differ: $(cat "$T/cmp.out")"
    note "$(tail -1 "$T/cmp.out")"
    # trace.json carries the same values, and call.json the trace's times
    python3 - "$CT_TRACE" "$CT_DIR/calls" <<'PY' || fail "trace.json and the call folders disagree"
import json, os, sys
trace = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("ph") == "X"]
index = json.load(open(os.path.join(sys.argv[2], "index.json")))
for f in index["functions"]:
    events = sorted((e for e in trace if e["name"] == f["name"]), key=lambda e: e["ts"])
    assert len(events) == f["calls"], (f["name"], len(events), f["calls"])
    for n, e in enumerate(events[: f["folders"]], 1):
        c = json.load(open(os.path.join(sys.argv[2], f["folder"], str(n), "call.json")))
        want = {p["name"]: p["value"] for p in c["params"]}
        if "return" in c:
            want["return"] = c["return"]["value"]
        assert e.get("args", {}) == want, (f["name"], n, e.get("args"), want)
        assert abs(c["entry_us"] - e["ts"]) < 0.002, (c["entry_us"], e["ts"])
        assert abs(c["exit_us"] - (e["ts"] + e["dur"])) < 0.002, (c["exit_us"], e["ts"], e["dur"])
PY
}

C_FUNCS="square integers wide chars enums floats half ldouble boxed strings pointers call_fn points
mixed bigs named unions many arrays nothing variadic packs repack"
for opt in O0 O2; do
    CTX="[argtypes -$opt]"
    build argtypes "$opt"
    compare_with_gdb "$BIN" $C_FUNCS
    CTX="[argcxx -$opt]"
    build argcxx "$opt"
    # leaf_sum: base classes. At -O2 gdb 13 prints its by-value Leaf (in rdi:rsi) as zeros.
    compare_with_gdb "$BIN" "Vec::operator+" "Vec::scaled" "twice<long>" $([ "$opt" = O0 ] && echo leaf_sum)
done
exit 0
