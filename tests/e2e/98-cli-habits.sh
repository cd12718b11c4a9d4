#!/bin/bash
# Habits users bring from uftrace, ltrace and strace: `calltrace record PROG` (uftrace's verb) is
# `calltrace PROG`; `--args GLOB PROG` (GLOB taken as the program) is refused with the fix when
# no program GLOB exists; `-A=GLOB` means GLOB, not "=GLOB"; `graph -o FILE` renders the format
# FILE's extension names (jpg, png, pdf, svg: checked by their magic bytes), writes DOT for .dot,
# .gv or no extension, and refuses an extension dot does not know instead of writing DOT into it.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build recursion O0

CTX="[record]"
plain_run "$BIN" 6
ct_raw record -q -o "$T/rec" "${CT_ENGINE_OPT[@]}" "$BIN" 6
same_rc
same_stdout
CT_DIR=$T/rec CT_TRACE=$T/rec/trace.json
expect_trace
chk check-counts -f "$CT_OUT"
ct_raw record --help
expect_rc 0
grep -q '^usage: calltrace \[record\] \[OPTIONS\]' "$CT_OUT" || fail "record --help: $(head -3 "$CT_OUT")"

# --args GLOB PROG: GLOB would be the program; refused when there is no such program
# refused_glob FIX OPTION... : the options, then fib's program; FIX is the form the message gives
refused_glob() {
    local fix=$1
    shift
    CTX="[$* PROG]"
    ct_raw "$@" "$BIN" 6
    one_stderr_line_error "$* PROG"
    local glob=${*: -1}
    grep -qF "no program '$glob' to trace" "$CT_ERR" && grep -qF "write $fix, then the program" "$CT_ERR" ||
        fail "the message does not give the fix ($fix): $(cat "$CT_ERR")"
    [ -z "$(ls -A "$T" | grep calltrace-out)" ] || fail "a run directory was left behind"
}
refused_glob --args=fib --args fib
refused_glob -Afib -A fib
refused_glob "-A'fi*'" -A 'fi*'
refused_glob -Afib -RA fib

# the forms that are not ambiguous: -A alone before the program, -AGLOB, -A=GLOB, --args=GLOB
for form in "-A=fib" "-A" "-Afib" "-A=fib" "--args=fib"; do
    CTX="[$form]"
    ct_run "$form" -- "$BIN" 6
    expect_trace
    chk check-counts -f "$CT_OUT"
    "$CALLTRACE" calls "$CT_DIR" >"$T/calls.out" 2>"$T/calls.err" || fail "calls: $(cat "$T/calls.err")"
    grep -qE '^25 +25 +fib\(int n\)' "$T/calls.out" || fail "fib's arguments not recorded: $(cat "$T/calls.out")"
    if [ "$form" != -A ]; then
        [ "$(grep -c '(' "$T/calls.out")" = 1 ] || fail "$form recorded more than fib: $(cat "$T/calls.out")"
    fi
    grep -q "matches no function" "$CT_ERR" && fail "$form: $(cat "$CT_ERR")"
done
RUN=$CT_DIR

# graph -o FILE: the extension says the format
CTX="[graph -o]"
if command -v dot >/dev/null; then
    # magic bytes, hex: JPEG ffd8ff, PNG 89504e47, PDF %PDF-, SVG an <svg element
    for f in g.jpg:ffd8ff g.jpeg:ffd8ff g.JPG:ffd8ff g.png:89504e47 g.pdf:255044462d g.svg:; do
        file=$T/${f%%:*} magic=${f#*:}
        ct_raw graph -o "$file" "$RUN"
        expect_rc 0 "graph -o ${f%%:*}"
        if [ -n "$magic" ]; then
            [ "$(od -An -tx1 -N${#magic} "$file" | tr -d ' \n' | cut -c1-${#magic})" = "$magic" ] ||
                fail "${f%%:*} is not what its extension says: $(head -c 40 "$file" | od -c | head -2)"
        else
            grep -q '<svg' "$file" || fail "g.svg has no <svg>"
        fi
    done
    for f in g.dot g.gv g; do
        ct_raw graph -o "$T/$f" "$RUN"
        expect_rc 0 "graph -o $f"
        head -1 "$T/$f" | grep -q '^digraph calltrace {' || fail "$f is not DOT: $(head -2 "$T/$f")"
    done
    for f in g.txt g.svgx graph.tar.gz; do
        ct_raw graph -o "$T/$f" "$RUN"
        one_stderr_line_error "graph -o $f"
        grep -q "dot cannot render \.${f##*.} files (-o FILE.dot writes DOT; dot renders .*\bjpg\b" "$CT_ERR" ||
            fail "the refusal does not say what dot renders: $(cat "$CT_ERR")"
        [ -e "$T/$f" ] && fail "$f was written"
    done
else
    note "Graphviz not installed: graph -o not tested"
fi
exit 0
