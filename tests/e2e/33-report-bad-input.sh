#!/bin/bash
# Bad input to report/graph/tree: a path that is not a run directory, a directory without a
# record, an unknown sort key or format, a bad --top, an unknown --tid, a truncated record (a
# warning, and the events before the damage), no run in the current directory; and RUN
# defaults to the newest run directory here.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build nested O0
ct_run "$BIN"
run=$CT_DIR
CTX="[bad input]"
for cmd in report graph tree; do
    ct_raw $cmd "$T/nonexistent"
    one_stderr_line_error "$cmd of a missing path"
    mkdir -p "$T/empty"
    ct_raw $cmd "$T/empty"
    one_stderr_line_error "$cmd of a directory without a record"
    grep -q "not a run directory" "$CT_ERR" || fail "$cmd: unclear: $(cat "$CT_ERR")"
    ct_raw $cmd "$run/trace.json"
    one_stderr_line_error "$cmd of a file"
done
ct_raw report -s bogus "$run"
one_stderr_line_error "unknown sort key"
grep -q "total, self, calls" "$CT_ERR" || fail "sort keys not listed: $(cat "$CT_ERR")"
ct_raw report -f xml "$run"
one_stderr_line_error "unknown format"
ct_raw report -n 0 "$run"
one_stderr_line_error "--top 0"
ct_raw report --tid 1 "$run"
one_stderr_line_error "unknown tid"
grep -q "its threads: [0-9]" "$CT_ERR" || fail "threads not listed: $(cat "$CT_ERR")"
ct_raw graph -D x "$run"
one_stderr_line_error "bad depth"

# no run here, then the newest of two
mkdir "$T/here" && cd "$T/here" || exit 1
ct_raw report
one_stderr_line_error "no run in the current directory"
cp -r "$run" old && sleep 0.05 && cp -r "$run" new
: >>new/events.ctr
python3 - new/events.ctr <<'PY'
import os, sys
p = sys.argv[1]; size = os.path.getsize(p)
os.truncate(p, size - 13)  # in the middle of the last record
PY
ct_raw report -f csv
expect_rc 0
grep -q 'new/events.ctr: the record ends in the middle of an event' "$CT_ERR" ||
    fail "truncated newest run: no warning: $(cat "$CT_ERR")"
grep -q '^"c",.*,250,' "$CT_OUT" || fail "the events before the damage: $(cat "$CT_OUT")"
