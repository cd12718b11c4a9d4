#!/bin/bash
# record --callsites: where each call of tests/progs/callsites.c was made from, the lines of its
# calls found in the source with grep (leaf() 3 times from SITE_A, 5 times from SITE_B, twice()
# once from SITE_MAIN; cmp() from qsort, code of no traced image: no line), in tree, report
# --callers (table and json), calls FUNC N (text and json) and the "called_from" argument of
# export --srcline (both formats); many calls (the inject engine's common drain loop packs them),
# counted by report --callers; the same with --min-duration (the call gate, which writes entries
# whole); and a run without --callsites: a record without call sites, outputs without them.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

build callsites O0
src=$PROGS_DIR/callsites.c
line_of() { grep -n -- "$1" "$src" | cut -d: -f1; }
A=$(line_of '/\* SITE_A \*/') B=$(line_of '/\* SITE_B \*/') MAIN=$(line_of '/\* SITE_MAIN \*/')
LEAF=$(line_of '^TRACED int leaf(') TWICE=$(line_of '^TRACED int twice(')
for n in "$A" "$B" "$MAIN" "$LEAF" "$TWICE"; do
    [[ $n =~ ^[0-9]+$ ]] || fail "cannot find the marked lines in $src: '$A' '$B' '$MAIN' '$LEAF' '$TWICE'"
done
at() { printf '%s' "[^ ]*tests/progs/callsites\\.c:$1"; }

# record_sites RUN: "SITES N" (REC_CALLSITES records, src/record/format.h), "ADDRESSES N" (the
# addresses they hold), "ENTER SIZE N" per size of the entries written whole.
record_sites() {
    python3 - "$1/events.ctr" <<'PY'
import struct, sys
from collections import Counter
data = open(sys.argv[1], "rb").read()
pos, sites, addresses, enter = 64, 0, 0, Counter()
while pos + 8 <= len(data):
    rtype, _flags, size = struct.unpack_from("<BBH", data, pos)
    if size < 8 or size % 8 or pos + size > len(data):
        sys.exit(f"damaged record at {pos}")
    if rtype == 13:  # REC_CALLSITES: hdr, pid, count
        sites += 1
        addresses += struct.unpack_from("<I", data, pos + 12)[0]
    if rtype == 4:  # REC_ENTER
        enter[size] += 1
    pos += size
print("SITES", sites)
print("ADDRESSES", addresses)
for size, n in sorted(enter.items()):
    print("ENTER", size, n)
PY
}

# check_tree RUN: every call with its line, the calls of cmp() without one.
check_tree() {
    ct_raw tree --srcline "$1"
    expect_rc 0
    local n
    n=$(grep -cE "leaf\\(\\); /\\* $(at "$LEAF"), called from $(at "$A") \\*/\$" "$CT_OUT")
    [ "$n" = 3 ] || fail "$n leaf() calls from line $A, 3 expected: $(cat "$CT_OUT")"
    n=$(grep -cE "leaf\\(\\); /\\* $(at "$LEAF"), called from $(at "$B") \\*/\$" "$CT_OUT")
    [ "$n" = 5 ] || fail "$n leaf() calls from line $B, 5 expected: $(cat "$CT_OUT")"
    grep -qE "^ +twice\\(\\) \\{ /\\* $(at "$TWICE"), called from $(at "$MAIN") \\*/\$" "$CT_OUT" ||
        fail "twice() from line $MAIN: $(grep twice "$CT_OUT")"
    if [ "${2:-}" != no-cmp ]; then
        grep -q 'cmp();' "$CT_OUT" || fail "no cmp() calls: $(cat "$CT_OUT")"
        grep 'cmp();' "$CT_OUT" | grep -q 'called from' && fail "cmp() has a line: $(grep cmp "$CT_OUT")"
    fi
    grep -qE 'main\(\) \{ /\* [^ ]*callsites\.c:[0-9]+ \*/$' "$CT_OUT" ||
        fail "main(), called from the C library, has a line: $(grep main "$CT_OUT")"
}

