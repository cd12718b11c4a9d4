# shellcheck shell=bash
# testlib.sh -- helpers sourced by tests/e2e/*.sh
#
#   source "$(dirname "$0")/../lib/testlib.sh"
#
# Environment:
#   CALLTRACE     calltrace binary (default: <repo>/calltrace)
#   CT_TIMEOUT    seconds allowed for one traced run (default 60)
#   CT_KEEP=1     keep the temporary directory of the test (path is printed)
#   CALLTRACE_ENGINE=inject|ptrace  the engine ct_run and ct_start_bg ask for (default: none
#                 given, calltrace's default, the inject engine); a test of what an engine
#                 cannot do calls `engine_unsupported ENGINE REASON`, which skips it (exit 77)
#                 under that engine
#
# After `ct_run PROG ARGS...`:  CT_RC CT_OUT CT_ERR CT_DIR CT_TRACE
# After `plain_run PROG ARGS...`: PL_RC PL_OUT PL_ERR
# stdin of both comes from $RUN_STDIN (default /dev/null).

set -u
set -o pipefail

TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOT=$(cd "$TESTS_DIR/.." && pwd)
CALLTRACE=${CALLTRACE:-$ROOT/calltrace}
case $CALLTRACE in
/*) ;;
*/*) CALLTRACE=$PWD/$CALLTRACE ;;
*) CALLTRACE=$(command -v "$CALLTRACE" || echo "$CALLTRACE") ;;
esac
PROGS_DIR=$TESTS_DIR/progs
BUILD_DIR=$TESTS_DIR/build/progs
CHECKER=$TESTS_DIR/lib/check_trace.py
# calltrace's process name, as error messages that name a process show it: under valgrind
# (make check VALGRIND=1) the process running calltrace is valgrind's tool.
CT_COMM=calltrace
[ -n "${CALLTRACE_REAL:-}" ] && CT_COMM=memcheck-amd64-
CT_TIMEOUT=${CT_TIMEOUT:-60}
# The engine the traced runs use: the one asked for, else calltrace's default; and the option
# that asks for it, for the tests that run calltrace themselves ("$CALLTRACE" "${CT_ENGINE_OPT[@]}").
CT_ENGINE=${CALLTRACE_ENGINE:-inject}
CT_ENGINE_OPT=()
[ -n "${CALLTRACE_ENGINE:-}" ] && CT_ENGINE_OPT=("--engine=$CALLTRACE_ENGINE")
RUN_STDIN=${RUN_STDIN:-/dev/null}
TEST_NAME=$(basename "$0" .sh)
CTX=""          # prefix of failure messages, e.g. "[fib -O2]"
CT_RC="" CT_OUT="" CT_ERR="" CT_DIR="" CT_TRACE=""
PL_RC="" PL_OUT="" PL_ERR=""
_RUN_SEQ=0

T=$(mktemp -d "${TMPDIR:-/tmp}/ct-$TEST_NAME.XXXXXX") || exit 1

_cleanup() {
    if [ "${CT_KEEP:-0}" = 1 ]; then
        echo "kept temporary directory $T" >&2
    else
        chmod -R u+rwx "$T" 2>/dev/null
        rm -rf "$T"
    fi
}
trap _cleanup EXIT
cd "$T" || exit 1     # tests run in their own scratch directory

# Close file descriptors above 2 inherited from whoever started the test, so
# that the programs see exactly 0-2 and any extra fd under calltrace is a leak.
for _fd in /proc/$$/fd/*; do
    _fd=${_fd##*/}
    [ "$_fd" -gt 2 ] 2>/dev/null && eval "exec $_fd>&-" 2>/dev/null
done
unset _fd

# fail MESSAGE...: print the message (with context) and exit 1.
fail() {
    {
        printf 'FAIL%s: %s\n' "${CTX:+ $CTX}" "$*"
        if [ -n "$CT_ERR" ] && [ -s "$CT_ERR" ]; then
            echo "  stderr of the last traced run (last 15 lines):"
            tail -n 15 "$CT_ERR" | sed 's/^/  | /'
        fi
    } >&2
    exit 1
}

