#!/bin/bash
# calltrace -p on real servers under load, SIGKILLed at random moments while attached (while
# it patches, records or writes), then attached again: Debian's redis-server under
# redis-benchmark, and an nginx worker (user nobody) under ab. Every key written before is
# still right after each kill, redis answers, redis-benchmark and ab report no error, every
# response of nginx is byte-identical to the file it serves, and no process died. Before, the
# breakpoints calltrace left behind killed redis at the first or second kill (SIGTRAP), and a
# second attachment broke the calls the first one had hooked (SIGILL).
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/attachlib.sh"
require_calltrace
engine_unsupported ptrace "the ptrace engine's breakpoints kill a program whose calltrace died"
for tool in redis-server redis-cli redis-benchmark nginx ab curl; do
    command -v "$tool" >/dev/null || { echo "skipped: no $tool (scripts/install-deps.sh --test installs it)"; exit 77; }
done
ROUNDS=${KILL_ROUNDS:-6}
REDIS=""
NGINX_CONF=""
LOAD=()
_servers_cleanup() {
    local p
    for p in "${LOAD[@]}"; do kill "$p" 2>/dev/null; done
    [ -n "$REDIS" ] && kill "$REDIS" 2>/dev/null
    [ -n "$NGINX_CONF" ] && nginx -c "$NGINX_CONF" -s stop 2>/dev/null
    _attach_cleanup
}
trap _servers_cleanup EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# kill_rounds PID CHECK: ROUNDS times, attach to PID, SIGKILL calltrace after a pseudo-random
# delay of 0-1.5 s (the same each run), then run CHECK.
kill_rounds() {
    local pid=$1 check=$2 r ct delay
    for r in $(seq 1 "$ROUNDS"); do
        CTX="[$check, kill $r]"
        "$CALLTRACE" -q -p "$pid" -o "$T/run-$check-$r" 2>"$T/ct.err" &
        ct=$!
        ATTACH_CT=$ct
        delay=$(awk -v r="$r" 'BEGIN { srand(r * 7919); printf "%.2f", rand() * 1.5 }')
        sleep "$delay" # the moment of the kill is what varies; no result is waited for
        kill -KILL "$ct"
        wait "$ct" 2>/dev/null
        ATTACH_CT=""
        rm -rf "$T/run-$check-$r"
        wait_until 10 "the server to be let go" traced_by "$pid" 0
        kill -0 "$pid" 2>/dev/null || fail "the server died (calltrace killed after ${delay} s)"
        "$check"
    done
}

# --- redis-server under redis-benchmark
port=$(free_port)
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >"$T/redis.log" 2>&1 &
REDIS=$!
wait_until 10 "redis to start" bash -c "redis-cli -p $port PING 2>/dev/null | grep -q PONG"
for i in $(seq 1 2000); do echo "SET k$i v$i"; done | redis-cli -p "$port" --pipe >/dev/null ||
    fail "cannot write the keys"
redis-benchmark -p "$port" -q -l -c 16 -t set,get,incr,lpush,lpop >"$T/bench.out" 2>&1 &
LOAD+=($!)
redis_right() {
    [ "$(redis-cli -p "$port" PING)" = PONG ] || fail "redis does not answer"
    local bad
    bad=$(for i in $(seq 1 2000); do echo "GET k$i"; done | redis-cli -p "$port" |
        awk '$0 != "v" NR { n++ } END { print n + 0 }')
    [ "$bad" = 0 ] || fail "$bad of the 2000 keys written before are wrong"
}
kill_rounds "$REDIS" redis_right
kill "${LOAD[0]}"
wait "${LOAD[0]}" 2>/dev/null
LOAD=()
grep -qi error "$T/bench.out" && fail "redis-benchmark saw errors: $(grep -i error "$T/bench.out" | head -3)"

# --- an nginx worker (user nobody) under ab
port=$(free_port)
mkdir -p "$T/www" "$T/ngx"
head -c 30000 /dev/urandom | base64 >"$T/www/f.txt"
chmod 755 "$T" "$T/www" && chmod 644 "$T/www/f.txt"
NGINX_CONF=$T/ngx/nginx.conf
cat >"$NGINX_CONF" <<CONF
worker_processes 1;
error_log $T/ngx/error.log;
pid $T/ngx/nginx.pid;
events { worker_connections 256; }
http { access_log off; server { listen 127.0.0.1:$port; root $T/www; } }
CONF
nginx -c "$NGINX_CONF" || fail "nginx did not start: $(cat "$T/ngx/error.log")"
wait_until 10 "an nginx worker" pgrep -f "nginx: worker" -P "$(cat "$T/ngx/nginx.pid")"
worker=$(pgrep -f "nginx: worker" -P "$(cat "$T/ngx/nginx.pid")")
want=$(md5sum <"$T/www/f.txt")
ab -q -t 600 -n 100000000 -c 8 "http://127.0.0.1:$port/f.txt" >"$T/ab.out" 2>&1 &
LOAD+=($!)
nginx_right() {
    local k got
    for k in 1 2 3; do
        got=$(curl -sf "http://127.0.0.1:$port/f.txt" | md5sum)
        [ "$got" = "$want" ] || fail "a response differs from the file nginx serves"
    done
}
kill_rounds "$worker" nginx_right
kill -INT "${LOAD[0]}"
wait "${LOAD[0]}" 2>/dev/null
LOAD=()
CTX=""
grep -q '^Failed requests: *0$' "$T/ab.out" || fail "ab saw failed requests: $(grep -E 'Failed|Complete|Non-2xx' "$T/ab.out")"
grep -q 'Non-2xx' "$T/ab.out" && fail "ab saw error responses: $(grep 'Non-2xx' "$T/ab.out")"
[ "$(pgrep -f "nginx: worker" -P "$(cat "$T/ngx/nginx.pid")")" = "$worker" ] ||
    fail "the nginx worker was replaced (it died): $(tail -3 "$T/ngx/error.log")"
echo "redis and an nginx worker survived $ROUNDS SIGKILLs of calltrace each, under load, unharmed"
