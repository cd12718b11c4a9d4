#!/bin/bash
# Run directory naming: default ./calltrace-out, then calltrace-out-1, -2;
# an existing -o DIR (directory or file) is never overwritten: DIR-1, DIR-2.
# Existing run directories keep their contents; the closing line names the
# directory actually used.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build nested O0
W=$T/work
mkdir -p "$W"
cd "$W" || fail "cd"

run_here() {   # run_here [OPTIONS...]: calltrace OPTIONS -- $BIN in $W
    _next_files
    CT_OUT=$_OUT CT_ERR=$_ERR
    timeout -k 5 "$CT_TIMEOUT" "$CALLTRACE" "$@" -- "$BIN" </dev/null >"$CT_OUT" 2>"$CT_ERR"
    CT_RC=$?
    expect_rc 0
}
expect_dir() {   # expect_dir DIR: DIR has a valid trace; the closing line names it
    CT_DIR=$1 CT_TRACE=$1/trace.json
    expect_trace
    chk check-counts a=100 b=200 c=250 main=1
    local line
    line=$(grep '^calltrace: ' "$CT_ERR" | tail -n 1)
    [ -n "$line" ] || fail "no closing 'calltrace: ' line on stderr"
    local base=${1##*/}
    # the line must name this directory (absolute or relative), not another
    printf '%s\n' "$line" | grep -Eq "(^|[ /'\"\`])$base(/|[ '\"\`,:;.]|$)" ||
        fail "closing line does not name the run directory $base: $line"
}
snapshot() { (cd "$1" && find . -type f -exec md5sum {} + | sort); }

CTX="[default name]"
run_here
expect_dir "$W/calltrace-out"
echo marker >"$W/calltrace-out/marker"
snap0=$(snapshot "$W/calltrace-out")

CTX="[second run]"
run_here
expect_dir "$W/calltrace-out-1"
[ "$(snapshot "$W/calltrace-out")" = "$snap0" ] || fail "calltrace-out was modified by the second run"

CTX="[third run]"
run_here
expect_dir "$W/calltrace-out-2"
[ "$(snapshot "$W/calltrace-out")" = "$snap0" ] || fail "calltrace-out was modified by the third run"
[ -e "$W/calltrace-out-3" ] && fail "unexpected calltrace-out-3"

CTX="[-o new dir]"
run_here -o mine
expect_dir "$W/mine"
[ -e "$W/mine-1" ] && fail "-o mine on a fresh name created mine-1 too"

CTX="[-o existing dir]"
mkdir -p "$W/exists" && echo keep >"$W/exists/keep"
run_here -o exists
expect_dir "$W/exists-1"
[ "$(cat "$W/exists/keep")" = keep ] && [ ! -e "$W/exists/trace.json" ] ||
    fail "existing -o directory was written into: $(ls -A "$W/exists" | tr '\n' ' ')"
run_here -o exists
expect_dir "$W/exists-2"

CTX="[-o existing file]"
echo "not a dir" >"$W/afile"
run_here -o afile
expect_dir "$W/afile-1"
[ "$(cat "$W/afile")" = "not a dir" ] || fail "existing file named by -o was modified"

CTX="[-o nested relative path]"
mkdir -p "$W/sub"
run_here -o sub/run
expect_dir "$W/sub/run"

CTX="[--output long option]"
run_here --output long
expect_dir "$W/long"

CTX="[-o absolute path]"
run_here -o "$T/abs-run"
expect_dir "$T/abs-run"

CTX="[no stray files]"
left=$(ls -A "$W" | sort | tr '\n' ' ')
want="afile afile-1 calltrace-out calltrace-out-1 calltrace-out-2 exists exists-1 exists-2 long mine sub "
[ "$left" = "$want" ] || fail "unexpected entries in the cwd: '$left', expected '$want'"