note() { printf '%s%s\n' "${CTX:+$CTX }" "$*"; }

# engine_unsupported ENGINE REASON...: under CALLTRACE_ENGINE=ENGINE, skip this test (exit 77,
# counted apart by run.sh) and say why.
engine_unsupported() {
    local engine=$1
    shift
    if [ "$CT_ENGINE" = "$engine" ]; then
        echo "SKIP under the $engine engine: $*"
        exit 77
    fi
}

# inject_engaged: under the inject engine, the last run really used it: no refusal, and
# neither the program nor a library was handed to the ptrace engine instead (each says so on
# stderr).
inject_engaged() {
    [ "$CT_ENGINE" = inject ] || return 0
    local said='it is traced by the ptrace engine|not supported yet|its functions get breakpoints'
    if grep -qE "$said" "$CT_ERR"; then
        fail "--engine=inject was not used: $(grep -E "$said" "$CT_ERR" | head -3)"
    fi
}

require_calltrace() {
    [ -f "$CALLTRACE" ] || fail "calltrace binary not found: $CALLTRACE (run 'make' at the repo root or set CALLTRACE)"
    [ -x "$CALLTRACE" ] || fail "calltrace binary is not executable: $CALLTRACE"
}

# build NAME OPT [EXTRA_FLAGS...] -> sets BIN to tests/build/progs/NAME-OPT[-extra]
# Compiles tests/progs/NAME.c (gcc) or NAME.cc (g++) with -g -OPT -pthread.
# Rebuilds only when the binary is older than its sources.
build() {
    local name=$1 opt=$2
    shift 2
    local src cc suffix=""
    if [ -f "$PROGS_DIR/$name.c" ]; then
        src=$PROGS_DIR/$name.c cc=${CC:-gcc}
    elif [ -f "$PROGS_DIR/$name.cc" ]; then
        src=$PROGS_DIR/$name.cc cc=${CXX:-g++}
    else
        fail "no source for test program '$name' in $PROGS_DIR"
    fi
    local f
    for f in "$@"; do suffix+=$(printf '%s' "$f" | tr -c 'A-Za-z0-9_' '_'); done
    BIN=$BUILD_DIR/$name-$opt${suffix:+-$suffix}
    if [ -x "$BIN" ] && [ "$BIN" -nt "$src" ] && [ "$BIN" -nt "$PROGS_DIR/common.h" ]; then
        return 0
    fi
    mkdir -p "$BUILD_DIR" || fail "cannot create $BUILD_DIR"
    local tmp=$BIN.tmp.$$ log=$T/build.log
    if ! "$cc" -g "-$opt" -pthread -Wall -o "$tmp" "$src" "$@" >"$log" 2>&1; then
        rm -f "$tmp"
        fail "cannot build $name at -$opt ($cc $*): $(head -c 2000 "$log")"
    fi
    mv -f "$tmp" "$BIN"
}

# build_shared NAME OPT OUT_PATH [EXTRA_FLAGS...] -> sets LIB to tests/build/progs/OUT_PATH:
# tests/progs/NAME.c as a shared library (-shared -fPIC -g -OPT), for the -l tests.
build_shared() {
    local name=$1 opt=$2 out=$3
    shift 3
    local src=$PROGS_DIR/$name.c
    [ -f "$src" ] || fail "no source for test library '$name' in $PROGS_DIR"
    LIB=$BUILD_DIR/$out
    # the flags are part of what was built: rebuild when they change
    local stamp=$LIB.flags flags="-$opt $*"
    if [ -f "$LIB" ] && [ "$LIB" -nt "$src" ] && [ "$LIB" -nt "$PROGS_DIR/common.h" ] &&
        [ "$(cat "$stamp" 2>/dev/null)" = "$flags" ]; then
        return 0
    fi
    mkdir -p "$(dirname "$LIB")" || fail "cannot create $(dirname "$LIB")"
    local tmp=$LIB.tmp.$$ log=$T/build.log
    if ! ${CC:-gcc} -g "-$opt" -shared -fPIC -Wall -o "$tmp" "$src" "$@" >"$log" 2>&1; then
        rm -f "$tmp"
        fail "cannot build lib$name at -$opt ($*): $(head -c 2000 "$log")"
    fi
    mv -f "$tmp" "$LIB"
    printf '%s' "$flags" >"$stamp"
}

