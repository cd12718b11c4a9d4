#!/bin/bash
# -z/--compress writes trace.json.gz only, the same trace gzipped; `export -z`
# and `export` switch a run between the two forms, leaving one. `calltrace view`
# without an argument serves the newest run of the current directory; a run
# holding only its record (calltrace was killed) gets its trace made first.
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/viewlib.sh"
require_calltrace
build nested O0

CTX="[-z]"
ct_run -z -- "$BIN"
expect_rc 0
[ -f "$CT_DIR/trace.json.gz" ] || fail "-z wrote no trace.json.gz: $(ls "$CT_DIR")"
[ -e "$CT_DIR/trace.json" ] && fail "-z also wrote trace.json"
grep -q 'trace in .*/trace.json.gz: ' "$CT_ERR" || fail "summary does not name trace.json.gz: $(cat "$CT_ERR")"
gzip -t "$CT_DIR/trace.json.gz" || fail "trace.json.gz is not valid gzip"
gzip -dc "$CT_DIR/trace.json.gz" >"$T/unzipped.json"
Z_OUT=$CT_OUT
ZRUN=$CT_DIR
CT_TRACE=$T/unzipped.json
chk validate
chk check-nesting
chk check-counts -f "$Z_OUT"
ct_run "$BIN"
[ "$(stat -c %s "$ZRUN/trace.json.gz")" -lt "$(stat -c %s "$CT_DIR/trace.json")" ] ||
    fail "trace.json.gz is not smaller than trace.json"

CTX="[export -z]"
PLAIN=$CT_DIR
"$CALLTRACE" export -q -z "$PLAIN" || fail "export -z failed"
[ -f "$PLAIN/trace.json.gz" ] && [ ! -e "$PLAIN/trace.json" ] ||
    fail "export -z should leave trace.json.gz alone: $(ls "$PLAIN")"
gzip -dc "$PLAIN/trace.json.gz" >"$T/exported.json"
CT_TRACE=$T/exported.json
chk check-counts -f "$CT_OUT"
"$CALLTRACE" export -q "$PLAIN" || fail "export failed"
[ -f "$PLAIN/trace.json" ] && [ ! -e "$PLAIN/trace.json.gz" ] ||
    fail "export should leave trace.json alone: $(ls "$PLAIN")"

CTX="[newest run]"
mkdir -p "$T/cwd"
mv "$ZRUN" "$T/cwd/older"
mv "$PLAIN" "$T/cwd/newer"
touch -d '2001-01-01' "$T/cwd/older/trace.json.gz" "$T/cwd/older/events.ctr"
mkdir "$T/cwd/not-a-run"
cd "$T/cwd" || fail "cd $T/cwd"
view_start view --once --server-only --port 0 --timeout 100
cd "$T" || fail "cd $T"
grep -q 'the newest run here is newer' "$VIEW_ERR" || fail "not the newest run: $(cat "$VIEW_ERR")"
[ "$VIEW_URL" = "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:$VIEW_PORT$VIEW_BASE/trace.json" ] ||
    fail "printed URL is '$VIEW_URL'"
[ "$(http_probe get "$VIEW_PORT" "$VIEW_BASE/trace.json" "$T/newest.json")" = 200 ] || fail "GET failed"
view_wait_exit 10
cmp -s "$T/newest.json" "$T/cwd/newer/trace.json" || fail "served trace is not the newest run's"

CTX="[record only]"
rm "$T/cwd/newer/trace.json"
view_start view --once --server-only --port 0 --timeout 100 "$T/cwd/newer"
grep -q 'has no trace yet; making it from events.ctr' "$VIEW_ERR" || fail "no note about exporting: $(cat "$VIEW_ERR")"
[ "$(http_probe get "$VIEW_PORT" "$VIEW_BASE/trace.json" "$T/made.json")" = 200 ] || fail "GET failed"
view_wait_exit 10
[ "$VIEW_RC" = 0 ] || fail "view exited $VIEW_RC"
CT_TRACE=$T/made.json
chk validate
