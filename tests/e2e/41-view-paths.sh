#!/bin/bash
# The trace server answers only the trace's own path, under the URL's token:
# everything else, and every attempt to step out of the run directory, is 404 (or 405 for other methods, 403
# for a non-loopback Host, which DNS rebinding would send). It survives clients
# that send garbage, stop halfway through a request, or reset the connection in
# the middle of a large download. A directory of runs is served as an index page
# linking to each run's deep link, and again nothing else.
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/viewlib.sh"
require_calltrace
sample_run
echo secret >"$T/secret.txt"

status_is() {   # status_is WANT PATH [METHOD [HOST]]
    local want=$1 got
    shift
    got=$(http_probe status "$VIEW_PORT" "$@") || fail "request $* failed: $got"
    [ "$got" = "$want" ] || fail "$* answered $got, expected $want"
}

expect_statuses() {   # lines "WANT PATH [METHOD [HOST]]" on stdin
    local out
    out=$(http_probe expect "$VIEW_PORT") || fail "wrong answers:
$out"
}

CTX="[run]"
view_start view --server-only --port 0 "$RUN"
B=$VIEW_BASE
[ "$(http_probe get "$VIEW_PORT" "$B/trace.json" "$T/got.json")" = 200 ] || fail "GET $B/trace.json is not 200"
cmp -s "$T/got.json" "$RUN/trace.json" || fail "the served trace differs from $RUN/trace.json"
for p in / /events.ctr /trace.json/ /trace.jsonx /trace /TRACE.JSON //trace.json /./trace.json \
    /../secret.txt /..%2fsecret.txt /%2e%2e/secret.txt /%2e%2e%2fsecret.txt '/..\secret.txt' \
    /trace.json/../events.ctr /run.1/trace.json "/$(basename "$RUN")/events.ctr" \
    "$RUN/events.ctr" /etc/passwd /proc/self/environ; do
    echo "404 $B$p"
done | expect_statuses
expect_statuses <<EOT
200 $B/trace.json HEAD
405 $B/trace.json POST
405 $B/trace.json DELETE
403 $B/trace.json GET evil.example.com:$VIEW_PORT
200 $B/trace.json GET localhost:$VIEW_PORT
404 $B
404 $B/
404 /trace.json
EOT

# Misbehaving clients, then a normal request must still work.
for raw in 'garbage\r\n\r\n' 'GET\r\n\r\n' 'GET /trace.json HTTP/9.9\r\n\r\n' \
    'GET /trace.json HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5\r\n\r\n' \
    '\x00\x01\x02\xff\r\n\r\n' "GET /$(head -c 20000 /dev/zero | tr '\0' a) HTTP/1.1\r\n\r\n"; do
    http_probe raw "$VIEW_PORT" "$raw" >/dev/null || fail "raw request '$raw' could not be sent"
done
http_probe silent "$VIEW_PORT" >/dev/null
status_is 200 "$B/trace.json"

# A trace large enough to be cut off mid-transfer (20 MB of X events).
python3 - "$T/big.json" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write('{"traceEvents":[\n')
    f.write(",\n".join('{"name":"f%d","ph":"X","ts":%d,"dur":1,"pid":1,"tid":1}' % (i % 97, i)
                       for i in range(300000)))
    f.write("\n]}\n")
PY
view_stop
CTX="[big file]"
view_start view --server-only --port 0 "$T/big.json"
[ "$VIEW_URL" = "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:$VIEW_PORT$VIEW_BASE/big.json" ] ||
    fail "printed URL is '$VIEW_URL'"
for i in 1 2 3 4 5; do
    http_probe abort "$VIEW_PORT" "$VIEW_BASE/big.json" 100000 >/dev/null || fail "aborted download $i failed"
done
[ "$(http_probe get "$VIEW_PORT" "$VIEW_BASE/big.json" "$T/big.got")" = 200 ] || fail "full download failed after aborted ones"
cmp -s "$T/big.got" "$T/big.json" || fail "the full download differs from the file"
kill -0 "$VIEW_PID" 2>/dev/null || fail "the server died"
view_stop
[ "$VIEW_RC" = 0 ] || fail "view exited $VIEW_RC after SIGTERM"

CTX="[index]"
mkdir -p "$T/runs"
mv "$RUN" "$T/runs/first"
ct_run -z -- "$BIN"
mv "$CT_DIR" "$T/runs/second run"   # a name that is not URL-safe
mkdir "$T/runs/not-a-run"
view_start view --server-only --port 0 "$T/runs"
B=$VIEW_BASE
[ "$VIEW_URL" = "http://127.0.0.1:$VIEW_PORT$B/" ] || fail "index URL is '$VIEW_URL'"
[ "$(http_probe get "$VIEW_PORT" "$B/" "$T/index.html")" = 200 ] || fail "GET $B/ is not 200"
links=$(grep -o 'href="[^"]*"' "$T/index.html" | sed 's/^href="//; s/"$//')
[ "$(printf '%s\n' "$links" | grep -c .)" = 2 ] || fail "index should link 2 runs: $links"
printf '%s\n' "$links" | grep -qx "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:$VIEW_PORT$B/first/trace.json" ||
    fail "no deep link to first/trace.json in: $links"
grep -q 'second run' "$T/index.html" || fail "the index does not name 'second run'"
for l in $links; do
    echo "200 ${l#*"127.0.0.1:$VIEW_PORT"}"
done | expect_statuses
gz_path=$(printf '%s\n' "$links" | grep 'trace.json.gz$' | sed "s|.*127.0.0.1:$VIEW_PORT||")
http_probe get "$VIEW_PORT" "$gz_path" "$T/second.gz" >/dev/null
cmp -s "$T/second.gz" "$T/runs/second run/trace.json.gz" || fail "$gz_path is not the compressed trace, served as is"
for p in /first /first/ /first/events.ctr /not-a-run/trace.json /first/../first/trace.json \
    /second%20run/trace.json.gz /secret.txt /../secret.txt; do
    echo "404 $B$p"
done | expect_statuses
printf '404 /\n404 /first/trace.json\n' | expect_statuses
view_stop