_next_files() {
    _RUN_SEQ=$((_RUN_SEQ + 1))
    _OUT=$T/out.$_RUN_SEQ _ERR=$T/err.$_RUN_SEQ
}

# ct_run [CALLTRACE_OPTIONS... --] PROG [ARGS...]
# Runs calltrace with -o into a fresh run directory under $T.  Options for
# calltrace itself may be given before a "--" (if the arguments contain one).
# _prepare_run [CALLTRACE_OPTIONS... --] PROG [ARGS...]: calltrace's options go to _CT_OPTS,
# the program and its arguments to _CT_ARGS; picks the run directory and output files.
_prepare_run() {
    _CT_OPTS=() _CT_ARGS=()
    local a has_dd=0
    for a in "$@"; do [ "$a" = -- ] && has_dd=1 && break; done
    if [ $has_dd = 1 ]; then
        while [ $# -gt 0 ] && [ "$1" != -- ]; do _CT_OPTS+=("$1"); shift; done
        shift
    fi
    _CT_ARGS=("$@")
    [ -n "${CALLTRACE_ENGINE:-}" ] && _CT_OPTS=("--engine=$CALLTRACE_ENGINE" "${_CT_OPTS[@]}")
    # Both traces of every run, and every check on both (chk, query): the JSON and the
    # protobuf must show the same calls. CT_FORMAT=default leaves the choice to calltrace.
    local o
    for o in "${_CT_OPTS[@]}"; do [[ $o = --format* ]] && CT_FORMAT=default; done
    [ "${CT_FORMAT:-both}" = both ] && _CT_OPTS=(--format=both "${_CT_OPTS[@]}")
    _next_files
    CT_DIR=$T/run.$_RUN_SEQ
    CT_TRACE=$CT_DIR/trace.json
    CT_OUT=$_OUT CT_ERR=$_ERR
}

ct_run() {
    _prepare_run "$@"
    timeout -k 5 "$CT_TIMEOUT" "$CALLTRACE" -o "$CT_DIR" "${_CT_OPTS[@]}" -- "${_CT_ARGS[@]}" \
        <"$RUN_STDIN" >"$CT_OUT" 2>"$CT_ERR"
    CT_RC=$?
    if [ $CT_RC = 124 ]; then
        fail "calltrace did not finish within ${CT_TIMEOUT}s (exit $CT_RC): calltrace ${_CT_OPTS[*]} -- ${_CT_ARGS[*]}"
    fi
    return 0
}

# ct_raw ARGS...: run calltrace with exactly ARGS (no -o); sets CT_RC CT_OUT CT_ERR
ct_raw() {
    _next_files
    CT_OUT=$_OUT CT_ERR=$_ERR CT_DIR="" CT_TRACE=""
    timeout -k 5 "$CT_TIMEOUT" "$CALLTRACE" "$@" <"$RUN_STDIN" >"$CT_OUT" 2>"$CT_ERR"
    CT_RC=$?
    [ $CT_RC = 124 ] && fail "calltrace did not finish within ${CT_TIMEOUT}s: calltrace $*"
    return 0
}

# plain_run PROG [ARGS...]: the same program without calltrace.
plain_run() {
    _next_files
    PL_OUT=$_OUT PL_ERR=$_ERR
    timeout -k 5 "$CT_TIMEOUT" "$@" <"$RUN_STDIN" >"$PL_OUT" 2>"$PL_ERR"
    PL_RC=$?
    [ $PL_RC = 124 ] && fail "untraced run did not finish within ${CT_TIMEOUT}s: $*"
    return 0
}

# The protobuf trace beside $CT_TRACE (a trace.json), when the run wrote one.
_pftrace_of() {
    local dir=${CT_TRACE%/*}
    [[ $CT_TRACE = */trace.json ]] && [ -f "$dir/trace.pftrace" ] && printf '%s' "$dir/trace.pftrace"
}

