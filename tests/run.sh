#!/bin/bash
# tests/run.sh [FILTER] -- run the unit and end-to-end tests of calltrace.
#
# Runs every executable tests/build/unit/* (built by `make unit`) and every
# tests/e2e/*.sh, each under a timeout, prints "PASS name" or "FAIL name"
# (with the test's output indented), and ends with "N passed, N failed".
# FILTER, if given, keeps only tests whose name contains it (names look like
# "unit/foo" and "e2e/01-recursion").  Exit status 0 only if none failed.
#
# Environment: CALLTRACE (default <repo>/calltrace), TEST_TIMEOUT (s, 120).
set -u
TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$TESTS_DIR/.." && pwd)
CALLTRACE=${CALLTRACE:-$ROOT/calltrace}
case $CALLTRACE in /*) ;; *) CALLTRACE=$PWD/$CALLTRACE ;; esac
export CALLTRACE
TEST_TIMEOUT=${TEST_TIMEOUT:-120}
FILTER=${1:-}

passed=0 failed=0
failed_names=()
LOG=$(mktemp "${TMPDIR:-/tmp}/ct-run.XXXXXX")
trap 'rm -f "$LOG"' EXIT

run_one() {   # run_one NAME COMMAND...
    local name=$1
    shift
    case $name in *"$FILTER"*) ;; *) return 0 ;; esac
    local start=$SECONDS rc
    timeout -k 10 "$TEST_TIMEOUT" "$@" </dev/null >"$LOG" 2>&1
    rc=$?
    local took=$((SECONDS - start))
    if [ $rc = 0 ]; then
        passed=$((passed + 1))
        echo "PASS $name (${took}s)"
    else
        failed=$((failed + 1))
        failed_names+=("$name")
        if [ $rc = 124 ] || [ $rc = 137 ]; then
            echo "timed out after ${TEST_TIMEOUT}s (exit $rc)" >>"$LOG"
        fi
        echo "FAIL $name (${took}s, exit $rc)"
        tail -n 60 "$LOG" | sed 's/^/    /'
    fi
}

if [ -d "$TESTS_DIR/build/unit" ]; then
    for t in "$TESTS_DIR"/build/unit/*; do
        [ -f "$t" ] && [ -x "$t" ] || continue
        run_one "unit/${t##*/}" "$t"
    done
fi

for t in "$TESTS_DIR"/e2e/*.sh; do
    [ -f "$t" ] || continue
    name=${t##*/}
    run_one "e2e/${name%.sh}" bash "$t"
done

if [ $failed -gt 0 ]; then
    echo "failed: ${failed_names[*]}"
fi
echo "$passed passed, $failed failed"
[ $failed = 0 ]
