#!/bin/bash
# -A -R with --engine=inject, whatever CALLTRACE_ENGINE says: the trampolines copy registers and
# pointees (process_vm_readv) into the rings. Bad char * and --capture pointers (NULL, unmapped,
# into a hole, PROT_NONE, the null page) leave the program unharmed and show as the ptrace
# engine shows them; trace.json and every call.json hold the same values under both engines
# (addresses aside: the inject engine's own mappings move the program's); threads and a signal
# handler calling captured functions while the interrupted thread is inside a trampoline give
# every call its own arguments, exactly.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

# values_of RUN: every call's values, per function in call order, addresses masked
values_of() {
    python3 - "$1" <<'PY'
import json, os, re, sys
run = sys.argv[1]
mask = lambda v: re.sub(r"0x[0-9a-f]+", "0xADDR", v)
trace = [e for e in json.load(open(os.path.join(run, "trace.json")))["traceEvents"]
         if e.get("ph") == "X"]
for e in sorted(trace, key=lambda e: (e["tid"], e["ts"])):
    print("trace", e["name"], json.dumps({k: mask(v) for k, v in e.get("args", {}).items()}))
calls = os.path.join(run, "calls")
index = json.load(open(os.path.join(calls, "index.json"))) if os.path.isdir(calls) else {}
for f in index.get("functions", []):
    for n in range(1, f["folders"] + 1):
        c = json.load(open(os.path.join(run, "calls", f["folder"], str(n), "call.json")))
        vals = [(p["name"], p["type"], mask(p["value"])) for p in c["params"]]
        if "return" in c:
            vals.append(("return", c["return"]["type"], mask(c["return"]["value"])))
        print("call", f["name"], n, json.dumps(vals))
PY
}

for opt in O0 O2; do
    CTX="[same -$opt]"
    build argstress "$opt"
    plain_run "$BIN"
    for engine in ptrace inject; do
        ct_run -v --engine=$engine -A -R --capture fill:buf:len -- "$BIN"
        expect_rc 0
        expect_trace
        same_stdout
        chk check-counts -f "$CT_OUT"
        if [ $engine = inject ]; then
            grep -q "functions traced in process [0-9]* (inject)" "$CT_ERR" ||
                fail "the inject engine did not run: $(tail -5 "$CT_ERR")"
        fi
        values_of "$CT_DIR" >"$T/values.$engine" || fail "cannot read the values of $CT_DIR"
    done
    diff "$T/values.ptrace" "$T/values.inject" >"$T/diff" ||
        fail "the engines recorded different values: $(head -20 "$T/diff")"
    # and they are the right ones
    python3 - "$CT_TRACE" <<'PY' || fail "wrong values under inject"
import json, sys
ev = sorted((e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("ph") == "X"),
            key=lambda e: e["ts"])
by = {}
for e in ev:
    by.setdefault(e["name"], []).append(e.get("args", {}))
label, fill = by["label"], by["fill"]
assert label[0]["s"].endswith(' "fine"') and label[0]["return"] == "2", label[0]
assert label[1]["s"] == "0x0", label[1]
for k in (2, 4, 5):
    assert label[k]["s"].endswith(" <unreadable>"), label[k]
assert label[3]["s"].endswith(' "bbbbb"...'), label[3]
assert fill[0]["buf"].endswith(' "abcdef"...') and fill[0]["len"] == "6", fill[0]
assert fill[1]["buf"] == "0x0", fill[1]
assert fill[2]["buf"].endswith(" <unreadable>") and fill[4]["buf"].endswith(" <unreadable>")
assert fill[3]["buf"].endswith(' "bbb"...'), fill[3]
assert fill[5]["len"] == "-1" and "'b' <repeats 4096 times>" in fill[5]["buf"], fill[5]
assert by["scale"][0] == {"x": "1.25", "f": "-3.5", "k": "7", "return": "2.625"}, by["scale"][0]
assert by["wide"][0] == {"x": "3", "return": "1.5"}, by["wide"][0]
assert [a["return"].split(" ", 1)[1] for a in by["name_of"][:4]] == \
    ['"zero"', '"one"', '"two"', '"zero"'], by["name_of"][:4]
PY
    note "$(wc -l <"$T/values.inject") values, the same under both engines"
done

# -R alone, and -A for some functions only (the others enter the plain trampoline; call_fn
# tail-calls square through its function pointer), give the same values too
build argtypes O2
for opts in "-R" "-Asquare -Astrings -R --string-max 3"; do
    CTX="[argtypes -O2 $opts]"
    for engine in ptrace inject; do
        # shellcheck disable=SC2086
        ct_run --engine=$engine $opts -- "$BIN"
        expect_rc 0
        values_of "$CT_DIR" >"$T/values.$engine" || fail "cannot read the values of $CT_DIR"
    done
    diff "$T/values.ptrace" "$T/values.inject" >"$T/diff" ||
        fail "the engines recorded different values: $(head -20 "$T/diff")"
done

CTX="[threads, signals]"
build argstress O2
plain_run "$BIN" stress 3 300
# rings that hold every call: a busy machine may not drain them in time, and a full ring drops
ct_run --engine=inject --buffer-size 32M -A -R --capture fill:buf:len --max-call-dirs 20 -- \
    "$BIN" stress 3 300
expect_rc 0
expect_trace
same_stdout --ignore-counts
chk check-counts -f "$CT_OUT"
chk check-nesting
cat >"$T/check_stress.py" <<'PY'
import json, re, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("ph") == "X"]
threads, handled, n = set(), 0, 0
for e in ev:
    a, name = e.get("args", {}), e["name"]
    if name == "label":
        m = re.fullmatch(r'0x[0-9a-f]+ "t(\d+)-(\d+)"', a["s"])
        assert m and m.group(2) == a["i"] and a["return"] == str(2 * int(a["i"])), a
        threads.add((e["tid"], m.group(1)))
    elif name == "fill":
        i = int(a["len"])
        assert 0 <= i < 17 and a["return"] == a["len"], a
    elif name == "scale":
        k = int(a["k"])
        assert a["x"] == str(k + 0.5) and a["f"] == "2" and float(a["return"]) == 3 * k + 1, a
    elif name == "in_handler":
        assert a == {"sig": "10", "tag": a["tag"], "return": "10"}, a
        assert a["tag"].endswith(' "handler"'), a
        handled += 1
    n += 1
# each thread calls with its own number, and never another's
assert len(threads) == 4 and len({t for t, _ in threads}) == 4, threads
assert handled >= 20, handled
print(n, "calls,", handled, "in the signal handler, each with its own values")
PY
summary=$(python3 "$T/check_stress.py" "$CT_TRACE" 2>&1) ||
    fail "a call's values are not its own: $summary"
note "$summary"

exit 0
