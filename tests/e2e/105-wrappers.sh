#!/bin/bash
# Wrappers (src/control/wrapper.h), with Debian's real, stripped env, nice, timeout, runuser and
# sh (dash). An image whose functions are all unnamed (func_0xADDRESS, from .eh_frame alone) is
# passed through untraced, followed to what it execs, when it is the interpreter of the "#!"
# script calltrace was given, a shell run with -c, or one of its arguments names an executable
# file (a bare name through the wrapper's own PATH, a relative path from its own working
# directory), and it can run a program at all.
#  - Passed through: the trace holds exactly the program's functions, with its own counts; one
#    line names the program traced and what exec'd it.
#  - No wrapper, traced as any stripped program (each func_0xADDRESS an FDE of that image's
#    .eh_frame, no line): env or nice with no program to run, nice given a file that is not
#    executable, sh given a script that is not executable (then the program the script execs),
#    the program env runs when it is stripped (true), a stripped program that can run none
#    given an executable's path, a program with symbols that runs one.
#  - --trace-wrappers: nothing passed through, the wrappers' functions traced too.
#  - A wrapper that ran nothing to trace is refused after the run (one line, no run directory).
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build wrapped O2
PROG=$BIN

# own_counts OUT: "NAME COUNT" of the programs whose output OUT is: main once per run (each
# prints one "uid" line), their "count" lines summed.
own_counts() {
    awk '$1 == "uid" { m++ } $1 == "count" { c[$2] += $3 }
         END { if (m) print "main", m; for (k in c) print k, c[k] }' "$1" | sort
}

# fde_names IMAGE: func_0xADDRESS of each FDE of IMAGE's .eh_frame, from readelf
fde_names() {
    readelf --debug-dump=frames "$1" |
        sed -n 's/.* FDE .* pc=0*\([0-9a-f][0-9a-f]*\)\.\..*/func_0x\1/p' | sort -u
}

# expect_calls OWN [IMAGE]: the trace's named functions and counts are exactly OWN's (a file
# of "NAME COUNT"); its func_0xADDRESS functions are FDEs of IMAGE, and there are some, or,
# without IMAGE, none.
expect_calls() {
    local own=$1 image=${2:-}
    query counts >"$T/counts"
    grep -v '^func_0x' "$T/counts" >"$T/named"
    diff "$own" "$T/named" >/dev/null ||
        fail "named functions (- expected, + traced): $(diff "$own" "$T/named" | grep '^[<>]' | tr '\n' ' ')"
    awk '$1 ~ /^func_0x/ { print $1 }' "$T/counts" | sort >"$T/unnamed"
    if [ -z "$image" ]; then
        [ -s "$T/unnamed" ] && fail "a wrapper was traced: $(head -5 "$T/unnamed" | tr '\n' ' ')"
        return 0
    fi
    [ -s "$T/unnamed" ] || fail "no function of $image traced"
    fde_names "$image" >"$T/fdes"
    [ -s "$T/fdes" ] || fail "readelf found no FDE in $image"
    local stray
    stray=$(comm -23 "$T/unnamed" "$T/fdes" | head -5 | tr '\n' ' ')
    [ -z "$stray" ] || fail "traced functions that are no FDE of $image: $stray"
}

no_tracing_line() {
    grep -q '^calltrace: tracing ' "$CT_ERR" && fail "nothing was passed through: $(grep '^calltrace: tracing' "$CT_ERR")"
    return 0
}

# wrapped_case WRAPPER_NAME WRAPPER... PROG ARGS: passed through to the program ($PROG): traced
# like untraced, exactly its functions with its own counts, the one line naming what exec'd it.
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
    own_counts "$PL_OUT" >"$T/own"
    expect_calls "$T/own"
    local line="calltrace: tracing $PROG (exec'd by $by)"
    [ "$(grep -c '^calltrace: tracing ' "$CT_ERR")" = 1 ] && grep -qxF "$line" "$CT_ERR" ||
        fail "expected the one line '$line', got: $(grep '^calltrace: tracing' "$CT_ERR")"
    local procs
    procs=$(query processes | wc -l)
    [ "$procs" = "${RUNS:-1}" ] || fail "calls in $procs processes, expected ${RUNS:-1}"
}