# _check_both SUBCOMMAND [ARGS...]: the checker on $CT_TRACE, and on its trace.pftrace, which
# must give the same answer; sets _CHK_OUT, or fails with the checker's message.
_check_both() {
    local sub=$1
    shift
    _CHK_OUT=$(python3 "$CHECKER" "$sub" "$CT_TRACE" "$@" 2>"$T/check.err") ||
        fail "$(cat "$T/check.err" | head -c 4000)"
    local pf
    pf=$(_pftrace_of) || return 0
    local pf_out
    pf_out=$(python3 "$CHECKER" "$sub" "$pf" "$@" 2>"$T/check.err") ||
        fail "trace.pftrace: $(cat "$T/check.err" | head -c 4000)"
    [ "$pf_out" = "$_CHK_OUT" ] ||
        fail "$sub: trace.pftrace and trace.json differ (- json, + pftrace):
$(diff <(printf '%s\n' "$_CHK_OUT") <(printf '%s\n' "$pf_out") | head -30)"
}

# chk SUBCOMMAND [ARGS...]: run the checker on $CT_TRACE (and its trace.pftrace); fail with
# its message.
chk() {
    _check_both "$@"
    [ -n "$_CHK_OUT" ] && printf '%s\n' "$_CHK_OUT"
    return 0
}

# query SUBCOMMAND [ARGS...]: like chk but prints the result for capture.
query() {
    _check_both "$@"
    printf '%s\n' "$_CHK_OUT"
}

expect_rc() {
    [ "$CT_RC" = "$1" ] || fail "calltrace exited with status $CT_RC, expected $1${2:+ ($2)}"
}

# expect_trace: the run directory and a valid trace.json exist.
expect_trace() {
    [ -d "$CT_DIR" ] || fail "run directory $CT_DIR was not created (calltrace exit status $CT_RC)"
    [ -f "$CT_TRACE" ] || fail "no trace.json in $CT_DIR (it has: $(ls -A "$CT_DIR" | tr '\n' ' '))"
    chk validate
}

# same_stdout [--ignore-counts | --env]: traced stdout equals untraced stdout. --env: the
# output is an environment listing (env with no program).
same_stdout() {
    local a=$PL_OUT b=$CT_OUT
    local skip='^$.' order=keep
    [ "${1:-}" = --ignore-counts ] && skip='^count '
    # valgrind (make check VALGRIND=1) leaks its log file's descriptor into the programs the
    # traced calltrace execs: their "fds" line cannot match then. It also reorders the
    # environment calltrace passes on and adds to it (its variables below, and the test's
    # CALLTRACE_REAL and CT_REPORT_DIR), and env's "_" is the path that ran it.
    [ -n "${CALLTRACE_REAL:-}" ] && skip="$skip\\|^fds "
    if [ -n "${CALLTRACE_REAL:-}" ] && [ "${1:-}" = --env ]; then
        skip="$skip\\|^\\(GLIBCPP_FORCE_NEW\\|GLIBCXX_FORCE_NEW\\|LD_PRELOAD\\|LD_LIBRARY_PATH\\|CALLTRACE_REAL\\|CT_REPORT_DIR\\|_\\)="
        order=sort
    fi
    if [ "$skip" != '^$.' ]; then
        grep -v "$skip" "$PL_OUT" | if [ $order = sort ]; then sort; else cat; fi >"$T/pl.filtered"
        grep -v "$skip" "$CT_OUT" | if [ $order = sort ]; then sort; else cat; fi >"$T/ct.filtered"
        a=$T/pl.filtered b=$T/ct.filtered
    fi
    if ! cmp -s "$a" "$b"; then
        fail "stdout under calltrace differs from the untraced run (- untraced, + traced):
$(diff -u "$a" "$b" | tail -n +3 | head -40)"
    fi
}

# same_rc: calltrace exited like the untraced program.
same_rc() {
    [ "$CT_RC" = "$PL_RC" ] || fail "calltrace exited with status $CT_RC, the untraced program with $PL_RC"
}

