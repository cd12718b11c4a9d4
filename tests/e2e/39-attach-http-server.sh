#!/bin/bash
# A real server from Debian's packages under load: python3's http.server on
# loopback answers a client's requests while calltrace attaches and detaches
# again and again. Every request must be answered with the right body, and
# the server must keep running after the last detach.
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/attachlib.sh"
require_calltrace
[ -x /usr/bin/python3 ] || fail "Debian's python3 (/usr/bin/python3) is needed"

mkdir -p "$T/www"
head -c 20000 /dev/urandom | base64 >"$T/www/page.txt"
/usr/bin/python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$T/www" >"$T/server.out" 2>"$T/server.err" &
SERVER=$!
PROG=$SERVER PROG_LOG=$T/server.err
trap 'kill $SERVER $CLIENT 2>/dev/null; _attach_cleanup' EXIT
port_known() { grep -q 'port [0-9]' "$T/server.out"; }
wait_until 20 "http.server to listen" port_known
PORT=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$T/server.out" | head -1)

cat >"$T/client.py" <<'PY'
import sys, urllib.request
import os
url, expected_path, stop_file = sys.argv[1], sys.argv[2], sys.argv[3]
expected = open(expected_path, "rb").read()
bad = n = 0
while not os.path.exists(stop_file):  # load until the test has done its cycles
    i = n
    n += 1
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            if r.status != 200 or r.read() != expected:
                bad += 1
    except Exception as e:
        print("request %d failed: %s" % (i, e), flush=True)
        bad += 1
    print("done %d" % (i + 1), flush=True)
print("answered %d bad %d" % (n, bad), flush=True)
sys.exit(1 if bad else 0)
PY
/usr/bin/python3 "$T/client.py" "http://127.0.0.1:$PORT/page.txt" "$T/www/page.txt" "$T/stop" >"$T/client.out" 2>&1 &
CLIENT=$!

cycles=0
while kill -0 $CLIENT 2>/dev/null && [ $cycles -lt "${HTTP_CYCLES:-6}" ]; do
    cycles=$((cycles + 1))
    CTX="[attach cycle $cycles]"
    attach_cycle "$cycles" INT
done
CTX=""
touch "$T/stop"
wait $CLIENT
rc=$?
[ $rc = 0 ] || fail "the client saw failures: $(grep -v '^done' "$T/client.out" | head -5)"
grep -qx "answered [1-9][0-9]* bad 0" "$T/client.out" || fail "client: $(tail -2 "$T/client.out")"
kill -0 $SERVER || fail "the server is gone after the last detach"
[ $cycles = "${HTTP_CYCLES:-6}" ] || fail "the client stopped after $cycles attach cycles"
echo "$cycles attach/detach cycles; $(tail -1 "$T/client.out")"
