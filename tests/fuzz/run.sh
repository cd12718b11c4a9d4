#!/bin/bash
# tests/fuzz/run.sh -- run calltrace's fuzz targets (tests/build/fuzz/fuzz_NAME, built by
# `make fuzz-build`) on their corpora in tests/fuzz/corpus/NAME.
#
#   run.sh --check NAME         brief run for `make check` (FUZZ_CHECK_SECONDS, default 2):
#                               exit 0 when nothing was found; writes nothing in the repository
#   run.sh --seconds N [NAME..] long runs, two targets at a time (FUZZ_JOBS): new inputs go to
#                               tests/build/fuzz/corpus/NAME, findings to
#                               tests/build/fuzz/findings/NAME/; prints one line per target
#
# A finding is minimized by hand (fuzz_NAME -minimize_crash=1 FILE), fixed, and its input
# added to tests/fuzz/corpus/NAME as a regression case.
set -u
FUZZ_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$FUZZ_DIR/../.." && pwd)
BIN_DIR=$ROOT/tests/build/fuzz
# Bounds for every target: a single input taking seconds, or a gigabyte, is a finding too.
COMMON=(-timeout=25 -rss_limit_mb=1024 -malloc_limit_mb=512 -max_len=16384 -print_final_stats=1)

all_targets() {
    local f
    for f in "$FUZZ_DIR"/fuzz_*.c; do
        f=${f##*/fuzz_}
        echo "${f%.c}"
    done
}

need_target() {
    [ -x "$BIN_DIR/fuzz_$1" ] || { echo "run.sh: no fuzz target $BIN_DIR/fuzz_$1 (make fuzz-build)" >&2; exit 2; }
    [ -d "$FUZZ_DIR/corpus/$1" ] || { echo "run.sh: no corpus $FUZZ_DIR/corpus/$1" >&2; exit 2; }
}

check_one() {
    local name=$1
    need_target "$name"
    local tmp rc
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/ct-fuzz-$name.XXXXXX") || exit 1
    # New inputs go to the first directory: a scratch one, so the repository stays untouched.
    "$BIN_DIR/fuzz_$name" "${COMMON[@]}" -max_total_time="${FUZZ_CHECK_SECONDS:-2}" \
        -artifact_prefix="$tmp/" "$tmp" "$FUZZ_DIR/corpus/$name" >"$tmp/log" 2>&1
    rc=$?
    grep -E '^(#[0-9]+ +(INITED|DONE)|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY)' "$tmp/log"
    if [ $rc != 0 ]; then
        tail -n 40 "$tmp/log"
        ls "$tmp"/crash-* "$tmp"/leak-* "$tmp"/timeout-* "$tmp"/oom-* 2>/dev/null
    fi
    rm -rf "$tmp"
    return $rc
}

long_one() {
    local name=$1 seconds=$2
    local corpus=$BIN_DIR/corpus/$name findings=$BIN_DIR/findings/$name
    mkdir -p "$corpus" "$findings"
    local start=$SECONDS rc
    "$BIN_DIR/fuzz_$name" "${COMMON[@]}" -max_total_time="$seconds" \
        -artifact_prefix="$findings/" "$corpus" "$FUZZ_DIR/corpus/$name" \
        >"$BIN_DIR/$name.log" 2>&1
    rc=$?
    local execs
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$BIN_DIR/$name.log")
    printf '%-12s %s after %ss, %s runs, corpus %s inputs%s\n' "$name" \
        "$([ $rc = 0 ] && echo clean || echo "FINDING (exit $rc)")" $((SECONDS - start)) \
        "${execs:-?}" "$(ls "$corpus" | wc -l)" \
        "$([ $rc = 0 ] || echo ", see $findings and $BIN_DIR/$name.log")"
    return $rc
}

case ${1:-} in
--check)
    [ $# = 2 ] || { echo "usage: run.sh --check NAME" >&2; exit 2; }
    check_one "$2"
    ;;
--seconds)
    [ $# -ge 2 ] || { echo "usage: run.sh --seconds N [NAME...]" >&2; exit 2; }
    seconds=$2
    shift 2
    targets=("$@")
    [ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(all_targets)
    for t in "${targets[@]}"; do need_target "$t"; done
    jobs=${FUZZ_JOBS:-2} failed=0 pids=()
    for t in "${targets[@]}"; do
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || failed=1; done
        long_one "$t" "$seconds" &
    done
    while [ "$(jobs -rp | wc -l)" -gt 0 ]; do wait -n || failed=1; done
    exit $failed
    ;;
*)
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
