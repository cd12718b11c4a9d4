#!/bin/bash
# A busy port is a clear one-line error naming the program that holds it (another
# program, or a first calltrace view), given before anything is served, and
# promptly: a second server never starts, never hangs.
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/viewlib.sh"
require_calltrace
sample_run

CTX="[other program]"
python3 -u -c '
import signal, socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
print(s.getsockname()[1], flush=True)
signal.pause()   # hold the port until the test ends
' </dev/null >"$T/holder.port" 2>&1 &
PAGE_PIDS+=($!)
holder=$!
wait_until 10 "the port holder to start" test -s "$T/holder.port"
PORT=$(cat "$T/holder.port")
wait_until 10 "port $PORT listening" listening "$PORT"
ct_raw view --server-only --port "$PORT" "$RUN"
one_stderr_line_error "busy port"
grep -q "port $PORT: already in use by [^ ]* (pid $holder)" "$CT_ERR" ||
    fail "the error does not name the owner of port $PORT: $(cat "$CT_ERR")"
note "ok: $(cat "$CT_ERR")"

CTX="[second calltrace]"
view_start view --server-only --port 0 "$RUN"
first=$VIEW_PID
ct_raw view --server-only --port "$VIEW_PORT" "$RUN"
one_stderr_line_error "second server on a busy port"
grep -q "port $VIEW_PORT: already in use by $CT_COMM (pid [0-9]*)" "$CT_ERR" ||
    fail "the error does not name the first calltrace: $(cat "$CT_ERR")"
note "ok: $(cat "$CT_ERR")"
kill -0 "$first" 2>/dev/null || fail "the first server died"
[ "$(http_probe status "$VIEW_PORT" "$VIEW_BASE/trace.json")" = 200 ] || fail "the first server stopped answering"
# --open checks the port only after recording: the run is kept, the error is clear.
ct_raw --open --server-only --port "$VIEW_PORT" -o "$T/open-run" -- "$BIN"
[ "$CT_RC" != 0 ] || fail "--open on a busy port exited 0"
grep -q "port $VIEW_PORT: already in use by $CT_COMM" "$CT_ERR" || fail "--open: unclear error: $(cat "$CT_ERR")"
[ -f "$T/open-run/trace.json" ] || fail "--open on a busy port lost the recorded run"
view_stop
