#!/bin/bash
# Bad command lines: unknown options, a missing or empty option value, no
# program at all.  Each: exit != 0, exactly one stderr line "calltrace: ...",
# no run directory created in the cwd, the program is not run.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build args O0
MARK=$T/program-ran
# the "program" would create $MARK if it were run
printf '#!/bin/sh\ntouch "%s"\n' "$MARK" >"$T/marker.sh"
chmod +x "$T/marker.sh"

check_badopt() {   # check_badopt WHAT ARGS...
    local what=$1
    shift
    CTX="[$what: calltrace $*]"
    local cwd=$T/cwd.$what
    mkdir -p "$cwd"
    rm -f "$MARK"
    (cd "$cwd" && timeout -k 5 "$CT_TIMEOUT" "$CALLTRACE" "$@" </dev/null >"$T/last.out" 2>"$T/last.err"; echo $? >"$T/rc")
    CT_RC=$(cat "$T/rc") CT_OUT=$T/last.out CT_ERR=$T/last.err
    one_stderr_line_error "$what"
    [ -z "$(ls -A "$cwd")" ] || fail "$what: files left in the cwd: $(ls -A "$cwd" | tr '\n' ' ')"
    [ ! -e "$MARK" ] || fail "$what: the program was run despite the bad command line"
    note "ok: $(cat "$CT_ERR")"
}

check_badopt no-arguments
check_badopt unknown-short -Z "$T/marker.sh"
check_badopt unknown-long --no-such-option "$T/marker.sh"
check_badopt o-missing-value -o
check_badopt o-empty-value -o '' "$T/marker.sh"
check_badopt output-empty-value --output= "$T/marker.sh"
check_badopt only-dashdash --
check_badopt options-no-program -q -v
check_badopt quiet-with-value --quiet=yes "$T/marker.sh"