# stripped_case IMAGE CALLTRACE_ARGS...: no wrapper: IMAGE traced as a stripped program, and
# the programs it execs ($T/own: their functions), as untraced, nothing passed through.
stripped_case() {
    local image=$1
    shift
    CTX="[$*]"
    plain_run "$@"
    ct_run "$@"
    expect_trace
    same_rc
    if [ "$*" = env ]; then same_stdout --env; else same_stdout; fi
    chk check-nesting
    own_counts "$PL_OUT" >"$T/own"
    expect_calls "$T/own" "$image"
    no_tracing_line
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

# nice finds the program through the PATH env gave it (calltrace's has no $T/bin)
mkdir "$T/bin" && cp "$PROG" "$T/bin/inpath" || fail "cp"
PROG=$T/bin/inpath
wrapped_case nice env PATH="$T/bin:/usr/bin:/bin" nice -n 1 inpath
# nice names ./rel from the directory sh went to (calltrace's, $T, has no ./rel)
mkdir "$T/sub" && cp "$BIN" "$T/sub/rel" || fail "cp"
PROG=$T/sub/rel
wrapped_case nice sh -c "cd '$T/sub' && exec nice -n 1 ./rel"
PROG=$BIN

# sh forks a child per program: both are traced (twice the counts), the line comes once
RUNS=2 RUN_STDIN=/dev/null wrapped_case sh sh -c "'$PROG' 1; '$PROG' 2"

# runuser changes the user before it execs: the program runs as nobody, and is traced
RUNUSER=$(command -v runuser || command -v /usr/sbin/runuser)
if [ "$(id -u)" = 0 ] && [ -n "$RUNUSER" ] && id nobody >/dev/null 2>&1; then
    chmod 711 "$T" && cp "$PROG" "$T/wrapped" && chmod 755 "$T/wrapped" || fail "cp"
    PROG=$T/wrapped
    wrapped_case runuser "$RUNUSER" -u nobody -- "$PROG"
    grep -q "^uid $(id -u nobody) " "$CT_OUT" || fail "the program did not run as nobody: $(head -1 "$CT_OUT")"
    inject_engaged
    PROG=$BIN
else
    note "not root, or no runuser: runuser not tested"
fi

# no program to run, or none that can be run: no wrapper, traced
ENV=$(type -P env) NICE=$(type -P nice) SH=$(type -P sh)
stripped_case "$ENV" env
stripped_case "$NICE" nice
printf 'data\n' >"$T/data" # not executable: nice cannot run it
stripped_case "$NICE" nice -n 1 "$T/data"
expect_rc 126
printf 'exec "%s" one\n' "$PROG" >"$T/plain.sh" # not executable: sh reads it
stripped_case "$(readlink -f "$SH")" sh "$T/plain.sh"
grep -q '^count work 3$' "$CT_OUT" || fail "the script did not run the program"
[ "$(query processes | wc -l)" = 1 ] || fail "calls in $(query processes | wc -l) processes, expected 1"

# env is passed through to true, stripped and no wrapper: traced
CTX="[env true]"
ct_run env true
expect_rc 0
expect_trace
printf '' >"$T/none"
expect_calls "$T/none" "$(type -P true)"
grep -qxF "calltrace: tracing $(type -P true) (exec'd by env)" "$CT_ERR" ||
    fail "not the line for true: $(grep '^calltrace: tracing' "$CT_ERR")"

# a stripped program that can run no program, given an executable's path: traced, each
# function named by its address in the unstripped copy (nm), with its own count
cp "$PROG" "$T/stripped" && strip --strip-all "$T/stripped" || fail "strip"
CTX="[stripped, given a program]"
plain_run "$T/stripped" "$PROG"
ct_run "$T/stripped" "$PROG"
expect_rc 0
expect_trace
same_stdout
chk check-nesting
expect_calls "$T/none" "$T/stripped"
no_tracing_line
own_counts "$PL_OUT" >"$T/own"
for f in main work leaf; do
    addr=$(nm "$PROG" | awk -v f=$f '$3 == f { print $1 }')
    printf 'func_0x%x %s\n' "0x$addr" "$(awk -v f=$f '$1 == f { print $2 }' "$T/own")"
done | sort >"$T/want"
query counts | sort >"$T/got"
diff "$T/want" "$T/got" >/dev/null || fail "the stripped program's counts: $(tr '\n' ' ' <"$T/got"), expected $(tr '\n' ' ' <"$T/want")"

# a program with symbols that runs programs, given one to run: no wrapper, traced, and so is
# the program it execs; stripped, it is a wrapper, passed through
build wrapped O2 -DRUNS_PROGRAMS
RUNNER=$BIN
CTX="[with symbols, runs a program]"
plain_run "$RUNNER" then "$PROG" a
ct_run "$RUNNER" then "$PROG" a
expect_rc 0
expect_trace
same_stdout
chk check-nesting
# and the runner's main, unfinished at its exec
own_counts "$PL_OUT" | awk '$1 == "main" { $2++ } 1' >"$T/own"
expect_calls "$T/own"
no_tracing_line
cp "$RUNNER" "$T/runner" && strip --strip-all "$T/runner" || fail "strip"
wrapped_case runner "$T/runner" then "$PROG" a

# --trace-wrappers: the wrappers are traced too, nothing is passed through
CTX="[--trace-wrappers env]"
plain_run env WRAPPED=yes "$PROG"
ct_run --trace-wrappers -- env WRAPPED=yes "$PROG"
expect_rc 0
expect_trace
same_stdout
chk check-nesting
own_counts "$PL_OUT" >"$T/own"
expect_calls "$T/own" "$ENV"
no_tracing_line
[ "$(query processes | wc -l)" = 1 ] || fail "calls in $(query processes | wc -l) processes, expected 1"
CTX="[--trace-wrappers sh -c :]"
ct_run --trace-wrappers -- sh -c :
expect_rc 0
expect_trace
expect_calls "$T/none" "$(readlink -f "$SH")"

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

# refused after the run: sh -c ran no program, env ran only sh
for wrapper in sh env; do
    CTX="[$wrapper: nothing to trace ran]"
    if [ $wrapper = sh ]; then ct_run sh -c :; else ct_run env sh -c :; fi
    one_stderr_line_error "$wrapper"
    expect_rc 2
    grep -qxF "calltrace: $(type -P $wrapper): passed through untraced as a wrapper, and it ran no program that has functions to trace (--trace-wrappers traces a wrapper's own functions, named func_0xADDRESS)" "$CT_ERR" ||
        fail "unclear refusal: $(cat "$CT_ERR")"
    [ ! -e "$CT_DIR" ] || fail "a run directory was left: $(ls -A "$CT_DIR" | tr '\n' ' ')"
done

CTX="[--no-follow timeout]"
ct_run --no-follow -- timeout 60 "$PROG"
expect_rc 2
[ "$(wc -l <"$CT_ERR")" = 1 ] || fail "not one line on stderr"
grep -q '^count work 3$' "$CT_OUT" || fail "the program did not run"
grep -q -- "--no-follow left untraced what it ran in child processes" "$CT_ERR" ||
    fail "the refusal does not name --no-follow: $(cat "$CT_ERR")"
[ ! -e "$CT_DIR" ] || fail "a run directory was left"
exit 0
