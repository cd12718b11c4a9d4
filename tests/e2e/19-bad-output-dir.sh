#!/bin/bash
# An output directory that cannot be created (tests may run as root, so use
# places where even root fails: under a regular file, under /proc, under
# /dev/null).  Each: exit != 0, one stderr line "calltrace: ...", the program
# is not run (it would print on stdout), nothing is left behind.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build nested O0
echo "a regular file" >"$T/afile"

check_badout() {   # check_badout WHAT DIR
    local what=$1 dir=$2
    CTX="[$what: -o $dir]"
    mkdir -p "$T/cwd.$what"
    (cd "$T/cwd.$what" && timeout -k 5 "$CT_TIMEOUT" "$CALLTRACE" -o "$dir" -- "$BIN" </dev/null >"$T/last.out" 2>"$T/last.err"; echo $? >"$T/rc")
    CT_RC=$(cat "$T/rc") CT_OUT=$T/last.out CT_ERR=$T/last.err
    one_stderr_line_error "$what"
    [ -z "$(ls -A "$T/cwd.$what")" ] || fail "$what: files left in the cwd: $(ls -A "$T/cwd.$what" | tr '\n' ' ')"
    [ ! -e "$T/afile-1" ] || fail "$what: created $T/afile-1 instead of failing"
    note "ok: $(cat "$CT_ERR")"
}

check_badout under-a-file "$T/afile/run"
check_badout under-dev-null /dev/null/run
check_badout in-proc /proc/calltrace-test-run
if [ "$(id -u)" != 0 ]; then
    mkdir -p "$T/ro" && chmod 0555 "$T/ro"
    check_badout read-only-dir "$T/ro/run"
fi
