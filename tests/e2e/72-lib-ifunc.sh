#!/bin/bash
# IFUNC symbols: libc's strlen is an STT_GNU_IFUNC whose symbol is its resolver. calltrace calls
# the resolver in the program once libc is relocated and traces the implementation it returns,
# under the IFUNC's name: every strlen call measure() makes is seen once, directly inside it,
# whatever the PLT layout (lazy binding resolves strlen at its first call, -z now and -fno-plt
# at start-up). The IFUNC symbol itself (the resolver) gets no breakpoint.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

N=500
for flags in "" "-Wl,-z,now" "-fno-plt"; do
    CTX="[strlen ${flags:-lazy}]"
    read -r -a f <<<"$flags"
    build ifunc O2 -fno-builtin "${f[@]}"
    plain_run "$BIN" $N
    ct_run -l 'libc.so*' -F strlen -F measure -- "$BIN" $N
    expect_trace
    inject_engaged
    same_rc
    same_stdout
    chk check-nesting
    chk check-counts -f "$CT_OUT"
    # every call of measure makes one call of strlen, seen inside it
    got=$(query parent strlen | awk '$1 == "measure" { print $2 }')
    [ "$got" = $N ] || fail "strlen inside measure: $got calls, the program made $N: $(query parent strlen)"
    ct_raw report -f csv "$CT_DIR"
    grep -q '^"strlen","/.*libc.so.6",' "$CT_OUT" || fail "strlen not reported in libc: $(cat "$CT_OUT")"
done

# Two IFUNCs that pick the same implementation cannot be told apart at the callee: one function
# named after both (memcpy and memmove, on x86_64 machines with AVX or ERMS), else one each.
CTX="[shared implementation]"
ct_run -vv -l 'libc.so*' -F memcpy -F memmove -- "$BIN" 1
expect_rc 0
grep -q "IFUNC memcpy/memmove: traced at" "$CT_ERR" ||
    { grep -q "IFUNC memcpy: traced at" "$CT_ERR" && grep -q "IFUNC memmove: traced at" "$CT_ERR"; } ||
    fail "memcpy and memmove were not traced: $(grep IFUNC "$CT_ERR")"

# A library with an IFUNC of its own, loaded by dlopen: it is relocated after the dynamic
# linker's notification, so its resolver is called at its DT_INIT. Stripped, the implementation
# has no name of its own and is traced as the IFUNC, twice(); with its symbols, the
# implementation's own name (twice_shift or twice_add) is kept.
build dlopen_ifunc O2 -ldl
for strip in "-Wl,-s" ""; do
    CTX="[IFUNC in a dlopen'ed library ${strip:-not stripped}]"
    build_shared ifunc_lib O2 "ifunc/libifunc${strip:+-stripped}.so" $strip
    plain_run "$BIN" "$LIB" 25
    ct_run -l 'libifunc*' -- "$BIN" "$LIB" 25
    expect_trace
    inject_engaged
    same_rc
    same_stdout
    if [ -n "$strip" ]; then
        chk check-counts -f "$CT_OUT"
    else
        n=$(query counts | awk '$1 == "twice_shift" || $1 == "twice_add" { s += $2 } END { print s }')
        [ "$n" = 25 ] || fail "twice's implementation: $n calls, expected 25: $(query counts | tr '\n' ' ')"
        chk check-counts twice=0
    fi
done
