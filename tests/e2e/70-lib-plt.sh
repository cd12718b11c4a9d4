#!/bin/bash
# -l GLOB: a library linked at start-up is traced whatever the PLT layout of the program and of
# the library (lazy binding, -z now, -fno-plt, IBT's .plt.sec), because the breakpoints sit on
# the callee: counts equal the library's own counters. A glob matches the file name the dynamic
# linker opened (here a symbolic link named after the soname), the file it leads to, the soname,
# or with a '/' the whole path. Without -l only the executable is traced; a -l that matches
# nothing is a warning naming the libraries there were. Then -p: a library already loaded when
# calltrace attaches is traced, and the program runs on correctly after calltrace has left.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

for layout in "lazy:" "now:-Wl,-z,now" "noplt:-fno-plt" "ibt:-fcf-protection=full -Wl,-z,ibtplt"; do
    name=${layout%%:*}
    read -r -a flags <<<"${layout#*:}"
    CTX="[PLT $name]"
    # the library with the same layout: plugin_sum calls plugin_square through it
    build_shared plugin O2 "plt-$name/libplugin-file.so" -Wl,-soname,libplugin.so.1 "${flags[@]}"
    ln -sfn libplugin-file.so "$BUILD_DIR/plt-$name/libplugin.so.1"
    build uselib O2 "${flags[@]}" "$LIB" "-Wl,-rpath,$BUILD_DIR/plt-$name"
    if [ "$name" = ibt ]; then
        readelf -S -W "$BIN" | grep -q '\.plt\.sec' || fail "no .plt.sec in the -z ibtplt build"
    fi
    plain_run "$BIN" 40
    for glob in 'libplugin-file*' 'libplugin.so.1' "*/plt-$name/*"; do
        CTX="[PLT $name, -l '$glob']"
        ct_run -l "$glob" -- "$BIN" 40
        expect_trace
        inject_engaged
        same_rc
        same_stdout
        chk check-nesting
        chk check-counts -f "$CT_OUT"
    done
done

CTX="[without -l]"
ct_run "$BIN" 40
expect_trace
chk check-counts run=40 plugin_sum=0 plugin_square=0

CTX="[-l matching nothing]"
ct_run -l 'libnothing*' -- "$BIN" 40
expect_rc 0
grep -q "^calltrace: warning: -l libnothing\*: matches no library the program loaded (it loaded .*libplugin.so.1.*libc.so.6" "$CT_ERR" ||
    fail "no clear warning: $(cat "$CT_ERR")"
chk check-counts run=40 plugin_sum=0

CTX="[-l, -F matching nothing]"
ct_run -l 'libplugin*' -F 'plugin_nothing*' -F 'plugin_sum' -- "$BIN" 40
expect_rc 0
grep -q "^calltrace: warning: -F plugin_nothing\*: matches no function of the program nor of the libraries -l selected" "$CT_ERR" ||
    fail "no clear warning: $(cat "$CT_ERR")"
[ "$(grep -c warning "$CT_ERR")" = 1 ] || fail "-F plugin_sum matched: $(cat "$CT_ERR")"

CTX="[-l '']"
ct_raw -l '' "$BIN"
one_stderr_line_error "-l ''"

CTX="[-l on a static program]"
build recursion O0 -static
ct_run -l 'libc.so*' -- "$BIN"
expect_trace
grep -q "^calltrace: warning: -l libc.so\*: matches no library the program loaded (it loaded none)" "$CT_ERR" ||
    fail "no clear warning: $(cat "$CT_ERR")"
chk check-counts -f "$CT_OUT"
build uselib O2 "${flags[@]}" "$LIB" "-Wl,-rpath,$BUILD_DIR/plt-$name"

CTX="[-F on a library function]"
ct_run -l 'libplugin*' -F plugin_square -- "$BIN" 40
expect_rc 0
[ -s "$CT_ERR" ] && grep -q warning "$CT_ERR" && fail "unexpected warning: $(cat "$CT_ERR")"
[ "$(query counts | cut -d' ' -f1 | tr '\n' ' ')" = "plugin_square " ] ||
    fail "expected only plugin_square: $(query counts | tr '\n' ' ')"
chk check-counts "plugin_square=$(awk '$2 == "plugin_square" { print $3 }' "$PL_OUT")"

CTX="[-p, library already loaded]"
mkfifo "$T/ctl"
"$BIN" loop <"$T/ctl" >"$T/prog.out" 2>&1 &
PROG=$!
exec 3>"$T/ctl"
wait_until 10 "the program to start" grep -q ready "$T/prog.out"
"$CALLTRACE" "${CT_ENGINE_OPT[@]}" -q -p "$PROG" -l 'libplugin*' -F 'plugin_*' -o "$T/attached" 2>"$T/ct.err" &
ct=$!
wait_until 10 "calls to be recorded" python3 "$TESTS_DIR/lib/record_has_calls.py" "$T/attached/events.ctr"
kill -INT "$ct"
wait "$ct"
rc=$?
[ "$rc" = 0 ] || fail "calltrace exited $rc: $(head -c 500 "$T/ct.err")"
CT_TRACE=$T/attached/trace.json
chk check-nesting
n=$(query counts | awk '$1 == "plugin_square" { print $2 }')
[ "${n:-0}" -gt 0 ] || fail "no call of plugin_square recorded: $(query counts | tr '\n' ' ')"
echo stop >&3
exec 3>&-
wait "$PROG"
rc=$?
[ "$rc" = 0 ] || fail "the program exited $rc after being traced: $(cat "$T/prog.out")"
grep -qx 'rounds>0 1 bad 0' "$T/prog.out" || fail "the program's own checks: $(cat "$T/prog.out")"
