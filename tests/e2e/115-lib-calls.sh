#!/bin/bash
# -L: the calls the program makes into its shared libraries, whatever its PLT layout (lazy
# binding, -z now, -fno-plt's GOT calls, IBT's .plt.sec), without the libraries' calls among
# themselves (strdup's malloc, printf's), with callbacks nested under the library call, and tail
# calls from the program counted as its calls. Three independent answers: the program's own
# counts (tests/progs/libcalls.c), an LD_PRELOAD shim that counts the calls whose return address
# is in the executable (tests/progs/libcall_shim.c), and ltrace (on the lazy build, the only
# layout Debian's ltrace 0.7.3 sees). Then -L GLOB, a static program, and the option's errors.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

build_shared libcall_shim O2 shim/libcall_shim.so -ldl
SHIM=$LIB
SHIMMED=(calloc strdup getpid qsort malloc free)

# count_of NAME: the calls of NAME in the trace (0 when none)
count_of() { query counts | awk -v n="$1" '$1 == n { print $2; f = 1 } END { if (!f) print 0 }'; }

for layout in "lazy:-Wl,-z,lazy" "now:-Wl,-z,now" "noplt:-fno-plt" "ibt:-fcf-protection=full -Wl,-z,ibtplt"; do
    name=${layout%%:*}
    read -r -a flags <<<"${layout#*:}"
    CTX="[-L, $name]"
    build libcalls O2 "${flags[@]}"
    if [ "$name" = ibt ]; then
        readelf -S -W "$BIN" | grep -q '\.plt\.sec' || fail "no .plt.sec in the -z ibtplt build"
    fi
    plain_run env LD_PRELOAD="$SHIM" CT_SHIM_OUT="$T/shim-$name" "$BIN" 40
    grep -q "count free 280" "$T/shim-$name" || fail "the shim counted: $(cat "$T/shim-$name")"
    ct_run -L -- "$BIN" 40
    expect_trace
    expect_rc 0
    inject_engaged
    same_stdout
    chk check-nesting
    # the program's own counts (its functions, and what it called)
    chk check-counts -f "$CT_OUT"
    # the shim's
    chk check-counts -f "$T/shim-$name"
    chk check-parent by_name qsort
    chk check-parent strcmp by_name
    for f in strdup calloc getpid qsort malloc; do chk check-parent "$f" round_of; done
    chk check-parent free release round_of
    # never the program's: libc's own (strdup's malloc), nor the dynamic linker's
    for f in __libc_start_main _dl_start strlen memcpy cfree __getpid __strdup; do
        [ "$(count_of "$f")" = 0 ] || fail "$f in the trace: $(query counts | tr '\n' ' ')"
    done
    if [ "$name" = lazy ]; then
        CTX="[-L against ltrace]"
        ltrace -o "$T/ltrace.out" -e "$(IFS=+; echo "${SHIMMED[*]}")+strcmp" "$BIN" 40 >/dev/null ||
            fail "ltrace failed: $(tail -3 "$T/ltrace.out")"
        for f in "${SHIMMED[@]}" strcmp; do
            want=$(grep -c -- "->$f(" "$T/ltrace.out")
            [ "$want" -gt 0 ] || fail "ltrace saw no call of $f: $(head -5 "$T/ltrace.out")"
            [ "$(count_of "$f")" = "$want" ] ||
                fail "$f: $(count_of "$f") calls in the trace, $want in ltrace's"
        done
    fi
done

CTX="[-L -A -R, typed by the library's DWARF]"
# plugin_sum is the library's function the program calls; plugin_square only the library calls
build_shared plugin O1 "libcalls-plugin/libplugin.so" -Wl,-soname,libplugin.so
build uselib O2 "$LIB" "-Wl,-rpath,$BUILD_DIR/libcalls-plugin"
ct_run -L -A -R -- "$BIN" 3
expect_trace
chk check-counts -f "$CT_OUT" plugin_square=0
"$CALLTRACE" tree "$CT_DIR" >"$T/tree.out" 2>"$T/tree.err" || fail "tree: $(cat "$T/tree.err")"
grep -q "^ *[0-9.]* [mun]*s *plugin_sum(n=2) = 1;$" "$T/tree.out" ||
    fail "plugin_sum's typed call is not in the tree: $(head -20 "$T/tree.out")"
# libc's own functions typed by its debug file, where Debian's libc6-dbg is installed
if dpkg -s libc6-dbg >/dev/null 2>&1; then
    grep -q 'strtol(nptr=0x[0-9a-f]* "3", endptr=0x0, base=10) = 3;' "$T/tree.out" ||
        fail "strtol's arguments are not typed by libc6-dbg: $(head -20 "$T/tree.out")"
fi
build libcalls O2 -Wl,-z,now

CTX="[-L GLOB]"
ct_run -L'str*' -L=malloc -- "$BIN" 40
expect_trace
chk check-counts strdup=200 strcmp="$(awk '$2 == "strcmp" { print $3 }' "$CT_OUT")" malloc=40 \
    calloc=0 free=0 getpid=0 qsort=0 round_of=40
CTX="[--lib-calls=GLOB, -F]"
ct_run --lib-calls=getpid -F 'getpid' -F 'round_of' -- "$BIN" 40
expect_trace
[ "$(query counts | tr '\n' ' ')" = "getpid 40 round_of 40 " ] ||
    fail "expected getpid and round_of: $(query counts | tr '\n' ' ')"

CTX="[-F by an alias, -l]"
# glibc's getpid is also __getpid, strdup __strdup: shown by their public names, selected by any
ct_run -l 'libc.so*' -F __getpid -F __strdup -F round_of -- "$BIN" 4
expect_trace
[ "$(query counts | tr '\n' ' ')" = "getpid 4 round_of 4 strdup 20 " ] ||
    fail "expected getpid, round_of and strdup: $(query counts | tr '\n' ' ')"
CTX="[-L by an alias]"
ct_run -L__getpid -L__libc_calloc -- "$BIN" 4
expect_trace
chk check-counts getpid=4 calloc=4 strdup=0 round_of=4

CTX="[-L GLOB matching nothing]"
ct_run -L'no_such_function*' -- "$BIN" 4
expect_rc 0
grep -q "^calltrace: warning: -L no_such_function\*: matches no function the program's libraries export" "$CT_ERR" ||
    fail "no clear warning: $(cat "$CT_ERR")"

for static in -static -static-pie; do
    CTX="[-L, $static]"
    build libcalls O2 "$static"
    plain_run "$BIN" 4
    ct_run -L -- "$BIN" 4
    expect_trace
    same_stdout
    chk check-counts round_of=4 release=24
    grep -q "^calltrace: warning: -L: the program loaded no shared library" "$CT_ERR" ||
        fail "no clear warning: $(cat "$CT_ERR")"
done

CTX="[-L GLOB detached]"
ct_raw -L malloc "$BIN"
one_stderr_line_error "-L malloc PROGRAM"
grep -q "write -Lmalloc, then the program" "$CT_ERR" || fail "no hint: $(cat "$CT_ERR")"
CTX="[-L '']"
ct_raw -L= "$BIN"
one_stderr_line_error "-L="
