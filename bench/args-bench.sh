#!/usr/bin/env bash
# bench/args-bench.sh - what -A (arguments) and -A -R (and return values) add to calltrace's
# cost per call, for scalar arguments in registers, a double (PTRACE_GETFPREGS) and a char *
# string (one process_vm_readv).
#
# Builds bench/args.c (-O2 -g) and measures the CPU time (user + sys of calltrace and the
# program), pinned to CPU 0 with taskset (tracer and tracee share it), of each workload
# untraced, under calltrace, calltrace -A and calltrace -A -R; keeps the median of REPEAT runs
# (default 3). CPU time, not wall time: a busy machine's other processes do not count.
#
#   engine cost per call = (traced CPU time - untraced CPU time - output time) / M
#   added by -A          = engine cost with -A - engine cost without
#   output per call      = output time / M
# where output time is what `calltrace export RUN` takes to write that run's trace.json (with
# the formatted values) and call folders again: the part done after the program ended, outside
# the stops. Every run keeps a single call folder per function (--max-call-dirs 1): folders cost
# a fixed time (a mkdir and a file each, at most 1,000 per function by default) that depends on
# the file system far more than on calltrace.
#
# With ENGINE=inject (--engine=inject; default ptrace), a second table: the loop's own time per
# call inside the program (it reads the clock around blocks of its loop and keeps the fastest),
# untraced and traced: what the trampolines cost the program, calltrace's draining aside (on
# another CPU, rings of RING_SIZE [256M]: the program never waits for room).
#
# Environment: CALLTRACE [./calltrace], CC [cc], M calls per run [100000], REPEAT [3],
# ENGINE [ptrace], RING_SIZE [256M].
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CALLTRACE=${CALLTRACE:-$ROOT/calltrace}
M=${M:-100000}
REPEAT=${REPEAT:-3}
ENGINE=${ENGINE:-ptrace}
case ${1:-} in -h | --help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
command -v taskset >/dev/null || { echo "args-bench: taskset is needed (util-linux)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "args-bench: /usr/bin/time is needed (Debian: time)" >&2; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ct-args-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
"${CC:-cc}" -O2 -g -o "$TMP/args" "$ROOT/bench/args.c"

# CPU time (user + sys, in ns) of COMMAND and everything it waited for: unlike wall time, it
# does not count the time other processes of a busy machine take from CPU 0.
cpu_ns() {
    /usr/bin/time -f '%U %S' -o "$TMP/time" taskset -c 0 "$@" >/dev/null 2>"$TMP/err" ||
        { cat "$TMP/err" >&2; exit 1; }
    awk '{ printf "%.0f\n", ($1 + $2) * 1e9 }' "$TMP/time"
}

# "RUN OUTPUT" in ns of one traced run and of exporting it again: the medians of REPEAT
timed() {
    local walls=() outs=() i
    for ((i = 0; i < REPEAT; i++)); do
        rm -rf "$TMP/run"
        walls+=("$(cpu_ns "$@")")
        if [ -d "$TMP/run" ]; then
            outs+=("$(cpu_ns "$CALLTRACE" export -q --max-call-dirs 1 "$TMP/run")")
        else
            outs+=(0)
        fi
    done
    echo "$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(((REPEAT + 1) / 2))p")" \
        "$(printf '%s\n' "${outs[@]}" | sort -n | sed -n "$(((REPEAT + 1) / 2))p")"
}

CT=("$CALLTRACE" "--engine=$ENGINE")
echo "--engine=$ENGINE: CPU us per call, M=$M, median of $REPEAT; engine = traced - untraced - output"
printf '%-8s %10s %10s %10s %10s %10s %12s %12s\n' workload engine "engine -A" "engine -AR" \
    "-A adds" "-AR adds" "output -A" "output -AR"
for kind in int double string; do
    read -r base _ < <(timed "$TMP/args" "$kind" "$M")
    read -r none none_out < <(timed "${CT[@]}" -q -o "$TMP/run" "$TMP/args" "$kind" "$M")
    read -r args args_out < <(timed "${CT[@]}" -q -A --max-call-dirs 1 -o "$TMP/run" "$TMP/args" "$kind" "$M")
    read -r both both_out < <(timed "${CT[@]}" -q -A -R --max-call-dirs 1 -o "$TMP/run" "$TMP/args" "$kind" "$M")
    awk -v k="$kind" -v m="$M" -v b="$base" -v n="$none" -v no="$none_out" -v a="$args" \
        -v ao="$args_out" -v r="$both" -v ro="$both_out" 'BEGIN {
        en = (n - no - b) / m / 1000; ea = (a - ao - b) / m / 1000; er = (r - ro - b) / m / 1000
        printf "%-8s %10.3f %10.3f %10.3f %10.3f %10.3f %12.3f %12.3f\n", k, en, ea, er,
            ea - en, er - en, ao / m / 1000, ro / m / 1000
    }'
done

[ "$ENGINE" = inject ] || exit 0

# The loop's own ns per call, in its fastest block of calls (its "best_block_ns N CALLS" line
# on stderr: a block no other process interrupted), the median of REPEAT runs. The program on
# CPU 0, calltrace (draining the rings) on CPU 1: the time is the trampolines' alone.
loop_ns() {
    local all=() i
    for ((i = 0; i < REPEAT; i++)); do
        rm -rf "$TMP/run"
        ARGS_CPU=0 taskset -c 1 "$@" >/dev/null 2>"$TMP/err" || { cat "$TMP/err" >&2; exit 1; }
        all+=("$(awk '$1 == "best_block_ns" { printf "%.1f\n", $2 / $3 }' "$TMP/err")")
    done
    printf '%s\n' "${all[@]}" | sort -n | sed -n "$(((REPEAT + 1) / 2))p"
}

echo
# rings big enough for every event of a run: the program never waits for calltrace
RING=(--buffer-size "${RING_SIZE:-256M}")
echo "--engine=inject: ns per call inside the program (its fastest block of calls), M=$M," \
    "median of $REPEAT, rings of ${RING_SIZE:-256M}"
printf '%-8s %10s %10s %10s %10s %10s %10s\n' workload untraced traced "-A" "-A -R" "-A adds" \
    "-AR adds"
for kind in int double string; do
    base=$(ARGS_CPU=0 loop_ns "$TMP/args" "$kind" "$M")
    none=$(loop_ns "${CT[@]}" "${RING[@]}" -q -o "$TMP/run" "$TMP/args" "$kind" "$M")
    args=$(loop_ns "${CT[@]}" "${RING[@]}" -q -A --max-call-dirs 1 -o "$TMP/run" "$TMP/args" \
        "$kind" "$M")
    both=$(loop_ns "${CT[@]}" "${RING[@]}" -q -A -R --max-call-dirs 1 -o "$TMP/run" \
        "$TMP/args" "$kind" "$M")
    awk -v k="$kind" -v b="$base" -v n="$none" -v a="$args" -v r="$both" 'BEGIN {
        printf "%-8s %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f\n", k, b, n, a, r, a - n, r - n
    }'
done
