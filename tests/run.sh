#!/bin/bash
# tests/run.sh [FILTER...] -- run the unit and end-to-end tests of calltrace.
#
# Runs every executable in UNIT_DIR (built by `make unit`), a brief run of
# every fuzz target on its corpus (tests/build/fuzz/*, built by `make
# fuzz-build`; see tests/fuzz/run.sh) and every tests/e2e/*.sh, each under a
# timeout, prints "PASS name" or "FAIL name" (with the test's output
# indented), and ends with "N passed, N failed".  FILTERs, if given, keep only
# tests whose name contains one of them (names look like "unit/foo",
# "fuzz/record" and "e2e/01-recursion"; `make check TESTS="e2e/80 e2e/85"`).  Exit status 0 only if none failed.
#
# Sanitizer and valgrind reports fail the test during which they were written,
# whatever its exit status: each test gets a report directory, ASAN_OPTIONS and
# UBSAN_OPTIONS log there, and so does tests/lib/valgrind-calltrace.
#
# A test that exits 77 was skipped (its last line says why): counted apart, not a failure.
#
# Environment: CALLTRACE (default <repo>/calltrace), UNIT_DIR (default
# tests/build/unit), TEST_TIMEOUT (s, 120), CALLTRACE_ENGINE (tests/lib/testlib.sh).
set -u
TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$TESTS_DIR/.." && pwd)
CALLTRACE=${CALLTRACE:-$ROOT/calltrace}
case $CALLTRACE in /*) ;; *) CALLTRACE=$PWD/$CALLTRACE ;; esac
export CALLTRACE
TEST_TIMEOUT=${TEST_TIMEOUT:-120}
UNIT_DIR=${UNIT_DIR:-$TESTS_DIR/build/unit}
FILTERS=("$@")

passed=0 failed=0 skipped=0
failed_names=()
LOG=$(mktemp "${TMPDIR:-/tmp}/ct-run.XXXXXX")
REPORTS=$(mktemp -d "${TMPDIR:-/tmp}/ct-reports.XXXXXX")
# a test may run calltrace as another user (nobody, e2e/29): its reports must land here too
chmod 1777 "$REPORTS"
trap 'rm -rf "$LOG" "$REPORTS"' EXIT
export CT_REPORT_DIR=$REPORTS
# halt_on_error: the first error ends the process; exitcode 86 so a report can also be told
# from an ordinary failure; the logs are what the runner checks, any exit status.
export ASAN_OPTIONS="log_path=$REPORTS/asan:halt_on_error=1:exitcode=86:detect_leaks=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="log_path=$REPORTS/ubsan:halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"

# Reports written during the last test: sanitizer logs, and valgrind logs with errors.
reports_found() {
    local f found=1
    for f in "$REPORTS"/*; do
        [ -e "$f" ] || continue
        case ${f##*/} in
        valgrind.*) grep -q 'ERROR SUMMARY: [1-9]' "$f" || continue ;;
        esac
        echo "--- report ${f##*/}:"
        head -n 60 "$f"
        found=0
    done
    return $found
}

selected() {  # selected NAME: no FILTERs, or one of them is in NAME
    [ ${#FILTERS[@]} = 0 ] && return 0
    local f
    for f in "${FILTERS[@]}"; do
        case $1 in *"$f"*) return 0 ;; esac
    done
    return 1
}

run_one() {   # run_one NAME COMMAND...
    local name=$1
    shift
    selected "$name" || return 0
    local start=$SECONDS rc
    rm -rf "${REPORTS:?}"/*
    timeout -k 10 "$TEST_TIMEOUT" "$@" </dev/null >"$LOG" 2>&1
    rc=$?
    if reports_found >>"$LOG"; then
        echo "sanitizer or valgrind report above (test exit status $rc)" >>"$LOG"
        [ $rc = 0 ] && rc=86
    fi
    local took=$((SECONDS - start))
    if [ $rc = 77 ]; then
        skipped=$((skipped + 1))
        echo "SKIP $name: $(tail -n 1 "$LOG")"
    elif [ $rc = 0 ]; then
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

if [ -d "$UNIT_DIR" ]; then
    for t in "$UNIT_DIR"/*; do
        [ -f "$t" ] && [ -x "$t" ] || continue
        run_one "unit/${t##*/}" "$t"
    done
fi

for t in "$TESTS_DIR"/fuzz/fuzz_*.c; do
    [ -f "$t" ] || continue
    name=${t##*/fuzz_}
    name=${name%.c}
    run_one "fuzz/$name" bash "$TESTS_DIR/fuzz/run.sh" --check "$name"
done

# In the order of their numbers (100-* after 99-*), not of their names.
while IFS= read -r t; do
    [ -f "$t" ] || continue
    name=${t##*/}
    run_one "e2e/${name%.sh}" bash "$t"
done < <(printf '%s\n' "$TESTS_DIR"/e2e/*.sh | sort -V)

if [ $failed -gt 0 ]; then
    echo "failed: ${failed_names[*]}"
fi
echo "$passed passed, $failed failed${skipped:+$([ $skipped -gt 0 ] && echo ", $skipped skipped")}"
[ $failed = 0 ]
