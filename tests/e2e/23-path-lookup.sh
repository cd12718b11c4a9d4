#!/bin/bash
# PATH lookup: a program name without '/' is looked up in PATH like execvp;
# a name with '/' is used as is; a program in the cwd but not in PATH is not
# found (clean error).
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build nested O0
mkdir -p "$T/bin" "$T/empty-first" "$T/cwd"
cp "$BIN" "$T/bin/ct-nested-prog"
# a non-executable file with the same name earlier in PATH is skipped
: >"$T/empty-first/ct-nested-prog"

CTX="[PATH lookup]"
plain_run "$BIN"
PATH="$T/empty-first:$T/bin:$PATH" ct_run ct-nested-prog
expect_rc 0
expect_trace
same_stdout
chk check-counts -f "$CT_OUT"

CTX="[relative path with /]"
cd "$T/bin" || fail "cd"
ct_run ./ct-nested-prog
expect_rc 0
expect_trace
same_stdout
chk check-counts a=100 b=200 c=250 main=1

CTX="[in cwd but not in PATH]"
cd "$T/bin" || fail "cd"
PATH="$T/empty-first:/usr/bin:/bin" ct_raw -o "$T/notfound-run" ct-nested-prog-nope
one_stderr_line_error "program not in PATH"
[ ! -e "$T/notfound-run" ] || fail "run directory left behind"
cp "$BIN" "$T/cwd/only-in-cwd"
cd "$T/cwd" || fail "cd"
PATH="/usr/bin:/bin" ct_raw -o "$T/cwd-run" only-in-cwd
one_stderr_line_error "program only in the cwd (not in PATH)"
[ ! -e "$T/cwd-run" ] || fail "run directory left behind"
