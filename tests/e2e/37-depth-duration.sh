#!/bin/bash
# -D/--max-depth and --min-duration leave calls out of the record: exactly the
# calls the program itself counted at depth <= N are kept, and exactly the
# long calls (with the calls that lead to them), well nested.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

# expected_at_most N: "NAME=COUNT" for every function, from the program's own
# "depth NAME D COUNT" lines.
expected_at_most() {
    awk -v max="$1" '$1 == "depth" { n[$2] += ($3 <= max) ? $4 : 0 }
        END { for (f in n) printf "%s=%d\n", f, n[f] }' "$PL_OUT"
}

for opt in O0 O2; do
    build depths "$opt"
    plain_run "$BIN"
    for d in 1 2 3 5; do
        CTX="[-D $d -$opt]"
        ct_run -D "$d" -- "$BIN"
        expect_trace
        same_stdout
        chk check-nesting
        # shellcheck disable=SC2046
        chk check-counts $(expected_at_most "$d")
        dropped=$(awk -v max="$d" '$1 == "depth" && $3 > max { n += $4 } END { print n + 0 }' "$PL_OUT")
        if [ "$dropped" -gt 0 ]; then
            grep -q "^calltrace: $dropped calls deeper than -D $d left out$" "$CT_ERR" ||
                fail "summary does not say $dropped calls were left out: $(cat "$CT_ERR")"
        fi
    done

    CTX="[--min-duration 50ms -$opt]"
    ct_run --min-duration 50ms -- "$BIN"
    expect_trace
    same_stdout
    chk check-nesting
    chk check-counts main=1 work=1 slow=1 rec=0 leaf=0
    chk check-parent slow work
    "$CALLTRACE" report -f csv "$CT_DIR" >"$T/report.csv" || fail "report failed"
    awk -F, 'NR > 1 && $7 < 50000000 { bad = bad " " $0 } END { exit bad != "" }' \
        "$T/report.csv" || fail "a call shorter than 50 ms was kept: $(cat "$T/report.csv")"

    CTX="[-D 2 --min-duration 50ms -$opt]"
    ct_run -D 2 --min-duration 50ms -- "$BIN"
    expect_trace
    chk check-counts main=1 work=1 slow=0 rec=0 leaf=0
done

for bad in "-D 0" "-D x" "--min-duration 5sec" "--min-duration 5xs" "--min-duration -1ms"; do
    CTX="[$bad]"
    # shellcheck disable=SC2086
    ct_raw $bad "$BIN"
    one_stderr_line_error "$bad"
done
