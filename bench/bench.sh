#!/usr/bin/env bash
# bench/bench.sh - cost per traced call of calltrace, ltrace and uftrace.
#
# Builds bench/fib.c and bench/leaf.c (-O2 -g) into a temporary directory and,
# in one run, times each workload untraced and under every tracer that is
# installed, all pinned to CPU 0 with taskset (tracer and tracee share it),
# and again with the tracer on CPU 1 and the program on CPU 0 ("2cpu").
# Then it times the startup and teardown of each tracer on a generated
# program with 10,000 functions whose main() returns at once.
#
#   cost per call = (traced wall time - untraced wall time) / traced calls
#
# Calls counted are calls of functions of the executable that the tracer
# traces (nothing in shared libraries: ltrace runs with -L, uftrace with
# --no-libcall):
#   fib N    fib() is called 2*fib(N+1)-1 times; + 1 for main() for calltrace
#            and uftrace, which trace every function; ltrace -x fib traces
#            fib() only.
#   leaf M   leaf() is called M times; + 1 for main() likewise.
# The calltrace count is read back from trace.json and the uftrace count from
# `uftrace report`; the ltrace count is checked with `ltrace -c` on a small run.
# The cost includes the tracer's startup, which the long runs amortise.
#
# calltrace runs with its default engine (inject, "calltrace": it records inside the program)
# and with --engine=ptrace ("ct ptrace", a breakpoint stop per entry and return). With two
# CPUs or more, "ct 2cpu" runs calltrace on CPU 1 and the program on CPU 0 (through
# bench/pin_cpu.c, whose main() is one more traced call): the program no longer waits while
# calltrace drains its rings on its CPU; "uftrace 2cpu" does the same for uftrace, whose
# recorder then runs on CPU 1. If bench/tramp-bench is built (make bench), the inject
# engine's trampolines are also timed alone, inside one process, with no consumer.
# The wall time of calltrace includes writing trace.json at the end, which uftrace record and
# ltrace do not do: each calltrace run is then exported again (`calltrace export`, timed
# apart, "export s"), and "rec us/call" is the cost per call without it.
#
# Each traced run takes 1-10 s with the default sizes, so each tracer gets its
# own N and M (ltrace costs ~100 us a call, calltrace --engine=ptrace ~25 us,
# uftrace ~0.2 us, calltrace ~0.03 us).
# Every size is an environment variable; see --help.
#
# A tracer that is not installed (or ./calltrace not built yet) is shown as N/A;
# one that fails is shown as FAIL with its error output.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$SCRIPT_DIR/.." && pwd)

usage()
{
    cat <<EOF
usage: bench/bench.sh [--quick] [--repeat N] [--no-startup] [-h]

  --quick        smaller sizes, 1 repetition (a smoke test, ~30 s)
  --repeat N     run each measurement N times and keep the median (default 3)
  --no-startup   skip the startup benchmark (it compiles a 10,000-function file)
  -h, --help     this help

Environment (defaults in brackets):
  CALLTRACE        calltrace binary [$ROOT/calltrace]
  CC               C compiler [cc]
  FIB_N, LEAF_M    sizes for calltrace (its default engine) [32, 7000000]
  PTRACE_FIB_N, PTRACE_LEAF_M     sizes for calltrace --engine=ptrace [23, 100000]
  LTRACE_FIB_N, LTRACE_LEAF_M     sizes for ltrace [20, 20000]
  UFTRACE_FIB_N, UFTRACE_LEAF_M   sizes for uftrace [32, 7000000]
  STARTUP_FUNCS    functions in the startup program [10000]
  NO_HYPERFINE=1   time with the shell clock even if hyperfine is installed
  KEEP_TMP=1       keep the temporary directory
EOF
}

QUICK=0
STARTUP=1
REPEAT=${REPEAT:-}
while [ $# -gt 0 ]; do
    case $1 in
    --quick) QUICK=1 ;;
    --repeat)
        [ $# -ge 2 ] || { usage >&2; exit 2; }
        REPEAT=$2
        shift
        ;;
    --repeat=*) REPEAT=${1#*=} ;;
    --no-startup) STARTUP=0 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
    shift
