#!/bin/bash
# -l GLOB and dlopen/dlclose: a program loads library A, calls into it, unloads it, loads B
# (built from the same source: the same function names, often mapped where A was), unloads it,
# and loads A again. Every call is counted, per library file, exactly as the libraries' own
# counters saw them (calltrace report's image column); after each dlclose calltrace forgets the
# library's breakpoints without writing into memory that is no longer the library's, so the
# program's results are unchanged. A forked child inherits the traced libraries; an exec'd
# program starts afresh and has its own libraries traced.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

build_shared plugin O2 dl/libplugin-a.so
LIB_A=$LIB
build_shared plugin O2 dl/libplugin-b.so -DVARIANT=3
LIB_B=$LIB

# per_lib CSV OUT: "lib NAME FUNCTION N" lines of the program equal the report's rows
per_lib() {
    python3 - "$1" "$2" <<'PY' || fail "per-library counts differ (see above)"
import csv, os, sys
got = {}
for r in csv.DictReader(open(sys.argv[1])):
    key = (os.path.basename(r["image"]), r["function"])
    got[key] = got.get(key, 0) + int(r["calls"])
bad = 0
want = {}
for line in open(sys.argv[2]):
    p = line.split()
    if p[0] == "lib":
        want[(p[1], p[2])] = want.get((p[1], p[2]), 0) + int(p[3])
if not want:
    print("the program printed no per-library counts"); bad = 1
for key, n in want.items():
    if got.get(key, 0) != n:
        print("%s in %s: report says %d calls, the library counted %d" % (key[1], key[0], got.get(key, 0), n)); bad = 1
for key, n in got.items():
    if key[0].startswith("libplugin") and key not in want and key[1] != "plugin_calls":
        print("unexpected %s in %s: %d calls" % (key[1], key[0], n)); bad = 1
sys.exit(bad)
PY
}

for opt in O0 O2; do
    for flags in "" "-Wl,-z,now -fno-plt"; do
        CTX="[dlopen -$opt $flags]"
        read -r -a f <<<"$flags"
        build dlopen "$opt" "${f[@]}" -ldl
        plain_run "$BIN" "$LIB_A" "$LIB_B" 30
        grep -qx "unloaded libplugin-a.so yes" "$PL_OUT" || fail "dlclose did not unload A: $(cat "$PL_OUT")"
        ct_run -l 'libplugin-*' -- "$BIN" "$LIB_A" "$LIB_B" 30
        expect_trace
        inject_engaged
        same_rc
        same_stdout
        chk check-nesting
        run=$CT_DIR
        ct_raw report -f csv "$run"
        expect_rc 0
        per_lib "$CT_OUT" "$PL_OUT"
        # two loads of A, one of B: three images of the libraries in the record
        n=$(python3 - "$run/trace.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
print(sum(1 for e in ev if e.get("ph") == "X" and e.get("name") == "plugin_sum"))
PY
        )
        [ "$n" = "$(awk '$3 == "plugin_sum" { s += $4 } END { print s }' "$PL_OUT")" ] ||
            fail "trace.json has $n calls of plugin_sum"
    done
done

CTX="[dlopen, -l only B]"
ct_run -l 'libplugin-b*' -- "$BIN" "$LIB_A" "$LIB_B" 30
expect_trace
inject_engaged
ct_raw report -f csv "$CT_DIR"
grep -q 'libplugin-a' "$CT_OUT" && fail "A was traced: $(cat "$CT_OUT")"
grep -q '"plugin_square",".*libplugin-b.so",' "$CT_OUT" || fail "B was not traced: $(cat "$CT_OUT")"

# fork: the child inherits the library's breakpoints, and its calls are counted; exec: the new
# image's libraries are found afresh (the program execs itself)
CTX="[dlopen, fork and exec]"
plain_run "$BIN" "$LIB_A" "$LIB_B" 30 fork
[ "$(grep -c '^lib libplugin-a.so plugin_sum' "$PL_OUT")" = 3 ] || fail "no child's line: $(cat "$PL_OUT")"
ct_run -l 'libplugin-*' -- "$BIN" "$LIB_A" "$LIB_B" 30 fork
expect_trace
inject_engaged
same_rc
same_stdout
chk check-nesting
[ "$(query processes | wc -l)" = 2 ] || fail "expected 2 processes: $(query processes)"
ct_raw report -f csv "$CT_DIR"
per_lib "$CT_OUT" "$PL_OUT"
