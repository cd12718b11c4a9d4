#!/bin/bash
# --srcline: where each function of tests/progs/naps.c is defined, the line of its definition
# found in the source with grep, in report (table, csv, json), tree, calls (text and json) and
# the "src" argument of every call in the trace written by export --srcline (both formats);
# a function without debug information (a binary without -g) has no line, and the rest of the
# output is unchanged.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

build naps O0
src=$PROGS_DIR/naps.c
line_of() { grep -n "$1" "$src" | cut -d: -f1; }
declare -A want=(
    [main]=$(line_of '^int main(')
    [run]=$(line_of '^TRACED void run(')
    [step]=$(line_of '^TRACED void step(')
    [nap]=$(line_of '^TRACED void nap(')
    [tick]=$(line_of '^TRACED void tick(')
)
for f in "${!want[@]}"; do
    [[ ${want[$f]} =~ ^[0-9]+$ ]] || fail "cannot find $f's line in $src: '${want[$f]}'"
done
ct_run -Anap -- "$BIN" 2 100
expect_rc 0
run=$CT_DIR

CTX="[report --srcline]"
ct_raw report --srcline -f csv "$run"
expect_rc 0
for f in "${!want[@]}"; do
    grep -qE "^\"$f\",.*,\"[^\"]*tests/progs/naps\\.c\",${want[$f]}\$" "$CT_OUT" ||
        fail "$f: expected naps.c:${want[$f]}: $(grep "^\"$f\"" "$CT_OUT")"
done
ct_raw report --srcline "$run"
expect_rc 0
grep -qE "  nap at .*/naps\\.c:${want[nap]}\$" "$CT_OUT" || fail "table: $(cat "$CT_OUT")"
ct_raw report --srcline -f json "$run"
python3 - "$CT_OUT" "${want[tick]}" <<'PY' || fail "json: $(head -c 1000 "$CT_OUT")"
import json, sys
f = {x["name"]: x for x in json.load(open(sys.argv[1]))["functions"]}
assert f["tick"]["line"] == int(sys.argv[2]) and f["tick"]["file"].endswith("tests/progs/naps.c"), f["tick"]
PY
ct_raw report -f csv "$run"
head -n 1 "$CT_OUT" | grep -q ',file,line' && fail "csv without --srcline has file and line"

CTX="[tree --srcline]"
ct_raw tree --srcline "$run"
expect_rc 0
grep -qE "^ +main\\(\\) \\{ /\\* .*/naps\\.c:${want[main]} \\*/\$" "$CT_OUT" || fail "main: $(head -n 5 "$CT_OUT")"
grep -qE "^ +[0-9.]+ [mu]?s +nap\\(us=100\\); /\\* .*/naps\\.c:${want[nap]} \\*/\$" "$CT_OUT" ||
    fail "nap: $(grep nap "$CT_OUT")"
n=$(grep -cE "tick\\(\\); /\\* .*/naps\\.c:${want[tick]} \\*/\$" "$CT_OUT")
[ "$n" = 4 ] || fail "$n tick lines with their line, 4 calls: $(grep tick "$CT_OUT")"
grep -qE '^ +[0-9.]+ [mu]?s +} /\* step \*/$' "$CT_OUT" || fail "closing lines changed: $(cat "$CT_OUT")"

CTX="[calls --srcline]"
ct_raw calls --srcline "$run"
expect_rc 0
grep -qE "nap\\(long unsigned int us\\) -> void  at .*/naps\\.c:${want[nap]}\$" "$CT_OUT" || fail "$(cat "$CT_OUT")"
ct_raw calls --srcline "$run" nap 2
expect_rc 0
grep -qE "^  defined at .*/naps\\.c:${want[nap]}\$" "$CT_OUT" || fail "call 2: $(cat "$CT_OUT")"
ct_raw calls --json --srcline "$run"
python3 - "$CT_OUT" "${want[nap]}" <<'PY' || fail "calls json: $(cat "$CT_OUT")"
import json, sys
f = json.load(open(sys.argv[1]))
assert f[0]["name"] == "nap" and f[0]["line"] == int(sys.argv[2]), f
PY

CTX="[export --srcline]"
ct_raw export -q --srcline --format both "$run"
expect_rc 0
python3 - "$run" "${want[nap]}" "${want[tick]}" "$TESTS_DIR/lib" <<'PY' || fail "trace src args (see above)"
import json, sys
sys.path.insert(0, sys.argv[4])
import pftrace
run, nap, tick = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
want = {"nap": nap, "tick": tick}
calls = [(e["name"], e.get("args", {})) for e in json.load(open(run + "/trace.json"))["traceEvents"]
         if e.get("ph") == "X"]
pf = [(c.name, c.args) for c in pftrace.read_trace(run + "/trace.pftrace").calls]
bad = 0
for what, got in (("trace.json", calls), ("trace.pftrace", pf)):
    for name, args in got:
        src = args.get("src", "")
        if name in want and not (src.endswith(f"/tests/progs/naps.c:{want[name]}")):
            print(f"{what}: {name}: src {src!r}, expected naps.c:{want[name]}"); bad = 1
        if name == "nap" and args.get("us") != "100":
            print(f"{what}: nap lost its argument: {args}"); bad = 1
    if sorted(n for n, _ in got) != sorted(n for n, _ in calls):
        print(f"{what}: other calls than trace.json's"); bad = 1
sys.exit(bad)
PY
ct_raw export -q "$run"
expect_rc 0
grep -q '"src"' "$run/trace.json" && fail "export without --srcline wrote src arguments"

CTX="[no debug information]"
mkdir -p "$T/nodebug"
${CC:-gcc} -O0 -pthread -o "$T/nodebug/naps" "$src" || fail "cannot build naps without -g"
ct_run "$T/nodebug/naps" 1 100
expect_rc 0
ct_raw report --srcline -f csv "$CT_DIR"
expect_rc 0
grep -qE '^"nap",.*,,$' "$CT_OUT" || fail "a line without DWARF: $(cat "$CT_OUT")"
ct_raw report --srcline "$CT_DIR"
grep -q ' at ' "$CT_OUT" && fail "a line without DWARF: $(cat "$CT_OUT")"
exit 0
