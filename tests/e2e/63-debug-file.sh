#!/bin/bash
# A stripped program with its symbols and DWARF in a separate debug file (objcopy
# --only-keep-debug, as distributions ship them): found through .gnu_debuglink (beside the
# program, in .debug/) and through its build ID under /usr/lib/debug; the functions and
# argument values are those of the unstripped program. A debug file of another build (another
# build ID, or another CRC without one) is not used. A program stripped of DWARF only keeps its
# symbols and gets its types from the file.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

build argtypes O0

# calls_summary: `calltrace calls` of the last run, the functions with their counts and types.
calls_summary() {
    ct_raw calls "$1"
    expect_rc 0
    cp "$CT_OUT" "$2"
}

CTX="[unstripped]"
ct_run -A -R -- "$BIN"
expect_rc 0
calls_summary "$CT_DIR" "$T/want"
[ "$(wc -l <"$T/want")" -ge 3 ] || fail "too few functions with arguments: $(cat "$T/want")"

D=$T/stripped
mkdir -p "$D/.debug" || fail "mkdir"
cp "$BIN" "$D/prog" || fail "cp"
objcopy --only-keep-debug "$D/prog" "$D/prog.debug" || fail "objcopy --only-keep-debug"
strip --strip-all "$D/prog" || fail "strip"
objcopy --add-gnu-debuglink="$D/prog.debug" "$D/prog" || fail "objcopy --add-gnu-debuglink"
readelf -S "$D/prog" | grep -q '\.symtab' && fail "strip left a .symtab"

# traced_like_unstripped: the stripped program gives the unstripped one's functions and values.
traced_like_unstripped() {
    ct_run -A -R -- "$D/prog"
    expect_rc 0
    calls_summary "$CT_DIR" "$T/got"
    diff -u "$T/want" "$T/got" >"$T/diff" || fail "calls differ from the unstripped run: $(cat "$T/diff")"
}

CTX="[debuglink beside it]"
traced_like_unstripped

CTX="[debuglink in .debug/]"
mv "$D/prog.debug" "$D/.debug/prog.debug" || fail "mv"
traced_like_unstripped

# A debug file is checked against the program: by build ID (libdwfl's rule), by its CRC when
# the program has no build ID. One that does not match is ignored, and the stripped program is
# traced from its unwind table, its functions unnamed (func_0xADDRESS).
CTX="[debug file of another build]"
cp "$D/.debug/prog.debug" "$T/good.debug" || fail "cp"
build argtypes O1
objcopy --only-keep-debug "$BIN" "$D/.debug/prog.debug" || fail "objcopy --only-keep-debug"
ct_run -v -- "$D/prog"
expect_rc 0
grep -q "prog: no debug file (by build ID and .gnu_debuglink in" "$CT_ERR" ||
    fail "-v does not say that no debug file was found: $(grep symbols "$CT_ERR")"
ct_raw report -f csv "$CT_DIR"
grep -q '^"func_0x[0-9a-f]*",' "$CT_OUT" || fail "not traced from its unwind table: $(cat "$CT_OUT")"
grep -q '^"main",' "$CT_OUT" && fail "names from the other build's debug file: $(cat "$CT_OUT")"

CTX="[no build ID, debug file with another CRC]"
build argtypes O0 -Wl,--build-id=none
cp "$BIN" "$D/prog" && strip --strip-all "$D/prog" || fail "strip"
objcopy --only-keep-debug "$BIN" "$D/.debug/prog.debug" || fail "objcopy --only-keep-debug"
objcopy --add-gnu-debuglink="$D/.debug/prog.debug" "$D/prog" || fail "objcopy --add-gnu-debuglink"
traced_like_unstripped
printf 'x' >>"$D/.debug/prog.debug"
ct_run -v -- "$D/prog"
expect_rc 0
grep -q "prog: no debug file" "$CT_ERR" || fail "a debug file with another CRC was used: $(grep symbols "$CT_ERR")"
ct_raw report -f csv "$CT_DIR"
grep -q '^"main",' "$CT_OUT" && fail "names from a debug file with another CRC: $(cat "$CT_OUT")"

CTX="[symbols kept, DWARF in the debug file]"
build argtypes O0
cp "$T/good.debug" "$D/.debug/prog.debug" || fail "cp"
cp "$BIN" "$D/prog" && strip --strip-debug "$D/prog" || fail "strip --strip-debug"
objcopy --add-gnu-debuglink="$D/.debug/prog.debug" "$D/prog" || fail "objcopy --add-gnu-debuglink"
traced_like_unstripped

CTX="[build ID]"
id=$(readelf -n "$BIN" | awk '/Build ID:/ {print $3}')
[ -n "$id" ] || fail "the test program has no build ID"
if [ "$(id -u)" = 0 ]; then
    cp "$BIN" "$D/prog" && strip --strip-all "$D/prog" || fail "strip"
    rm -f "$D/.debug/prog.debug"
    dir=/usr/lib/debug/.build-id/${id:0:2}
    file=$dir/${id:2}.debug
    [ -e "$file" ] && fail "$file exists already: not ours to replace"
    mkdir -p "$dir" && cp "$T/good.debug" "$file" || fail "cannot install $file"
    ct_run -A -R -- "$D/prog"
    rc=$CT_RC
    cp -r "$CT_DIR" "$T/buildid-run"
    rm -f "$file"
    rmdir "$dir" 2>/dev/null
    CT_RC=$rc
    expect_rc 0
    calls_summary "$T/buildid-run" "$T/got"
    diff -u "$T/want" "$T/got" >"$T/diff" || fail "calls differ: $(cat "$T/diff")"
else
    note "not root: /usr/lib/debug is not ours to write, build-ID lookup not checked"
fi
echo "ok"
