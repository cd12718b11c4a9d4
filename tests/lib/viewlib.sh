# shellcheck shell=bash
# viewlib.sh -- helpers for the tests of `calltrace view` and `--open` (tests/e2e/4x-*.sh),
# sourced after testlib.sh. They check what view serves by default: the runs they record hold
# the trace calltrace chooses (CT_FORMAT=default), not both formats.
#
#   view_start ARGS...   start `calltrace ARGS...` in the background (stdin /dev/null), wait
#                        for the URL it prints; sets VIEW_PID VIEW_OUT VIEW_ERR VIEW_URL
#                        VIEW_PORT (the port of the printed URL), VIEW_TOKEN (the 32 hex
#                        digits every served path starts with) and VIEW_BASE (/VIEW_TOKEN:
#                        the trace is at $VIEW_BASE/trace.json)
#   view_wait_exit S     wait up to S seconds for it to exit; sets VIEW_RC
#   view_stop            SIGTERM it (if still running) and wait; sets VIEW_RC
#   page_server DIR      serve DIR over HTTP on a free loopback port (another origin than the
#                        trace's); sets PAGE_PORT PAGE_ORIGIN
#   chromium_dump URL    load URL in headless Chromium, print the DOM once the page's
#                        fetches have finished
#   http_probe ...       tests/lib/view/probe.py: raw HTTP requests, see its --help
#   listening PORT       true when something listens on 127.0.0.1:PORT (or any address)
#
# No test starts a real browser: BROWSER is set to `false` unless a test sets its own, and
# DISPLAY/WAYLAND_DISPLAY are unset so xdg-open is never tried.
CT_FORMAT=default

VIEW_LIB=$TESTS_DIR/lib/view
VIEW_PID="" VIEW_OUT="" VIEW_ERR="" VIEW_URL="" VIEW_PORT="" VIEW_TOKEN="" VIEW_BASE="" VIEW_RC=""
PAGE_PIDS=()
export BROWSER=false
unset DISPLAY WAYLAND_DISPLAY

_view_cleanup() {
    [ -n "$VIEW_PID" ] && kill "$VIEW_PID" 2>/dev/null
    local p
    for p in "${PAGE_PIDS[@]}"; do kill "$p" 2>/dev/null; done
    _cleanup
}
trap _view_cleanup EXIT

listening() {
    [ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]
}

_url_printed() { [ -s "$VIEW_OUT" ] && grep -q '^http' "$VIEW_OUT"; }
_view_gone() { ! kill -0 "$VIEW_PID" 2>/dev/null; }

view_start() {
    _next_files
    VIEW_OUT=$_OUT VIEW_ERR=$_ERR CT_ERR=$_ERR
    : >"$VIEW_OUT" # now, not when the background job gets to it: no stale URL is ever read
    timeout -k 5 "${VIEW_TIMEOUT:-300}" "$CALLTRACE" "$@" </dev/null >"$VIEW_OUT" 2>"$VIEW_ERR" &
    VIEW_PID=$!
    local i=0
    until _url_printed; do
        _view_gone && fail "calltrace $* exited before printing a URL: $(cat "$VIEW_ERR")"
        i=$((i + 1))
        [ $i -ge 6000 ] && fail "calltrace $* printed no URL within 60 s: $(cat "$VIEW_ERR")"
        sleep 0.01
    done
    VIEW_URL=$(grep -m 1 "^http" "$VIEW_OUT")
    VIEW_PORT=$(printf '%s\n' "$VIEW_URL" | sed -n 's|.*http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p')
    [ -n "$VIEW_PORT" ] || fail "no 127.0.0.1 port in the printed URL '$VIEW_URL'"
    VIEW_TOKEN=$(printf '%s\n' "$VIEW_URL" |
        sed -n 's|.*http://127\.0\.0\.1:[0-9]*/\([0-9a-f]\{32\}\)/.*|\1|p')
    [ -n "$VIEW_TOKEN" ] || fail "no token (32 hex digits) in the printed URL '$VIEW_URL'"
    VIEW_BASE=/$VIEW_TOKEN
    # with --once and a $BROWSER that fetches at once, the server may be done already
    listening "$VIEW_PORT" || _view_gone || fail "URL printed but nothing listens on port $VIEW_PORT"
}

view_wait_exit() {
    local limit=$(($1 * 100)) i=0
    until _view_gone; do
        i=$((i + 1))
        [ $i -ge $limit ] && fail "calltrace (pid $VIEW_PID) still running after $1 s: $(cat "$VIEW_ERR")"
        sleep 0.01
    done
    wait "$VIEW_PID"
    VIEW_RC=$?
    VIEW_PID=""
}

view_stop() {
    if [ -n "$VIEW_PID" ]; then
        kill -TERM "$VIEW_PID" 2>/dev/null
        view_wait_exit 10
    fi
}

page_server() {
    local dir=$1 log
    _next_files
    log=$_OUT
    python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$dir" >"$log" 2>&1 &
    PAGE_PIDS+=($!)
    local i=0
    until grep -q 'port [0-9]' "$log" 2>/dev/null; do
        i=$((i + 1))
        [ $i -ge 1000 ] && fail "the test page server did not start: $(cat "$log")"
        sleep 0.01
    done
    PAGE_PORT=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$log" | head -n 1)
    PAGE_ORIGIN=http://127.0.0.1:$PAGE_PORT
    wait_until 10 "page server listening on $PAGE_PORT" listening "$PAGE_PORT"
}

chromium_dump() {
    command -v chromium >/dev/null || fail "chromium is not installed (scripts/install-deps.sh --test installs it)"
    local profile
    profile=$(mktemp -d "$T/chromium.XXXXXX")
    timeout -k 5 60 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$profile" --virtual-time-budget=5000 --dump-dom "$1" 2>"$T/chromium.err" ||
        fail "chromium failed on $1: $(tail -n 5 "$T/chromium.err")"
}

# The frequent probes are done by bash itself (/dev/tcp): starting python for each is slow on a
# loaded machine. The rest go to probe.py.
_http_status() {   # PORT PATH [METHOD [HOST]]
    local fd status=""
    exec {fd}<>"/dev/tcp/127.0.0.1/$1" || return 1
    printf '%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "${3:-GET}" "$2" \
        "${4:-127.0.0.1:$1}" >&"$fd"
    IFS=' ' read -r -t 20 _ status _ <&"$fd"
    exec {fd}>&-
    [ -n "$status" ] && echo "$status"
}

_http_expect() {   # PORT; stdin: lines "WANT PATH [METHOD [HOST]]"
    local want path rest got bad=0
    while read -r want path rest; do
        [ -n "$want" ] || continue
        # shellcheck disable=SC2086 # METHOD and HOST split on purpose
        got=$(_http_status "$1" "$path" $rest)
        if [ "$got" != "$want" ]; then
            echo "$path $rest answered '$got', expected $want"
            bad=1
        fi
    done
    return $bad
}

http_probe() {
    case $1 in
    status) _http_status "${@:2}" ;;
    expect) _http_expect "$2" ;;
    silent)
        local fd
        exec {fd}<>"/dev/tcp/127.0.0.1/$2" || return 1
        printf 'GET /tra' >&"$fd"
        exec {fd}>&-
        ;;
    *) python3 "$VIEW_LIB/probe.py" "$@" ;;
    esac
}

# sample_run: a small traced run of tests/progs/nested.c to serve; its directory in RUN.
sample_run() {
    build nested O0
    ct_run "$BIN"
    expect_rc 0
    RUN=$CT_DIR
}
