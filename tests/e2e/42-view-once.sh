#!/bin/bash
# --once exits after the trace was fetched completely (not after a HEAD or an
# aborted download), and after --timeout when nobody fetches it. The printed URL
# is exactly Perfetto's deep link (on the default port 9001 too, when it is
# free), and it is what $BROWSER is given. `calltrace --open` records and then
# serves: here $BROWSER is a script that fetches the trace like the UI would, so
# the whole run ends by itself. Without a browser, a hint for ssh forwarding.
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/viewlib.sh"
require_calltrace
sample_run

CTX="[once]"
view_start view --once --server-only --port 0 --timeout 100 "$RUN"
[ "$VIEW_URL" = "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:$VIEW_PORT$VIEW_BASE/trace.json" ] ||
    fail "printed URL '$VIEW_URL' is not the deep link"
[ "$(wc -l <"$VIEW_OUT")" = 1 ] || fail "stdout should be the URL alone: $(cat "$VIEW_OUT")"
grep -q 'ssh -L' "$VIEW_ERR" || fail "no ssh forwarding hint with --server-only: $(cat "$VIEW_ERR")"
http_probe status "$VIEW_PORT" "$VIEW_BASE/trace.json" HEAD >/dev/null
http_probe status "$VIEW_PORT" "$VIEW_BASE/nothing" >/dev/null
http_probe status "$VIEW_PORT" /trace.json >/dev/null
http_probe silent "$VIEW_PORT" >/dev/null
# Still serving: poll once more through a request that must succeed, then fetch for real.
kill -0 "$VIEW_PID" 2>/dev/null || fail "--once exited before the trace was fetched: $(cat "$VIEW_ERR")"
[ "$(http_probe get "$VIEW_PORT" "$VIEW_BASE/trace.json" "$T/got.json")" = 200 ] || fail "GET failed"
view_wait_exit 10
[ "$VIEW_RC" = 0 ] || fail "--once exited $VIEW_RC after the fetch: $(cat "$VIEW_ERR")"
cmp -s "$T/got.json" "$RUN/trace.json" || fail "fetched trace differs"
listening "$VIEW_PORT" && fail "port $VIEW_PORT still listening after --once ended"

CTX="[once timeout]"
start=$SECONDS
view_start view --once --server-only --port 0 --timeout 1 "$RUN"
view_wait_exit 10
[ "$VIEW_RC" != 0 ] || fail "--once --timeout 1 without a fetch exited 0"
grep -q 'nobody fetched the trace within 1 s' "$VIEW_ERR" || fail "no timeout message: $(cat "$VIEW_ERR")"
[ $((SECONDS - start)) -le 30 ] || fail "--timeout 1 took $((SECONDS - start)) s"

CTX="[browser]"
cat >"$T/browser.sh" <<'EOS'
#!/bin/sh
# A stand-in browser: records its argument, then fetches the trace the deep link names.
printf '%s\n' "$1" >"$BROWSER_LOG"
url=${1#*url=}
python3 -c 'import sys, urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1]).read())' "$url" >"$BROWSER_LOG.body"
EOS
chmod +x "$T/browser.sh"
export BROWSER_LOG=$T/browser.log
BROWSER=$T/browser.sh view_start view --once --port 0 --timeout 100 "$RUN"
view_wait_exit 60
[ "$VIEW_RC" = 0 ] || fail "view --once with \$BROWSER exited $VIEW_RC: $(cat "$VIEW_ERR")"
[ "$(cat "$BROWSER_LOG")" = "$VIEW_URL" ] || fail "\$BROWSER got '$(cat "$BROWSER_LOG")', printed URL is '$VIEW_URL'"
cmp -s "$BROWSER_LOG.body" "$RUN/trace.json" || fail "the browser did not get the trace"
grep -q 'ssh -L' "$VIEW_ERR" && fail "ssh hint printed although the browser started: $(cat "$VIEW_ERR")"

CTX="[no browser]"
BROWSER=false view_start view --once --port 0 --timeout 1 "$RUN"
view_wait_exit 10
grep -q 'no browser started (false failed).*ssh -L '"$VIEW_PORT:127.0.0.1:$VIEW_PORT" "$VIEW_ERR" ||
    fail "no one-line ssh hint after a failed browser: $(cat "$VIEW_ERR")"
BROWSER= view_start view --once --port 0 --timeout 1 "$RUN" # empty counts as unset
view_wait_exit 10
grep -q 'no browser started (no $BROWSER and no display).*ssh -L' "$VIEW_ERR" ||
    fail "no ssh hint without \$BROWSER and display: $(cat "$VIEW_ERR")"

CTX="[--open]"
rm -f "$BROWSER_LOG" "$BROWSER_LOG.body"
OPEN_DIR=$T/open-run
BROWSER=$T/browser.sh view_start --open --once --port 0 --timeout 100 -z -o "$OPEN_DIR" -- "$BIN"
view_wait_exit 60
[ "$VIEW_RC" = 0 ] || fail "calltrace --open exited $VIEW_RC: $(cat "$VIEW_ERR")"
grep -q '^sum ' "$VIEW_OUT" || fail "the program's output is missing: $(cat "$VIEW_OUT")"
[ "$VIEW_URL" = "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:$VIEW_PORT$VIEW_BASE/trace.json.gz" ] ||
    fail "--open printed '$VIEW_URL'"
[ "$(cat "$BROWSER_LOG")" = "$VIEW_URL" ] || fail "--open gave \$BROWSER '$(cat "$BROWSER_LOG")'"
cmp -s "$BROWSER_LOG.body" "$OPEN_DIR/trace.json.gz" || fail "--open did not serve the run's trace.json.gz"
ct_raw --port 0 "$BIN"
one_stderr_line_error "--port without --open"
grep -q -- '--port: only with --open' "$CT_ERR" || fail "unclear error: $(cat "$CT_ERR")"

CTX="[port 9001]"
if listening 9001; then
    note "port 9001 is busy here; the default-port deep link is not checked"
else
    view_start view --once --server-only --timeout 100 "$RUN"
    [ "$VIEW_URL" = "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:9001$VIEW_BASE/trace.json" ] ||
        fail "default deep link is '$VIEW_URL'"
    grep -q 'note:' "$VIEW_ERR" && fail "port note printed on port 9001: $(cat "$VIEW_ERR")"
    http_probe get 9001 "$VIEW_BASE/trace.json" "$T/9001.json" >/dev/null
    view_wait_exit 10
fi
