#!/bin/bash
# calltrace tree: nested.c's calls as an indented tree: main opens, a opens under it, b under
# a, c is a leaf; exact line counts; -D 1; threads each get their own tree.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build nested O0
ct_run "$BIN"
run=$CT_DIR
CTX="[tree]"
ct_raw tree "$run"
expect_rc 0
count() { grep -c -- "$1" "$CT_OUT"; }
[ "$(count '^ *main() {$')" = 1 ] || fail "main opens once"
[ "$(count '^ \{14\}  a() {$')" = 100 ] || fail "a opens 100 times at depth 2: $(count 'a() {')"
[ "$(count '^ .*s \{8\}c();$')" = 200 ] || fail "200 c() leaves at depth 4"
[ "$(count '^ .*s    c();$')" = 50 ] || fail "50 c() leaves at depth 2"
[ "$(count '} /\* b \*/$')" = 200 ] || fail "b closes 200 times"
tail -n 1 "$CT_OUT" | grep -q '^ *[0-9.]* [mu]\?s  } /\* main \*/$' || fail "ends with main's close: $(tail -n 1 "$CT_OUT")"

ct_raw tree -D 1 "$run"
[ "$(grep -vc '^#\| DURATION' "$CT_OUT")" = 1 ] && grep -q '  main();$' "$CT_OUT" ||
    fail "-D 1: $(cat "$CT_OUT")"

CTX="[tree threads]"
build threads O0
ct_run "$BIN"
ct_raw tree "$CT_DIR"
expect_rc 0
threads=$(grep -c '^# pid' "$CT_OUT")
[ "$threads" -ge 9 ] || fail "expected a tree per thread (>= 9), got $threads"
[ "$(grep -c 'work();' "$CT_OUT")" = 600 ] || fail "work() leaves: $(grep -c 'work();' "$CT_OUT")"
grep -q 'blocker(.*unfinished' "$CT_OUT" || fail "blocker must be marked unfinished"

# With -A -R, each call shows its arguments and its return value: fib(5)'s whole tree, against
# one written out here from fib's definition (durations cut off).
CTX="[tree with values]"
build recursion O0
ct_run -Afib -R -- "$BIN" 5
ct_raw tree "$CT_DIR"
expect_rc 0
python3 - >"$T/fib-tree.expected" <<'PY'
def fib(n, depth):
    pad = "  " * depth
    if n < 2:
        print(f"{pad}fib(n={n}) = {n};")
        return n
    print(f"{pad}fib(n={n}) {{")
    r = fib(n - 1, depth + 1) + fib(n - 2, depth + 1)
    print(f"{pad}}} = {r} /* fib */")
    return r
fib(5, 1)
PY
sed -n 's/^ \{0,11\}[0-9.]* [mun]\?s  //p; s/^ \{14\}//p' "$CT_OUT" | grep 'fib' >"$T/fib-tree.got"
diff "$T/fib-tree.expected" "$T/fib-tree.got" >"$T/fib-tree.diff" ||
    fail "fib(5)'s tree differs: $(head -20 "$T/fib-tree.diff")"