CTX="[record --callsites]"
ct_run --callsites -- "$BIN"
expect_rc 0
inject_engaged
grep -q '^count leaf 8$' "$CT_OUT" || fail "leaf: $(cat "$CT_OUT")"
run=$CT_DIR
ncmp=$(sed -n 's/^count cmp //p' "$CT_OUT")
calls=$((ncmp + 10)) # main, twice, 8 leaf
record_sites "$run" >"$T/sites" || fail "record: $(cat "$T/sites")"
grep -qE '^SITES [1-9]' "$T/sites" || fail "no REC_CALLSITES record: $(cat "$T/sites")"
grep -qx "ADDRESSES $calls" "$T/sites" || fail "$calls calls, addresses: $(cat "$T/sites")"

CTX="[tree --srcline]"
check_tree "$run"
ct_raw tree "$run"
grep -q 'called from' "$CT_OUT" && fail "tree without --srcline shows call sites"

CTX="[report --callers]"
ct_raw report --callers "$run"
expect_rc 0
# leaf's line, then its sites: the most calls first, their calls in the calls column
grep -A3 ' leaf$' "$CT_OUT" >"$T/leaf"
sed -n 2p "$T/leaf" | grep -qE "^ +5 +called from $(at "$B")\$" &&
    sed -n 3p "$T/leaf" | grep -qE "^ +3 +called from $(at "$A")\$" ||
    fail "leaf's call sites: $(cat "$CT_OUT")"
grep -A1 ' twice$' "$CT_OUT" | grep -qE "^ +1 +called from $(at "$MAIN")\$" ||
    fail "twice's call site: $(cat "$CT_OUT")"
grep -A1 ' cmp$' "$CT_OUT" | grep -qE "^ +$ncmp +called from code of no line" ||
    fail "cmp's call site: $(cat "$CT_OUT")"
ct_raw report --callers -f json "$run"
expect_rc 0
python3 - "$CT_OUT" "$A" "$B" <<'PY' || fail "json: $(cat "$CT_OUT")"
import json, sys
f = {x["name"]: x for x in json.load(open(sys.argv[1]))["functions"]}
got = [(c["file"].endswith("tests/progs/callsites.c"), c["line"], c["calls"]) for c in f["leaf"]["callers"]]
assert got == [(True, int(sys.argv[3]), 5), (True, int(sys.argv[2]), 3)], got
assert [set(c) for c in f["cmp"]["callers"]] == [{"calls"}], f["cmp"]
PY
ct_raw report -f json "$run"
grep -q '"callers"' "$CT_OUT" && fail "report without --callers lists call sites"
ct_raw report --callers -f csv "$run"
expect_rc 2 "--callers with csv"

CTX="[export --srcline]"
ct_raw export -q --srcline --format both "$run"
expect_rc 0
python3 - "$run" "$A" "$B" "$MAIN" "$TESTS_DIR/lib" <<'PY' || fail "trace called_from args (see above)"
import json, sys
from collections import Counter
sys.path.insert(0, sys.argv[5])
import pftrace
run, a, b, main = sys.argv[1], *sys.argv[2:5]
def site(args):
    s = args.get("called_from")
    return s and s.split("tests/progs/")[-1]
want = Counter({("leaf", f"callsites.c:{a}"): 3, ("leaf", f"callsites.c:{b}"): 5,
                ("twice", f"callsites.c:{main}"): 1})
js = [(e["name"], e.get("args", {})) for e in json.load(open(run + "/trace.json"))["traceEvents"]
      if e.get("ph") == "X"]
pf = [(c.name, c.args) for c in pftrace.read_trace(run + "/trace.pftrace").calls]
bad = 0
for what, calls in (("trace.json", js), ("trace.pftrace", pf)):
    got = Counter((n, site(args)) for n, args in calls if site(args))
    if got != want:
        print(f"{what}: called_from {dict(got)}, expected {dict(want)}"); bad = 1
    if not all(args.get("src") for n, args in calls if n in ("leaf", "twice")):
        print(f"{what}: a call lost its src"); bad = 1
sys.exit(bad)
PY
ct_raw export -q --format both "$run"
expect_rc 0
grep -q 'called_from' "$run/trace.json" && fail "export without --srcline wrote called_from"

# Many calls: the inject engine drains most of them in its common loop while the program runs
# (a few do not make a ring's worth); the ptrace engine is slower, and has no such loop.
CTX="[many calls]"
rounds=20000
[ "$CT_ENGINE" = ptrace ] && rounds=1000
ct_run --callsites -- "$BIN" "$rounds"
expect_rc 0
record_sites "$CT_DIR" >"$T/sites.many" || fail "record: $(cat "$T/sites.many")"
grep -qx "ADDRESSES $((rounds * 9 + 1 + ncmp))" "$T/sites.many" ||
    fail "$((rounds * 9 + 1 + ncmp)) calls, addresses: $(cat "$T/sites.many")"
