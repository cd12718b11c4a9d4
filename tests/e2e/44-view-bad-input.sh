#!/bin/bash
# calltrace view on something that is not a viewable trace: a path that does not
# exist, a file that is not a trace, a truncated or damaged one (plain or gzip), a
# directory without runs. Each gives exactly one stderr line "calltrace: WHAT:
# WHY", a non-zero exit, and nothing served (no URL printed).
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/viewlib.sh"
require_calltrace
build nested O0
ct_run -z -- "$BIN"
expect_rc 0
GZ=$CT_DIR/trace.json.gz
ct_run "$BIN"
expect_rc 0
RUN=$CT_DIR
B=$T/bad
mkdir -p "$B/empty-dir" "$B/bad-run" "$B/cwd"
size=$(stat -c %s "$RUN/trace.json")
head -c $((size / 2)) "$RUN/trace.json" >"$B/half.json"
head -c $((size - 3)) "$RUN/trace.json" >"$B/almost.json"
gzsize=$(stat -c %s "$GZ")
head -c $((gzsize / 2)) "$GZ" >"$B/half.json.gz"
head -c $((gzsize - 4)) "$GZ" >"$B/no-trailer.json.gz"
cp "$GZ" "$B/damaged.json.gz"
printf 'XXXXXXXXXXXXXXXX' | dd of="$B/damaged.json.gz" bs=1 seek=$((gzsize / 2)) conv=notrunc status=none
printf 'hello, world\n' >"$B/text.txt"
: >"$B/empty.json"
printf '{"displayTimeUnit":"ns","events":[]}\n' >"$B/no-events.json"
{ cat "$RUN/trace.json"; echo '{"more":1}'; } >"$B/trailing.json"
printf '{"traceEvents":[}]\n' >"$B/unbalanced.json"
cp "$B/half.json" "$B/bad-run/trace.json"
printf '{"traceEvents":[]}' | gzip -c | head -c 12 >"$B/tiny.gz"

check_bad() {   # check_bad WHAT EXPECTED_WHY_REGEX VIEW_ARGS...
    local what=$1 why=$2
    shift 2
    CTX="[$what]"
    ct_raw view --server-only --port 0 "$@"
    one_stderr_line_error "$what"
    grep -Eq "$why" "$CT_ERR" || fail "$what: expected /$why/ in: $(cat "$CT_ERR")"
    note "ok: $(cat "$CT_ERR")"
}

check_bad missing-run 'view: .*/no-such-run: No such file or directory' "$B/no-such-run"
check_bad missing-file 'No such file or directory' "$B/nothing.json"
check_bad text-file 'text.txt: not a JSON trace' "$B/text.txt"
check_bad record-file 'events.ctr: not a JSON trace' "$RUN/events.ctr"
check_bad empty-file 'empty.json: empty, not a trace' "$B/empty.json"
check_bad no-traceEvents 'without "traceEvents"' "$B/no-events.json"
check_bad truncated-json 'half.json: truncated' "$B/half.json"
check_bad truncated-json-end 'almost.json: truncated' "$B/almost.json"
check_bad truncated-gzip 'half.json.gz: truncated' "$B/half.json.gz"
check_bad gzip-no-trailer 'no-trailer.json.gz: truncated' "$B/no-trailer.json.gz"
check_bad damaged-gzip 'damaged.json.gz: (damaged gzip data|truncated|not)' "$B/damaged.json.gz"
check_bad tiny-gzip 'tiny.gz: (truncated|damaged gzip data)' "$B/tiny.gz"
check_bad trailing-data 'more data after' "$B/trailing.json"
check_bad unbalanced 'unbalanced' "$B/unbalanced.json"
check_bad run-with-bad-trace 'bad-run/trace.json: truncated' "$B/bad-run"
check_bad dir-without-runs 'empty-dir: no run directories in it' "$B/empty-dir"
check_bad device '/dev/null: not a trace file or a directory' /dev/null
check_bad too-many-args 'too many arguments' "$RUN" "$RUN"
check_bad bad-port 'not a port number' --port 70000 "$RUN"
check_bad bad-ui 'not an http\(s\) URL' --ui-origin 'javascript:alert(1)' "$RUN"
CTX="[no runs in cwd]"
cd "$B/cwd" || fail "cd $B/cwd"
ct_raw view --server-only --port 0
cd "$T" || fail "cd $T"
one_stderr_line_error "no runs in cwd"
grep -q 'no run directory in the current directory' "$CT_ERR" || fail "unclear: $(cat "$CT_ERR")"
