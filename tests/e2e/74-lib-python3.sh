#!/bin/bash
# Debian's /usr/bin/python3 (explicitly: a pyenv python3 may come first on PATH), whose
# executable exports its C API, against two independent counts:
#   - gdb: a breakpoint at the entry of each of six exported API functions, with an ignore count,
#     counts every call, internal ones included, like calltrace (no -l: they are the program's);
#   - the LD_PRELOAD shim (tests/progs/count_shim.c) for libc functions python calls through its
#     PLT, traced with -l 'libc.so*'. libc itself does not call getppid or umask (the shim would
#     miss such calls: the comparison would then fail, never pass wrongly).
# The runs must see the same environment: python's start-up differs with the kind of file its
# stdout is (a file here, for all of them), and PYTHONHASHSEED is fixed.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

PY=/usr/bin/python3
[ -x $PY ] || fail "$PY missing: run scripts/install-deps.sh --test"
command -v gdb >/dev/null || fail "gdb missing: run scripts/install-deps.sh --test (package gdb)"
export PYTHONHASHSEED=0
cat >"$T/work.py" <<'PY'
import os
s = 0
for i in range(300):
    s += len(repr(i)) + len(str(i * 7)) + len(getattr(str, "upper")("ab"))
    if i % 3 == 0:
        os.getppid()
    if i % 5 == 0:
        os.umask(0o22)
d = {}
for i in range(200):
    d[str(i)] = i
print(s, len(d))
PY

API=(PyLong_FromLong PyObject_Str PyObject_Repr PyUnicode_FromString PyObject_GetAttr PyDict_SetItem)
CTX="[python3, gdb]"
gdb_args=(-batch -nx -ex 'set startup-with-shell off' -ex 'unset environment LINES'
    -ex 'unset environment COLUMNS')
for i in "${!API[@]}"; do
    gdb_args+=(-ex "break *${API[i]}" -ex "ignore $((i + 1)) 100000000")
done
gdb "${gdb_args[@]}" -ex run -ex 'info breakpoints' --args $PY -S "$T/work.py" \
    </dev/null >"$T/gdb.out" 2>&1 || fail "gdb failed: $(tail -5 "$T/gdb.out")"
# "N breakpoint keep y ADDR <NAME>" then, if it was hit, "breakpoint already hit K times"
awk '$2 == "breakpoint" && $6 ~ /^</ { name = substr($6, 2, length($6) - 2); n[name] = 0; order[++k] = name }
     /already hit/ { n[name] = $4 }
     END { for (i = 1; i <= k; i++) print "count", order[i], n[order[i]] }' "$T/gdb.out" >"$T/gdb.counts"
[ "$(grep -c '^count' "$T/gdb.counts")" = ${#API[@]} ] ||
    fail "cannot read gdb's counts: $(cat "$T/gdb.out" | tail -20)"
awk '$3 > 0 { n++ } END { exit n >= 5 ? 0 : 1 }' "$T/gdb.counts" ||
    fail "too few of the functions were called: $(cat "$T/gdb.counts")"

CTX="[python3, calltrace, API of the executable]"
filters=()
for f in "${API[@]}"; do filters+=(-F "$f"); done
plain_run $PY -S "$T/work.py"
ct_run "${filters[@]}" -- $PY -S "$T/work.py"
expect_trace
same_rc
same_stdout
chk check-nesting
chk check-counts -f "$T/gdb.counts"
note "gdb and calltrace: $(grep '^count' "$T/gdb.counts" | cut -d' ' -f2- | tr '\n' ' ')"

CTX="[python3, -l 'libc.so*', shim]"
build_shared count_shim O2 shim/count_shim.so -ldl
ct_run -l 'libc.so*' -F getppid -F umask -F getuid -- \
    env LD_PRELOAD="$LIB" CT_SHIM_OUT="$T/shim.counts" $PY -S "$T/work.py"
expect_trace
inject_engaged
same_rc
same_stdout
grep -qx 'count getppid 100' "$T/shim.counts" || fail "the shim's counts: $(cat "$T/shim.counts")"
chk check-counts -f "$T/shim.counts"
ct_raw report -f csv "$CT_DIR"
grep -q '^"umask",".*libc.so.6",60,' "$CT_OUT" || fail "umask not reported in libc: $(cat "$CT_OUT")"
