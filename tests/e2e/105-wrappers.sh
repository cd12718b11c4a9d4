#!/bin/bash
# Wrappers: a program run through env, nice, timeout, runuser, sh -c, a "#!" script or a chain of
# them is traced; the wrappers, which have no function symbols, are followed to what they exec,
# one line names the program traced and what exec'd it, and the counts equal the program's own.
# A wrapper that ran nothing traceable is refused after the run (one line, no run directory); a
# program without symbols that can run no other program is still refused before it starts.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build wrapped O2
PROG=$BIN

# wrapped_case WRAPPER_NAME WRAPPER... PROG ARGS: traced like untraced, the program's counts
# (times RUNS, its runs in the program's output), the one line naming what exec'd it.
wrapped_case() {
    local by=$1
    shift
    CTX="[$*]"
    plain_run "$@"
    ct_run "$@"
    expect_rc 0
    expect_trace
    same_stdout
    chk check-nesting
    chk check-counts -f "$CT_OUT"
    local line="calltrace: tracing $PROG (exec'd by $by)"
    local lines
    lines=$(grep -c '^calltrace: tracing ' "$CT_ERR")
    [ "$lines" = 1 ] && grep -qxF "$line" "$CT_ERR" ||
        fail "expected the one line '$line', got: $(grep '^calltrace: tracing' "$CT_ERR")"
    # the wrappers recorded no call: only the program's processes have calls
    local procs
    procs=$(query processes | wc -l)
    [ "$procs" = "${RUNS:-1}" ] || fail "calls in $procs processes, expected ${RUNS:-1}"
}

wrapped_case env env WRAPPED=yes "$PROG"
grep -q 'WRAPPED=yes' "$CT_OUT" || fail "env's variable did not reach the program"
wrapped_case nice nice -n 3 "$PROG"
want=$(($(nice) + 3))
[ $want -gt 19 ] && want=19
grep -q "nice $want " "$CT_OUT" || fail "nice's value did not reach the program: $(head -1 "$CT_OUT")"
wrapped_case timeout timeout 60 "$PROG" a
wrapped_case nice env WRAPPED=chain nice -n 2 "$PROG"

printf '#!/bin/sh\nexec "%s" "$@"\n' "$PROG" >"$T/run.sh" && chmod +x "$T/run.sh"
wrapped_case run.sh "$T/run.sh" x y

# sh forks a child per program: both are traced (twice the counts), the line comes once
plain_run "$PROG"
grep '^count ' "$PL_OUT" | awk '{ print $1, $2, $3 * 2 }' >"$T/twice"
CTX="[sh -c]"
RUN_STDIN=/dev/null ct_run sh -c "'$PROG' 1; '$PROG' 2"
expect_rc 0
chk check-counts -f "$T/twice"
[ "$(grep -c "^calltrace: tracing $PROG (exec'd by sh)\$" "$CT_ERR")" = 1 ] ||
    fail "not one line for sh -c: $(grep '^calltrace: tracing' "$CT_ERR")"
[ "$(query processes | wc -l)" = 2 ] || fail "calls in $(query processes | wc -l) processes, expected 2"

# runuser changes the user before it execs: the program runs as nobody, and is traced
if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null && id nobody >/dev/null 2>&1; then
    chmod 711 "$T" && cp "$PROG" "$T/wrapped" && chmod 755 "$T/wrapped" || fail "cp"
    PROG=$T/wrapped
    wrapped_case runuser runuser -u nobody -- "$PROG"
    grep -q "^uid $(id -u nobody) " "$CT_OUT" || fail "the program did not run as nobody: $(head -1 "$CT_OUT")"
    inject_engaged
    PROG=$BIN
else
    note "not root, or no runuser: runuser not tested"
fi

CTX="[-q]"
ct_run -q -- env "$PROG"
expect_rc 0
[ -s "$CT_ERR" ] && fail "-q: calltrace wrote to stderr: $(cat "$CT_ERR")"

CTX="[-F after a wrapper]"
ct_run -F work -F 'nomatch*' -- env "$PROG"
expect_rc 0
chk check-counts work=3
[ "$(query counts)" = "work 3" ] || fail "-F work: $(query counts)"
grep -qxF "calltrace: warning: -F nomatch*: matches no function of the programs traced" "$CT_ERR" ||
    fail "no warning for the pattern that matched nothing: $(cat "$CT_ERR")"

# refused after the run: env ran, but nothing with functions ran
CTX="[env true]"
ct_run env true
one_stderr_line_error "env true"
expect_rc 2
grep -q "^calltrace: $(command -v env): no function symbols to trace, and it ran no program that has some" "$CT_ERR" ||
    fail "unclear refusal: $(cat "$CT_ERR")"
[ ! -e "$CT_DIR" ] || fail "a run directory was left: $(ls -A "$CT_DIR" | tr '\n' ' ')"

CTX="[--no-follow timeout]"
ct_run --no-follow -- timeout 60 "$PROG"
expect_rc 2
[ "$(wc -l <"$CT_ERR")" = 1 ] || fail "not one line on stderr"
grep -q '^count work 3$' "$CT_OUT" || fail "the program did not run"
grep -q -- "--no-follow left untraced what it ran in child processes" "$CT_ERR" ||
    fail "the refusal does not name --no-follow: $(cat "$CT_ERR")"
[ ! -e "$CT_DIR" ] || fail "a run directory was left"

# a stripped program that can run no other program is refused before it starts
CTX="[stripped, runs nothing]"
cp "$PROG" "$T/stripped" && strip --strip-all "$T/stripped" || fail "strip"
ct_run "$T/stripped"
one_stderr_line_error "stripped"
grep -q "no function symbols to trace" "$CT_ERR" || fail "unclear refusal: $(cat "$CT_ERR")"
[ -s "$CT_OUT" ] && fail "the program was started: $(cat "$CT_OUT")"
exit 0