done

if [ "$QUICK" = 1 ]; then
    : "${REPEAT:=1}" "${FIB_N:=28}" "${LEAF_M:=2000000}" "${LTRACE_FIB_N:=17}" \
        "${LTRACE_LEAF_M:=5000}" "${UFTRACE_FIB_N:=28}" "${UFTRACE_LEAF_M:=2000000}" \
        "${PTRACE_FIB_N:=20}" "${PTRACE_LEAF_M:=25000}" "${STARTUP_FUNCS:=2000}"
fi
: "${REPEAT:=3}" "${FIB_N:=32}" "${LEAF_M:=7000000}" "${LTRACE_FIB_N:=20}" \
    "${LTRACE_LEAF_M:=20000}" "${UFTRACE_FIB_N:=32}" "${UFTRACE_LEAF_M:=7000000}" \
    "${PTRACE_FIB_N:=23}" "${PTRACE_LEAF_M:=100000}" "${STARTUP_FUNCS:=10000}"
CALLTRACE=${CALLTRACE:-$ROOT/calltrace}
CC=${CC:-cc}
CFLAGS=(-O2 -g)

for v in REPEAT FIB_N LEAF_M LTRACE_FIB_N LTRACE_LEAF_M UFTRACE_FIB_N UFTRACE_LEAF_M \
    PTRACE_FIB_N PTRACE_LEAF_M STARTUP_FUNCS; do
    case ${!v} in
    '' | *[!0-9]* | 0) echo "bench.sh: $v must be a positive integer, not '${!v}'" >&2; exit 2 ;;
    esac
done

