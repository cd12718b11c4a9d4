#!/bin/bash
# "#!" scripts: calltrace traces the interpreter.
#  - a script for our own interpreter (with symbols): the interpreter's calls
#    are traced (emit() once per non-comment line), output as untraced
#  - a /bin/sh script: no crash; either it works (same status and output as
#    untraced) or, if the shell has no symbols to trace (none, or only unnamed
#    ones: a wrapper) and runs nothing that has, it runs as untraced and ends
#    with a clean one-line "calltrace: ..." error (status 2, no run directory):
#    a shell is followed to the programs it runs (105-wrappers)
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
for opt in O0 O2; do
    CTX="[shebang interp -$opt]"
    build interp "$opt"
    S=$T/script-$opt
    printf '#!%s\nfirst line\n# a comment\nsecond line\nthird line\n' "$BIN" >"$S"
    chmod +x "$S"
    standard_case "$S" extra1 extra2
    chk check-counts emit=3 main=1
    grep -qx 'extra args 2' "$CT_OUT" || fail "script arguments lost: $(cat "$CT_OUT")"
    chk check-parent emit main
done

CTX="[shebang /bin/sh]"
printf '#!/bin/sh\necho "hello from sh $1"\nexit 3\n' >"$T/sh-script"
chmod +x "$T/sh-script"
plain_run "$T/sh-script" arg
ct_run "$T/sh-script" arg
if [ "$CT_RC" = "$PL_RC" ]; then
    same_stdout
    expect_trace
    note "sh script traced: $(query summary | tr '\n' ' ')"
else
    [ "$CT_RC" -lt 128 ] || fail "calltrace died or reported a signal (status $CT_RC) on a /bin/sh script"
    expect_rc 2
    same_stdout
    [ "$(wc -l <"$CT_ERR")" = 1 ] &&
        grep -qE "^calltrace: $T/sh-script: (no function symbols to trace|passed through untraced as a wrapper)" "$CT_ERR" ||
        fail "not one clear line on stderr: $(cat "$CT_ERR")"
    [ ! -e "$CT_DIR" ] || fail "a run directory was left behind after the error"
    note "sh script refused: $(cat "$CT_ERR")"
fi
