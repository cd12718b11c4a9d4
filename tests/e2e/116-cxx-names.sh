#!/bin/bash
# C++ names as users write them: -F/-N and `calls RUN FUNC N` match a name with or without its
# parameter list (parse for parse(int) and parse(char const*), geo::Circle::area for
# geo::Circle::area() const); tree shows a function without its parameter list, which its
# arguments' parentheses follow (no "area() const()"), and --short-names empties template
# arguments; a static initializer is "global constructors keyed to ...", not _GLOBAL__sub_I_...
# Counts checked against the program's own (tests/progs/cxxnames.cc).
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

build cxxnames O2
plain_run "$BIN" 3

CTX="[every function]"
ct_run "$BIN" 3
expect_trace
same_stdout
chk check-counts -f "$CT_OUT"
chk check-counts "global constructors keyed to parse(int)=1"
"$CALLTRACE" tree "$CT_DIR" >"$T/tree.out" 2>"$T/tree.err" || fail "tree: $(cat "$T/tree.err")"
for line in "geo::Circle::area();" "parse();" "int twice<int>();" \
    "global constructors keyed to parse() {" "} /* global constructors keyed to parse */"; do
    grep -qF -- " $line" "$T/tree.out" || fail "no '$line' in the tree: $(head -12 "$T/tree.out")"
done
grep -qF ")(" "$T/tree.out" && fail "doubled parentheses in the tree: $(grep -m3 -F ")(" "$T/tree.out")"
"$CALLTRACE" tree --short-names "$CT_DIR" >"$T/short.out" 2>"$T/tree.err" ||
    fail "tree --short-names: $(cat "$T/tree.err")"
grep -qF " double twice<>();" "$T/short.out" || fail "no short name: $(head -12 "$T/short.out")"

CTX="[-F without the parameter list]"
ct_run -F parse -F 'geo::Circle::area' -- "$BIN" 3
expect_trace
[ "$(query counts | tr '\n' ' ')" = "geo::Circle::area() const 3 parse(char const*) 3 parse(int) 3 " ] ||
    fail "expected both parse overloads and area: $(query counts | tr '\n' ' ')"
grep -q warning "$CT_ERR" && fail "a warning: $(cat "$CT_ERR")"

CTX="[-N without the parameter list]"
ct_run -N parse -N 'twice' -- "$BIN" 3
expect_trace
chk check-counts "parse(int)=0" "parse(char const*)=0" "geo::Circle::area() const=3" \
    "int twice<int>(int)=3"

CTX="[calls RUN FUNC N without the parameter list]"
ct_run -A -- "$BIN" 3
expect_trace
"$CALLTRACE" calls "$CT_DIR" setup 1 >"$T/calls.out" 2>"$T/calls.err" ||
    fail "calls RUN setup 1: $(cat "$T/calls.err")"
grep -q "^setup() #1 " "$T/calls.out" || fail "calls RUN setup 1 printed: $(head -3 "$T/calls.out")"
"$CALLTRACE" calls "$CT_DIR" parse 1 >"$T/calls.out" 2>"$T/calls.err" &&
    fail "calls RUN parse 1 chose one of two overloads: $(head -3 "$T/calls.out")"
grep -qx "calltrace: $CT_DIR: parse names 2 overloads (give its whole name, as calltrace calls RUN lists it)" "$T/calls.err" ||
    fail "no clear error for an overloaded name: $(cat "$T/calls.err")"