ct_raw report --callers -f json "$CT_DIR"
expect_rc 0
python3 - "$CT_OUT" "$A" "$B" "$MAIN" "$rounds" <<'PY' || fail "report --callers (see above)"
import json, sys
a, b, main, rounds = map(int, sys.argv[2:])
f = {x["name"]: x for x in json.load(open(sys.argv[1]))["functions"]}
def sites(name):
    return [(c.get("line"), c["calls"]) for c in f[name]["callers"]]
bad = 0
for name, want in (("leaf", [(b, 5 * rounds), (a, 3 * rounds)]), ("twice", [(main, rounds)])):
    if sites(name) != want or "more_call_sites" in f[name]:
        print(f"{name}: {f[name].get('callers')}, expected {want}"); bad = 1
sys.exit(bad)
PY

CTX="[calls --srcline]"
ct_run --callsites -Aleaf -- "$BIN"
expect_rc 0
argrun=$CT_DIR
ct_raw calls --srcline "$argrun" leaf 2
expect_rc 0
grep -qE "^  called from $(at "$A")\$" "$CT_OUT" || fail "leaf #2: $(cat "$CT_OUT")"
ct_raw calls --srcline --json "$argrun" leaf 7
expect_rc 0
python3 - "$CT_OUT" "$B" <<'PY' || fail "leaf #7 json: $(cat "$CT_OUT")"
import json, sys
c = json.load(open(sys.argv[1]))["called_from"]
assert c["line"] == int(sys.argv[2]) and c["file"].endswith("tests/progs/callsites.c"), c
PY
ct_raw calls "$argrun" leaf 2
grep -q 'called from' "$CT_OUT" && fail "calls without --srcline shows the call site"

# --min-duration: the call gate holds each entry until its exit, then writes it whole, its
# address in it
CTX="[record --callsites --min-duration 1ns]"
ct_run --callsites --min-duration 1ns -- "$BIN"
expect_rc 0
record_sites "$CT_DIR" >"$T/sites.gate" || fail "record: $(cat "$T/sites.gate")"
grep -qE '^ENTER 32 [1-9]' "$T/sites.gate" || fail "no entry with its address: $(cat "$T/sites.gate")"
check_tree "$CT_DIR"

# Without --callsites the record is what it was: no call sites, entries of 24 bytes, and the
# outputs say nothing of call sites.
CTX="[without --callsites]"
ct_run --min-duration 1ns -- "$BIN"
expect_rc 0
record_sites "$CT_DIR" >"$T/sites.none" || fail "record: $(cat "$T/sites.none")"
grep -qx 'SITES 0' "$T/sites.none" && ! grep -qE '^ENTER (2[5-9]|[3-9][0-9])' "$T/sites.none" ||
    fail "call sites in the record: $(cat "$T/sites.none")"
ct_run -- "$BIN"
expect_rc 0
plain=$CT_DIR
record_sites "$plain" >"$T/sites.none" || fail "record: $(cat "$T/sites.none")"
grep -qx 'SITES 0' "$T/sites.none" || fail "call sites in the record: $(cat "$T/sites.none")"
ct_raw tree --srcline "$plain"
expect_rc 0
grep -q 'called from' "$CT_OUT" && fail "tree shows call sites: $(cat "$CT_OUT")"
[ "$(grep -cE "leaf\\(\\); /\\* $(at "$LEAF") \\*/\$" "$CT_OUT")" = 8 ] ||
    fail "tree --srcline changed: $(cat "$CT_OUT")"
ct_raw report --callers "$plain"
expect_rc 0
grep -q 'called from' "$CT_OUT" && fail "report --callers shows call sites: $(cat "$CT_OUT")"
grep -q 'no call sites in this run' "$CT_ERR" || fail "report --callers says nothing: $(cat "$CT_ERR")"
ct_raw export -q --srcline --format both "$plain"
expect_rc 0
grep -q 'called_from' "$plain/trace.json" && fail "export --srcline wrote called_from"
exit 0
