#!/bin/bash
# calltrace calls: the summary of a run's arguments, one call by number (text and --json), the
# newest run by default; --max-call-dirs caps the folders (and says so) while the trace keeps
# every call; unsafe C++ names get safe folders listed in the index; export rebuilds them.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

CTX="[cap]"
build argfaults O0
ct_run -A -R --max-call-dirs 5 -- "$BIN"
expect_rc 0
grep -q '1 function had more calls than --max-call-dirs 5' "$CT_ERR" ||
    fail "the closing summary does not say the cap was reached: $(cat "$CT_ERR")"
chk check-counts tick=12
RUN=$CT_DIR
folders=$(find "$RUN/calls/tick" -name call.json | wc -l)
[ "$folders" = 5 ] || fail "tick: $folders folders, expected 5"
ct_raw calls "$RUN"
expect_rc 0
grep -qx '12 *5 *tick(int i) -> int' "$CT_OUT" || fail "summary: $(cat "$CT_OUT")"
ct_raw calls "$RUN" tick 5
expect_rc 0
grep -qx '  i = 4' "$CT_OUT" && grep -qx '  return = 5' "$CT_OUT" || fail "tick #5: $(cat "$CT_OUT")"
ct_raw calls "$RUN" tick 6
expect_rc 1
grep -q 'only the first 5 were kept' "$CT_ERR" || fail "tick 6: $(cat "$CT_ERR")"
ct_raw calls "$RUN" tick 13
expect_rc 1
ct_raw calls "$RUN" nosuch 1
expect_rc 1
grep -q 'no arguments of nosuch were recorded' "$CT_ERR" || fail "$(cat "$CT_ERR")"
ct_raw calls --json "$RUN" tick 2
expect_rc 0
python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))
assert c["function"] == "tick" and c["call"] == 2, c
assert c["params"] == [{"name": "i", "type": "int", "value": "1"}], c["params"]
assert c["return"]["value"] == "2", c
' "$CT_OUT" || fail "--json: $(cat "$CT_OUT")"

CTX="[export]"
rm -rf "$RUN/calls"
ct_raw export "$RUN"
expect_rc 0
[ -f "$RUN/calls/tick/5/call.json" ] && [ -f "$RUN/calls/show/4/call.json" ] ||
    fail "export did not rebuild the call folders"

CTX="[c++ names, newest run]"
build argcxx O0
mkdir "$T/here" && cd "$T/here" || fail "cd"
timeout 60 "$CALLTRACE" "${CT_ENGINE_OPT[@]}" -q -A -R "$BIN" >/dev/null 2>"$T/err" || fail "$(cat "$T/err")"
ct_raw calls --json
expect_rc 0
python3 -c '
import json, os, re, sys
funcs = json.load(open(sys.argv[1]))
names = {f["name"]: f for f in funcs}
op = names["Vec::operator+(Vec const&) const"]
assert re.fullmatch(r"[A-Za-z0-9_.+~-]{1,100}", op["folder"]), op["folder"]
assert len({f["folder"] for f in funcs}) == len(funcs), "folders not unique"
assert [p["name"] for p in op["params"]] == ["this", "o"], op
for f in funcs:
    assert os.path.isfile(os.path.join("calltrace-out/calls", f["folder"], "1/call.json")), f
' "$CT_OUT" || fail "$(cat "$CT_OUT")"
ct_raw calls "Vec::scaled(int&, int const&&) const" 1
expect_rc 0
grep -qx '  factor = @0x[0-9a-f]*: 3' "$CT_OUT" || fail "$(cat "$CT_OUT")"

CTX="[no DWARF]"
build argfaults O0 -g0
ct_run -Atick -R -- "$BIN"
expect_rc 0
RUN=$CT_DIR
ct_raw calls "$RUN" tick 3
expect_rc 0
grep -qx '  (its argument registers, raw: no DWARF for it, or its file changed)' "$CT_OUT" &&
    grep -qx '  rdi = 0x2' "$CT_OUT" && grep -qx '  return = 0x3' "$CT_OUT" ||
    fail "tick 3 without DWARF: $(cat "$CT_OUT")"
python3 -c '
import json, sys
ticks = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("name") == "tick"]
assert len(ticks) == 12, len(ticks)
for i, e in enumerate(sorted(ticks, key=lambda e: e["ts"])):
    a = e.get("args", {})
    assert a["registers"] == "raw: no DWARF for this function, or its file changed", a
    assert a["rdi"] == hex(i) and a["return"] == hex(i + 1), a
' "$RUN/trace.json" || fail "trace.json without DWARF"

CTX="[program rebuilt since the run]"
build argfaults O0
cp "$BIN" "$T/prog"
ct_run -A -- "$T/prog"
expect_rc 0
RUN=$CT_DIR
ct_raw calls "$RUN" tick 2
grep -qx '  i = 1' "$CT_OUT" || fail "before: $(cat "$CT_OUT")"
build argtypes O0
cp "$BIN" "$T/prog" # other functions at other addresses: its DWARF is not the run's
ct_raw export "$RUN"
expect_rc 0
ct_raw calls "$RUN" tick 2
grep -qx '  (its argument registers, raw: no DWARF for it, or its file changed)' "$CT_OUT" &&
    grep -qx '  rdi = 0x1' "$CT_OUT" || fail "after the program changed: $(cat "$CT_OUT")"

CTX="[no -A]"
cd "$T" || fail "cd"
build args O0
ct_run -- "$BIN" x
expect_rc 0
RUN=$CT_DIR
[ -e "$RUN/calls" ] && fail "a run without -A has a calls folder"
ct_raw calls "$RUN"
expect_rc 1
grep -q 'record with -A' "$CT_ERR" || fail "$(cat "$CT_ERR")"
exit 0