# standard_case PROG_BIN [ARGS...]: the common checks of a deterministic program:
# same exit status and stdout as untraced, valid trace, proper nesting, and the
# trace's counts equal the program's own "count" lines.
standard_case() {
    plain_run "$@"
    ct_run "$@"
    expect_trace
    same_rc
    same_stdout
    chk check-nesting
    chk check-counts -f "$CT_OUT"
}

# one_stderr_line_error: the error contract for bad input.
#   exit != 0, exactly one line on stderr, starting "calltrace: "
one_stderr_line_error() {
    local what=$1
    [ "$CT_RC" != 0 ] || fail "$what: calltrace exited 0, expected an error"
    local n
    n=$(wc -l <"$CT_ERR")
    if [ "$n" != 1 ] || ! head -n 1 "$CT_ERR" | grep -q '^calltrace: .*: '; then
        fail "$what: expected exactly one stderr line 'calltrace: WHAT: WHY', got $n line(s):
$(head -n 10 "$CT_ERR" | sed 's/^/  | /')"
    fi
    [ -s "$CT_OUT" ] && fail "$what: calltrace wrote to stdout: $(head -c 300 "$CT_OUT")"
    return 0
}

# proc_state PID: the state letter from /proc/PID/stat (empty if gone)
proc_state() {
    local s
    s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    s=${s##*) }
    printf '%s' "${s%% *}"
}

# wait_until TIMEOUT_S DESCRIPTION COMMAND...: poll COMMAND every 10 ms
wait_until() {
    local limit=$(($1 * 100)) what=$2 i=0
    shift 2
    until "$@"; do
        i=$((i + 1))
        [ $i -ge $limit ] && fail "timed out after ${limit}0 ms waiting for: $what"
        sleep 0.01
    done
}

# within S COMMAND...: like wait_until, but returns false if COMMAND never held in S seconds,
# for a test that has more to say (or to clean up) before it fails
within() {
    local end=$((SECONDS + $1))
    shift
    until "$@"; do
        [ "$SECONDS" -ge "$end" ] && return 1
        sleep 0.01
    done
}

# ---- background runs, for the fault tests (tests/e2e/5x-*.sh) -----------------------------

BG=""
_kill_bg() {
    [ -n "$BG" ] && kill -KILL "$BG" 2>/dev/null
    [ -n "${BG_PROG:-}" ] && kill -KILL "$BG_PROG" 2>/dev/null
    return 0
}
trap '_kill_bg; _cleanup' EXIT

# ct_start_bg [CALLTRACE_OPTIONS... --] PROG [ARGS...]: like ct_run, in the background, with
# calltrace's own pid in BG (no timeout wrapper in between, so signals reach calltrace itself).
ct_start_bg() {
    _prepare_run "$@"
    "$CALLTRACE" -o "$CT_DIR" "${_CT_OPTS[@]}" -- "${_CT_ARGS[@]}" <"$RUN_STDIN" >"$CT_OUT" \
        2>"$CT_ERR" &
    BG=$!
}

bg_done() { ! kill -0 "$BG" 2>/dev/null; }

# ct_wait_bg LIMIT_S: waits (bounded) for the background calltrace; sets CT_RC.
ct_wait_bg() {
    wait_until "$1" "calltrace (pid $BG) to finish" bg_done
    wait "$BG"
    CT_RC=$?
    BG=""
}

# progress FILE: the 8-byte counter a test program keeps in FILE (0 before it exists).
progress() {
    local v
    v=$(od -An -tu8 -N8 "$1" 2>/dev/null | tr -d ' ')
    echo "${v:-0}"
}
progress_ge() { [ "$(progress "$1")" -ge "$2" ]; }

# pid_ended PID: the process is gone or a zombie.
pid_ended() {
    local s
    s=$(proc_state "$1")
    [ -z "$s" ] || [ "$s" = Z ]
}

# now_ms: a monotonic-enough wall clock in milliseconds, for the figures tests print.
now_ms() { echo $(($(date +%s%N) / 1000000)); }
