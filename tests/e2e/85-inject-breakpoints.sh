#!/bin/bash
# --engine=inject: the functions a 5-byte jump cannot go over (too short with no padding after
# them, a loop whose head is the entry, a branch into the bytes the jump would cover;
# tests/progs/unpatchable.c, in assembly) are patched in the program all the same, with no
# breakpoint: a 2-byte jump to a hop in the padding nearby (tracer/inject/hops.h), the loop
# turning in the relocated copy, and -v says so. Mixed and nested with the other functions,
# recursing through both kinds, tail-called, longjmp'd across, from 5 threads: the counts are the
# program's own, and `calltrace tree` and `calltrace report` (durations aside) are the same as
# under --engine=ptrace (a breakpoint on every entry). Before, they were breakpoints.
# Then -l: a library's functions are patched (not breakpoints), in a code region near it, and
# an IFUNC's implementation under the IFUNC's name (its extent from the symbols or the unwind
# table).
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
unset CALLTRACE_ENGINE # both engines, explicitly

# The tree without its duration column and its breakpoint marks (the engine, not the calls),
# threads by their order only; the report's names, call counts and unfinished counts.
shape() {
    "$CALLTRACE" tree "$CT_DIR" 2>/dev/null |
        sed -E 's/^ *[0-9.]+ [a-zµ]*s  /            /; s/^# pid [0-9]+, thread [0-9]+/# thread/; s| /\* breakpoint \*/||' ||
        fail "calltrace tree failed"
    "$CALLTRACE" report -s name -f csv "$CT_DIR" 2>/dev/null | cut -d, -f1,3,9 || fail "calltrace report failed"
}

HOPPED=(short_lea short_mov branch_rec via_branch)

for opt in O0 O2; do
    build unpatchable "$opt"
    CTX="[unpatchable -$opt, inject]"
    plain_run "$BIN" 60
    ct_run --engine=inject -v -- "$BIN" 60
    expect_trace
    same_rc
    same_stdout
    chk check-nesting
    chk check-counts -f "$CT_OUT"
    # -O0 code has no alignment padding: there, what has no hop in reach stays on a breakpoint
    for f in "${HOPPED[@]}"; do
        grep -qF "calltrace[inject]: $f: patched with a 2-byte jump to a hop in the padding at " \
            "$CT_ERR" || { [ "$opt" = O0 ] && grep -qF "calltrace[probe]: $f: on a breakpoint (the ptrace engine's), not patched: too short for a jump, and no padding in reach for a hop" "$CT_ERR"; } ||
            fail "-v does not say that $f goes through a hop: $(grep -F "$f" "$CT_ERR")"
    done
    if [ "$opt" = O2 ]; then
        grep -q 'on a breakpoint' "$CT_ERR" && fail "breakpoints planted: $(grep 'on a breakpoint' "$CT_ERR")"
    fi
    grep -qE "unpatchable-$opt: 13 functions traced in process [0-9]+ \(inject\)" "$CT_ERR" ||
        fail "not every function was traced: $(grep 'functions traced' "$CT_ERR")"
    grep -q 'traced by the ptrace engine' "$CT_ERR" && fail "the whole program fell back: $(cat "$CT_ERR")"
    shape >"$T/inject.shape"

    CTX="[unpatchable -$opt, ptrace]"
    ct_run --engine=ptrace -- "$BIN" 60
    expect_trace
    chk check-counts -f "$CT_OUT"
    shape >"$T/ptrace.shape"
    cmp -s "$T/inject.shape" "$T/ptrace.shape" ||
        fail "tree or report differ between the engines (- inject, + ptrace):
$(diff -u "$T/inject.shape" "$T/ptrace.shape" | tail -n +3 | head -40)"
done

CTX="[-l with inject: the library's functions patched]"
build_shared plugin O2 "inject-l/libplugin-file.so" -Wl,-soname,libplugin.so.1
ln -sfn libplugin-file.so "$BUILD_DIR/inject-l/libplugin.so.1"
build uselib O2 "$LIB" "-Wl,-rpath,$BUILD_DIR/inject-l"
plain_run "$BIN" 40
ct_run --engine=inject -v -l 'libplugin*' -- "$BIN" 40
expect_trace
same_rc
same_stdout
chk check-nesting
chk check-counts -f "$CT_OUT"
grep -qE "libplugin.so.1: [1-9][0-9]* functions traced in process [0-9]+ \(inject\)" "$CT_ERR" ||
    fail "the library was not patched: $(grep libplugin "$CT_ERR")"
grep -q 'on a breakpoint' "$CT_ERR" && fail "unexpected breakpoints: $(grep 'on a breakpoint' "$CT_ERR")"

# -F twice selects the IFUNC, not its implementation's own name (twice_shift or twice_add): the
# implementation, found in the library's symbols, is patched under the IFUNC's name, at the
# library's first initializer (it was dlopen'ed).
CTX="[-l with inject: an IFUNC's implementation patched]"
build dlopen_ifunc O2 -ldl
build_shared ifunc_lib O2 "ifunc/libifunc.so"
plain_run "$BIN" "$LIB" 25
ct_run --engine=inject -v -l 'libifunc*' -F twice -- "$BIN" "$LIB" 25
expect_trace
same_stdout
chk check-counts -f "$CT_OUT"
grep -q "IFUNC twice: patched at" "$CT_ERR" || fail "twice was not patched: $(grep -i twice "$CT_ERR")"

# libc keeps no symbol for strlen's implementation (__strlen_avx2...): its extent comes from
# libc's unwind table (.eh_frame_hdr), whose ranges also give every branch of libc's text.
CTX="[-l 'libc.so*' with inject: strlen's implementation patched]"
build ifunc O2 -fno-builtin
plain_run "$BIN" 500
ct_run --engine=inject -v -l 'libc.so*' -F strlen -F measure -- "$BIN" 500
expect_trace
same_rc
same_stdout
chk check-nesting
chk check-counts -f "$CT_OUT"
grep -q "IFUNC strlen: patched at" "$CT_ERR" || fail "strlen was not patched: $(grep strlen "$CT_ERR")"