note() { printf '%s\n' "$*" >&2; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/calltrace-bench.XXXXXX")
cleanup()
{
    if [ "${KEEP_TMP:-0}" = 1 ]; then
        note "bench.sh: kept $TMP"
    else
        rm -rf "$TMP"
    fi
}
trap cleanup EXIT
# Run everything from the temporary directory: -pg binaries drop gmon.out
# there, and nothing lands in the source tree.
cd "$TMP"

PIN=()
if command -v taskset >/dev/null 2>&1 && taskset -c 0 true 2>/dev/null; then
    PIN=(taskset -c 0)
else
    note "bench.sh: taskset -c 0 unavailable, runs are not pinned"
fi

HYPERFINE=
if [ "${NO_HYPERFINE:-0}" != 1 ] && command -v hyperfine >/dev/null 2>&1 &&
    command -v python3 >/dev/null 2>&1; then
    HYPERFINE=hyperfine
fi

have() { command -v "$1" >/dev/null 2>&1; }

# fibnum K: the K-th Fibonacci number.
fibnum()
{
    local a=0 b=1 i t
    for ((i = 0; i < $1; i++)); do
        t=$((a + b))
        a=$b
        b=$t
    done
    echo "$a"
}

# fib_calls N: calls to fib() made by fib(N).
fib_calls() { echo $((2 * $(fibnum $(($1 + 1))) - 1)); }

now()
{
    if [ -n "${EPOCHREALTIME:-}" ]; then
        echo "${EPOCHREALTIME/,/.}"
    else
        date +%s.%N
    fi
}

# timeit PREP CMD...: run CMD (pinned) REPEAT times, stdin from /dev/null and
# output to $TMP/last.out and $TMP/last.err, removing the path PREP (if not
# empty) before each run. Sets T to the median wall time in seconds. Returns
# non-zero, leaving the error output in $TMP/last.err, if a run fails.
T=
timeit()
{
    local prep=$1 i t0 t1 cmd
    shift
    T=
    if [ -n "$HYPERFINE" ]; then
        printf -v cmd '%q ' "${PIN[@]}" "$@"
        local hf=(hyperfine --shell bash --style none --runs "$REPEAT" --export-json "$TMP/hf.json")
        if [ -n "$prep" ]; then
            hf+=(--prepare "rm -rf $(printf '%q' "$prep")")
        fi
        # hyperfine discards the command's output; keep its own on failure.
        if ! "${hf[@]}" -- "$cmd" >"$TMP/last.out" 2>"$TMP/last.err" </dev/null; then
            cat "$TMP/last.out" >>"$TMP/last.err"
            return 1
        fi
        T=$(python3 -c 'import json,sys; print("%.6f" % json.load(open(sys.argv[1]))["results"][0]["median"])' \
            "$TMP/hf.json")
        return 0
    fi
    local times=()
    for ((i = 0; i < REPEAT; i++)); do
        [ -z "$prep" ] || rm -rf "$prep"
        t0=$(now)
        if ! "${PIN[@]}" "$@" >"$TMP/last.out" 2>"$TMP/last.err" </dev/null; then
            echo "(command failed: $*)" >>"$TMP/last.err"
            return 1
        fi
        t1=$(now)
        times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')")
    done
    T=$(printf '%s\n' "${times[@]}" | sort -g | awk '{ v[NR] = $1 }
        END { if (NR % 2) m = v[(NR + 1) / 2]; else m = (v[NR / 2] + v[NR / 2 + 1]) / 2
              printf "%.6f", m }')
}

show_err()
{
    note "---- $1 failed; its error output:"
    tail -n 15 "$TMP/last.err" >&2 || true
    note "----"
}

# Untraced baselines, cached per "binary arg".
declare -A BASE=()
base_time()
{
    local key="$1 $2"
    if [ -z "${BASE[$key]:-}" ]; then
        if ! timeit "" "$1" "$2"; then
            show_err "untraced $key"
            return 1
        fi
        BASE[$key]=$T
    fi
    T=${BASE[$key]}
}

# Result rows: workload|method|arg|calls|wall|base|us_per_call|note|inproc|export
ROWS=()
# INPROC: the in-program cost of the row being added (see inproc_per_call), then reset;
# EXPORT: the time calltrace export took on its run directory, likewise.
INPROC=-
EXPORT=-
add_row()
{
    ROWS+=("$1|$2|$3|$4|$5|$6|$7|${8:-}|$INPROC|$EXPORT")
    INPROC=-
    EXPORT=-
}

# inproc_per_call CALLS BIN ARG CMD...: REPEAT more runs of CMD with BENCH_INPROC=1, where
# the program prints the time its calls took, measured inside it; sets INPROC to (the median
# traced - the median untraced) / CALLS in ns. It leaves out the tracer's start-up and end
# (writing trace.json).
declare -A INBASE=()
inproc_one() { BENCH_INPROC=1 "${PIN[@]}" "$@" 2>&1 >/dev/null </dev/null | awk '/^inproc_ns / { v = $2 } END { print v }'; }
inproc_ns()
{
    local i v=()
    for ((i = 0; i < REPEAT; i++)); do
        rm -rf "$TMP/ct-run" "$TMP/uf-data"
        v+=("$(inproc_one "$@")")
    done
    printf '%s\n' "${v[@]}" | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}
inproc_per_call()
{
    local calls=$1 bin=$2 arg=$3 t
    shift 3
    INPROC=-
    [ -n "${INBASE["$bin $arg"]:-}" ] || INBASE["$bin $arg"]=$(inproc_ns "$bin" "$arg")
    t=$(inproc_ns "$@")
    if [ -n "${INBASE["$bin $arg"]}" ] && [ -n "$t" ]; then
        INPROC=$(awk -v t="$t" -v b="${INBASE["$bin $arg"]}" -v c="$calls" \
            'BEGIN { printf "%.1f", (t - b) / c }')
    fi
}
per_call()
{
    awk -v w="$1" -v b="$2" -v c="$3" 'BEGIN { printf "%.3f", (w - b) / c * 1e6 }'
}

# count_trace_calls TRACE.JSON NAME...: number of calls of NAMEs in a Chrome
# trace ("X" complete events or "B" begin events); empty if it cannot tell.
count_trace_calls()
{
    have python3 || return 0
    python3 - "$@" <<'PY' 2>/dev/null || true
import json, sys
path, names = sys.argv[1], set(sys.argv[2:])
with open(path) as f:
    data = json.load(f)
events = data.get("traceEvents", []) if isinstance(data, dict) else data
n = 0
for e in events:
    if isinstance(e, dict) and e.get("ph") in ("X", "B"):
        name = str(e.get("name", "")).split("(")[0].strip()
        if name in names:
            n += 1
print(n)
PY
}

# uftrace_calls DIR NAME...: sum of the Calls column of `uftrace report`.
uftrace_calls()
{
    local dir=$1
    shift
    uftrace report -d "$dir" 2>/dev/null | awk -v names="$*" '
        BEGIN { split(names, a, " "); for (i in a) want[a[i]] = 1 }
        ($NF in want) && $(NF - 1) ~ /^[0-9]+$/ { n += $(NF - 1) }
        END { print n + 0 }'
}

###########################################################################
# Build

note "bench.sh: building the benchmark programs in $TMP ($CC ${CFLAGS[*]})"
for p in fib leaf pin_cpu; do
    "$CC" "${CFLAGS[@]}" -o "$TMP/$p" "$SCRIPT_DIR/$p.c"
done
"$TMP/fib" 10 | grep -q 'fib(10) = 55' || { note "bench.sh: fib is broken"; exit 1; }

cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
echo "calltrace benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine:  $(uname -srm), ${cpu:-unknown CPU}, $(nproc) CPUs"
echo "pinning:  ${PIN[*]:-none}; timing: ${HYPERFINE:-shell clock}, median of $REPEAT"
ltrace_v=none
have ltrace && ltrace_v=$(ltrace -V 2>/dev/null | awk 'NR == 1 { sub(/\.$/, "", $3); print $3 }')
uftrace_v=none
have uftrace && uftrace_v=$(uftrace --version 2>/dev/null | awk 'NR == 1 { print $2 }')
echo "tools:    calltrace: $([ -x "$CALLTRACE" ] && echo "$CALLTRACE" || echo "not built")," \
    "ltrace: ${ltrace_v:-?}, uftrace: ${uftrace_v:-?}"
echo

###########################################################################
# calltrace

# bench_calltrace WORKLOAD ARG CALLS NAMES [METHOD ENGINE_OPTION [WRAPPER...]]
bench_calltrace()
{
    local wl=$1 arg=$2 calls=$3 names=$4 method=${5:-calltrace} engine=${6:-} wrap=${7:-} out n
    if [ ! -x "$CALLTRACE" ]; then
        add_row "$wl" "$method" "$arg" - N/A N/A N/A "not built (run make)"
        return
    fi
    base_time "$TMP/$wl" "$arg" || return
    local base=$T
    out=$TMP/ct-run
    # shellcheck disable=SC2086  # engine is one word or none
    # shellcheck disable=SC2086  # wrap is a word list or none
    if ! timeit "$out" "$CALLTRACE" -q $engine -o "$out" $wrap "$TMP/$wl" "$arg"; then
        show_err "$method $wl $arg"
        add_row "$wl" "$method" "$arg" "$calls" FAIL "$base" FAIL "see stderr"
        return
    fi
    local wall=$T note="expected count"
    # trace.json again, timed apart: the part of the wall time uftrace record does not do. The
    # run's files go to the disk first, so that the export does not wait for them.
    sync "$out"/* 2>/dev/null || true
    if timeit "" "$CALLTRACE" export "$out"; then
        EXPORT=$T
    fi
    if [ -f "$out/trace.json" ]; then
        # shellcheck disable=SC2086  # names is a word list
        n=$(count_trace_calls "$out/trace.json" $names)
        if [ -n "$n" ] && [ "$n" != 0 ]; then
            [ "$n" = "$calls" ] && note="" || note="trace.json has $n, expected $calls"
            calls=$n
        fi
    else
        note="no trace.json!"
    fi
    rm -rf "$out"
    # shellcheck disable=SC2086
    inproc_per_call "$calls" "$TMP/$wl" "$arg" "$CALLTRACE" -q $engine -o "$out" $wrap "$TMP/$wl" "$arg"
    add_row "$wl" "$method" "$arg" "$calls" "$wall" "$base" "$(per_call "$wall" "$base" "$calls")" "$note"
}

CT_OK=0
if [ -x "$CALLTRACE" ]; then
    # A small run first, to fail fast and clearly.
    if "${PIN[@]}" "$CALLTRACE" -q -o "$TMP/ct-check" "$TMP/fib" 10 >"$TMP/last.out" \
        2>"$TMP/last.err" </dev/null && grep -q 'fib(10) = 55' "$TMP/last.out" &&
        [ -f "$TMP/ct-check/trace.json" ]; then
        CT_OK=1
    else
        show_err "calltrace check run (calltrace -q -o DIR fib 10)"
    fi
fi
# two_cpus: can the tracer go on CPU 1 and the program on CPU 0?
two_cpus() { [ "${#PIN[@]}" -gt 0 ] && [ "$(nproc)" -ge 2 ] && taskset -c 1 true 2>/dev/null; }

# on_cpu1 CMD...: CMD with the tracer pinned to CPU 1 instead of CPU 0 (the baselines, cached,
# were measured on CPU 0).
on_cpu1()
{
    local saved=("${PIN[@]}")
    PIN=(taskset -c 1)
    "$@"
    PIN=("${saved[@]}")
}

if [ "$CT_OK" = 1 ] || [ ! -x "$CALLTRACE" ]; then
    note "bench.sh: calltrace fib $FIB_N, leaf $LEAF_M"
    bench_calltrace fib "$FIB_N" $(($(fib_calls "$FIB_N") + 1)) "fib main"
    bench_calltrace leaf "$LEAF_M" $((LEAF_M + 1)) "leaf main"
else
    add_row fib calltrace "$FIB_N" - FAIL - FAIL "check run failed"
    add_row leaf calltrace "$LEAF_M" - FAIL - FAIL "check run failed"
fi
if [ "$CT_OK" = 1 ] && two_cpus; then
    note "bench.sh: the same, calltrace on CPU 1 and the program on CPU 0"
    on_cpu1 bench_calltrace fib "$FIB_N" $(($(fib_calls "$FIB_N") + 2)) "fib main" \
        "ct 2cpu" "" "$TMP/pin_cpu 0"
    on_cpu1 bench_calltrace leaf "$LEAF_M" $((LEAF_M + 2)) "leaf main" \
        "ct 2cpu" "" "$TMP/pin_cpu 0"
fi
if [ "$CT_OK" = 1 ]; then
    note "bench.sh: calltrace --engine=ptrace fib $PTRACE_FIB_N, leaf $PTRACE_LEAF_M"
    bench_calltrace fib "$PTRACE_FIB_N" $(($(fib_calls "$PTRACE_FIB_N") + 1)) "fib main" \
        "ct ptrace" --engine=ptrace
    bench_calltrace leaf "$PTRACE_LEAF_M" $((PTRACE_LEAF_M + 1)) "leaf main" \
        "ct ptrace" --engine=ptrace
fi

###########################################################################
# ltrace: -x FUNC plants a breakpoint on FUNC in the executable, -L drops the
# PLT (library call) tracing, -o /dev/null still formats every call.

bench_ltrace()
{
    local wl=$1 arg=$2 calls=$3 check_arg=$4 check_calls=$5 n
    if ! have ltrace; then
        add_row "$wl" ltrace "$arg" - N/A N/A N/A "not installed"
        return
    fi
    local note=""
    # Check that ltrace really sees every call (its -c summary).
    if ltrace -L -c -x "$wl" -o "$TMP/ltrace-c" "$TMP/$wl" "$check_arg" >/dev/null 2>&1 </dev/null; then
        n=$(awk -v f="$wl" '$NF == f { print $4 }' "$TMP/ltrace-c")
        [ "${n:-0}" = "$check_calls" ] ||
            note="ltrace -c counted ${n:-0} of $check_calls calls at $check_arg"
    else
        note="ltrace -c check failed"
    fi
    base_time "$TMP/$wl" "$arg" || return
    local base=$T
    if ! timeit "" ltrace -L -x "$wl" -o /dev/null "$TMP/$wl" "$arg"; then
        show_err "ltrace $wl $arg"
        add_row "$wl" ltrace "$arg" "$calls" FAIL "$base" FAIL "see stderr"
        return
    fi
    local wall=$T
    inproc_per_call "$calls" "$TMP/$wl" "$arg" ltrace -L -x "$wl" -o /dev/null "$TMP/$wl" "$arg"
    add_row "$wl" ltrace "$arg" "$calls" "$wall" "$base" "$(per_call "$wall" "$base" "$calls")" "$note"
}

note "bench.sh: ltrace fib $LTRACE_FIB_N, leaf $LTRACE_LEAF_M"
bench_ltrace fib "$LTRACE_FIB_N" "$(fib_calls "$LTRACE_FIB_N")" 12 "$(fib_calls 12)"
bench_ltrace leaf "$LTRACE_LEAF_M" "$LTRACE_LEAF_M" 1000 1000

###########################################################################
# uftrace: needs its hooks in the binary. Tried in order, the first whose
# check run records every call wins:
#   dyn  plain -O2 binary, `uftrace record -P .` patches every function at
#        run time (full dynamic tracing; uftrace built with capstone);
#   pfe  built with -fpatchable-function-entry=5, `uftrace record -P .`;
#   pg   built with -pg (mcount), plain `uftrace record`.

uftrace_variant()
{
    local wl=$1 check_arg=$2 check_calls=$3 v bin opts n
    for v in dyn pfe pg; do
        case $v in
        dyn) bin=$TMP/$wl opts="-P ." ;;
        pfe) bin=$TMP/$wl-pfe opts="-P ." ;;
        pg) bin=$TMP/$wl-pg opts="" ;;
        esac
        if [ ! -x "$bin" ]; then
            case $v in
            pfe) "$CC" "${CFLAGS[@]}" -fpatchable-function-entry=5 -o "$bin" "$SCRIPT_DIR/$wl.c" 2>/dev/null ||
                continue ;;
            pg) "$CC" "${CFLAGS[@]}" -pg -o "$bin" "$SCRIPT_DIR/$wl.c" 2>/dev/null || continue ;;
            esac
        fi
        rm -rf "$TMP/uf-check"
        # shellcheck disable=SC2086  # opts is a word list
        uftrace record --no-libcall $opts -d "$TMP/uf-check" "$bin" "$check_arg" \
            >/dev/null 2>&1 </dev/null || continue
        n=$(uftrace_calls "$TMP/uf-check" "$wl")
        if [ "$n" = "$check_calls" ]; then
            echo "$v"
            return 0
        fi
    done
    return 1
}

# bench_uftrace WORKLOAD ARG CALLS CHECK_ARG CHECK_CALLS [SUFFIX WRAPPER...]
bench_uftrace()
{
    local wl=$1 arg=$2 calls=$3 check_arg=$4 check_calls=$5 suffix=${6:-} v bin n
    local wrap=("${@:7}")
    if ! have uftrace; then
        add_row "$wl" "uftrace$suffix" "$arg" - N/A N/A N/A "not installed"
        return
    fi
    if ! v=$(uftrace_variant "$wl" "$check_arg" "$check_calls"); then
        add_row "$wl" uftrace "$arg" - N/A N/A N/A "no build variant traced all calls"
        return
    fi
    local opts=()
    case $v in
    dyn) bin=$TMP/$wl opts=(-P .) ;;
    pfe) bin=$TMP/$wl-pfe opts=(-P .) ;;
    pg) bin=$TMP/$wl-pg ;;
    esac
    base_time "$bin" "$arg" || return
    local base=$T
    if ! timeit "$TMP/uf-data" uftrace record --no-libcall "${opts[@]}" -d "$TMP/uf-data" \
        "${wrap[@]}" "$bin" "$arg"; then
        show_err "uftrace $wl $arg"
        add_row "$wl" "uftrace ($v)$suffix" "$arg" "$calls" FAIL "$base" FAIL "see stderr"
        return
    fi
    local wall=$T note=""
    n=$(uftrace_calls "$TMP/uf-data" "$wl" main)
    if [ "$n" != 0 ]; then
        [ "$n" = "$calls" ] || note="uftrace report has $n, expected $calls"
        calls=$n
    fi
    rm -rf "$TMP/uf-data"
    inproc_per_call "$calls" "$bin" "$arg" uftrace record --no-libcall "${opts[@]}" \
        -d "$TMP/uf-data" "${wrap[@]}" "$bin" "$arg"
    rm -rf "$TMP/uf-data"
    add_row "$wl" "uftrace ($v)$suffix" "$arg" "$calls" "$wall" "$base" \
        "$(per_call "$wall" "$base" "$calls")" "$note"
}

note "bench.sh: uftrace fib $UFTRACE_FIB_N, leaf $UFTRACE_LEAF_M"
bench_uftrace fib "$UFTRACE_FIB_N" $(($(fib_calls "$UFTRACE_FIB_N") + 1)) 10 "$(fib_calls 10)"
bench_uftrace leaf "$UFTRACE_LEAF_M" $((UFTRACE_LEAF_M + 1)) 1000 1000
if two_cpus; then
    note "bench.sh: the same, uftrace on CPU 1 and the program on CPU 0"
    on_cpu1 bench_uftrace fib "$UFTRACE_FIB_N" $(($(fib_calls "$UFTRACE_FIB_N") + 1)) 10 \
        "$(fib_calls 10)" " 2cpu" "$TMP/pin_cpu" 0
    on_cpu1 bench_uftrace leaf "$UFTRACE_LEAF_M" $((UFTRACE_LEAF_M + 1)) 1000 1000 " 2cpu" \
        "$TMP/pin_cpu" 0
fi

###########################################################################
# The inject engine's trampolines alone (bench/tramp-bench, built by make bench): no
# calltrace, no consumer, the ring emptied between repetitions.

TRAMP_BENCH=$SCRIPT_DIR/tramp-bench
if [ -x "$TRAMP_BENCH" ]; then
    note "bench.sh: the trampolines alone ($TRAMP_BENCH)"
    "${PIN[@]}" "$TRAMP_BENCH" 18 500 1 >"$TMP/tramp.out" 2>&1 || show_err tramp-bench
fi

###########################################################################
# Table

ratio_to_calltrace()
{
    local wl=$1 us=$2 r ct=""
    for r in "${ROWS[@]}"; do
        IFS='|' read -r w m _ _ _ _ u _ <<<"$r"
        [ "$w" = "$wl" ] && [ "$m" = calltrace ] && ct=$u
    done
    case "$ct|$us" in
    *N/A* | *FAIL* | "|"* | *"|") echo - ;;
    *)
        awk -v a="$us" -v b="$ct" 'BEGIN {
            if (b <= 0) print "-"
            else if (a / b >= 0.1) printf "%.2fx", a / b
            else printf "%.2gx", a / b }'
        ;;
    esac
}

# rec_per_call WALL EXPORT BASE CALLS: us per call without the export, or -.
rec_per_call()
{
    case "$1|$2|$3|$4" in
    *N/A* | *FAIL* | *-\|* | *\|-) echo - ;;
    *) awk -v w="$1" -v e="$2" -v b="$3" -v c="$4" 'BEGIN { printf "%.3f", (w - e - b) / c * 1e6 }' ;;
    esac
}

echo "Cost per traced call (wall time, pinned to CPU 0; 2cpu: the tracer on CPU 1)"
printf '%-5s %-15s %9s %9s %9s %10s %10s %9s %11s %9s %11s  %s\n' \
    workload method arg calls "wall s" "untraced s" "us/call" "vs ctrace" "in-prog ns" \
    "export s" "rec us/call" note
for r in "${ROWS[@]}"; do
    IFS='|' read -r wl m arg calls wall base us note inproc export <<<"$r"
    printf '%-5s %-15s %9s %9s %9s %10s %10s %9s %11s %9s %11s  %s\n' \
        "$wl" "$m" "$arg" "$calls" "$wall" "$base" "$us" "$(ratio_to_calltrace "$wl" "$us")" \
        "$inproc" "$export" "$(rec_per_call "$wall" "$export" "$base" "$calls")" "$note"
done | sed 's/ *$//'
echo
echo "calls: functions of the executable entered (fib N: 2*fib(N+1)-1 calls of fib," \
    "+1 for main except under ltrace -x fib; leaf M: M calls of leaf, +1 for main likewise)."
echo "us/call = (wall - untraced) / calls; 'vs ctrace' = us/call divided by calltrace's."
echo "in-prog ns = (time of the calls measured inside the program, traced - untraced) / calls,"
echo "medians of $REPEAT runs: what the program pays, without the tracer's start-up and its"
echo "writing of the trace."
echo "export s = calltrace export RUN (writing trace.json again from the record);"
echo "rec us/call = (wall - export - untraced) / calls: calltrace's cost without writing trace.json."
if [ -s "$TMP/tramp.out" ]; then
    echo
    echo "The inject engine's trampolines alone, in one process (bench/tramp-bench 18 500 1: fib 18, best of 500, a 1 MiB ring):"
    cat "$TMP/tramp.out"
fi

###########################################################################
# Startup: a program with STARTUP_FUNCS functions whose main returns at once.

[ "$STARTUP" = 1 ] || exit 0

echo
note "bench.sh: generating and compiling $STARTUP_FUNCS functions (takes a few seconds)"
"$SCRIPT_DIR/gen-funcs.sh" "$STARTUP_FUNCS" >"$TMP/many.c"
"$CC" "${CFLAGS[@]}" -o "$TMP/many" "$TMP/many.c"

SROWS=()
startup_row()
{
    local m=$1 prep=$2
    shift 2
    if timeit "$prep" "$@"; then
        SROWS+=("$m|$T")
    else
        show_err "$m startup"
        SROWS+=("$m|FAIL")
    fi
}
startup_row untraced "" "$TMP/many"
if [ ! -x "$CALLTRACE" ]; then
    SROWS+=("calltrace|N/A")
else
    startup_row calltrace "$TMP/ct-many" "$CALLTRACE" -q -o "$TMP/ct-many" "$TMP/many"
    startup_row "ct ptrace" "$TMP/ct-many" "$CALLTRACE" -q --engine=ptrace -o "$TMP/ct-many" \
        "$TMP/many"
fi
if have ltrace; then
    startup_row "ltrace -x @MAIN" "" ltrace -L -x '@MAIN' -o /dev/null "$TMP/many"
else
    SROWS+=("ltrace -x @MAIN|N/A")
fi
if have uftrace; then
    startup_row "uftrace -P ." "$TMP/uf-many" uftrace record --no-libcall -P . -d "$TMP/uf-many" \
        "$TMP/many"
else
    SROWS+=("uftrace -P .|N/A")
fi

echo "Startup + teardown, $STARTUP_FUNCS functions, main returns at once (median of $REPEAT)"
printf '%-16s %9s %12s %14s\n' method "wall s" "overhead ms" "us/function"
base=${SROWS[0]#*|}
for r in "${SROWS[@]}"; do
    IFS='|' read -r m wall <<<"$r"
    case "$wall|$base" in
    *N/A* | *FAIL*) printf '%-16s %9s %12s %14s\n' "$m" "$wall" - - ;;
    *)
        awk -v m="$m" -v w="$wall" -v b="$base" -v n="$STARTUP_FUNCS" 'BEGIN {
            printf "%-16s %9.4f %12.1f %14.2f\n", m, w, (w - b) * 1e3, (w - b) / n * 1e6 }'
        ;;
    esac
done
