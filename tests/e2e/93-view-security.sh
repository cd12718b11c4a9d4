#!/bin/bash
# calltrace view against the other local users (root's view of a directory they can
# write, on a port they can connect to):
#  (a) what is sent is the trace checked when serving began, from the descriptor opened
#      then: replacing trace.json afterwards with a link to a root-only file, or with
#      another file, or moving the whole run directory away and planting a new one,
#      changes no byte that is sent (plain run, and a directory of runs); a trace given
#      as a link is refused; RUN/window/ planted as a link, or owned by another user,
#      is refused and nothing is written through it; the one view makes is 0700;
#  (b) every URL starts with a random token (32 hex digits, new for each view): a
#      request without it, with a wrong or partial one, is 404 with none of the trace's
#      bytes, and its connection is closed (not kept alive for more guesses);
#  (c) 200 connections that send nothing do not keep a real fetch from being served at
#      once, and are dropped after the request timeout (5 s).
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/viewlib.sh"
require_calltrace
sample_run
cp "$RUN/trace.json" "$T/orig.json"
printf 'ROOT-ONLY-%s\n' "$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$T/secret"
chmod 600 "$T/secret"

# served_is_orig WHAT PATH: GET PATH is 200 with exactly the original trace, no secret
served_is_orig() {
    local got
    got=$(http_probe get "$VIEW_PORT" "$2" "$T/got") || fail "$1: GET $2 failed"
    [ "$got" = 200 ] || fail "$1: GET $2 answered $got"
    grep -q "ROOT-ONLY" "$T/got" && fail "$1: the root-only file was served"
    cmp -s "$T/got" "$T/orig.json" || fail "$1: what is served is not the trace checked at the start"
    note "$1: still the checked trace"
}

CTX="[a: swapped trace]"
view_start view --server-only --port 0 "$RUN"
served_is_orig "before" "$VIEW_BASE/trace.json"
ln -s "$T/secret" "$RUN/trace.json.new"
mv -T "$RUN/trace.json.new" "$RUN/trace.json"
served_is_orig "trace.json a link to a root-only file" "$VIEW_BASE/trace.json"
[ "$(http_probe header "$VIEW_PORT" "$VIEW_BASE/trace.json" Content-Length)" = "$(stat -c %s "$T/orig.json")" ] ||
    fail "the length sent is not the checked trace's"
printf '{"traceEvents":[{"name":"planted","ph":"X","ts":1,"dur":1,"pid":1,"tid":1}]}\n' >"$RUN/other.json"
mv -T "$RUN/other.json" "$RUN/trace.json"
served_is_orig "trace.json replaced by another file" "$VIEW_BASE/trace.json"
mv "$RUN" "$RUN.moved"
mkdir "$RUN"
ln -s "$T/secret" "$RUN/trace.json"
served_is_orig "run directory swapped" "$VIEW_BASE/trace.json"
view_stop
rm -rf "$RUN"
mv "$RUN.moved" "$RUN"
cp "$T/orig.json" "$RUN/trace.json"

CTX="[a: swapped trace in a directory of runs]"
mkdir "$T/runs"
cp -a "$RUN" "$T/runs/one"
view_start view --server-only --port 0 "$T/runs"
served_is_orig "index, before" "$VIEW_BASE/one/trace.json"
ln -sf "$T/secret" "$T/runs/one/trace.json"
served_is_orig "index, trace.json a link" "$VIEW_BASE/one/trace.json"
view_stop

CTX="[a: a link given]"
ln -s "$RUN/trace.json" "$T/link.json"
ct_raw view --server-only --port 0 "$T/link.json"
one_stderr_line_error "a trace given as a link"
grep -q 'link.json: a symbolic link' "$CT_ERR" || fail "unclear error: $(cat "$CT_ERR")"

CTX="[a: window directory]"
# A root-only directory, the target another user points RUN/window at.
mkdir -m 700 "$T/precious"
echo precious >"$T/precious/trace.pftrace"
cp -a "$RUN" "$T/linked-window"
ln -s "$T/precious" "$T/linked-window/window"
ct_raw view --server-only --port 0 --max-calls 5 "$T/linked-window"
one_stderr_line_error "RUN/window a link"
grep -q 'linked-window/window: something other than a directory is in its place' "$CT_ERR" || fail "unclear error: $(cat "$CT_ERR")"
[ "$(ls -A "$T/precious")" = trace.pftrace ] && [ "$(cat "$T/precious/trace.pftrace")" = precious ] ||
    fail "view wrote through the RUN/window link: $(ls -l "$T/precious")"
cp -a "$RUN" "$T/foreign-window"
mkdir "$T/foreign-window/window"
chown nobody "$T/foreign-window/window"
ct_raw view --server-only --port 0 --max-calls 5 "$T/foreign-window"
one_stderr_line_error "RUN/window of another user"
grep -q "foreign-window/window: owned by nobody, not by you" "$CT_ERR" ||
    fail "unclear error: $(cat "$CT_ERR")"
[ -z "$(ls -A "$T/foreign-window/window")" ] || fail "view wrote into another user's RUN/window"
for i in 1 2; do # made the first time, taken as ours the second
    view_start view --once --server-only --port 0 --timeout 100 --max-calls 5 "$RUN"
    [ "$(http_probe get "$VIEW_PORT" "$VIEW_BASE/trace.pftrace" "$T/window.pftrace")" = 200 ] ||
        fail "view $i of a window: GET failed"
    view_wait_exit 10
    [ "$VIEW_RC" = 0 ] || fail "view $i of a window exited $VIEW_RC: $(cat "$VIEW_ERR")"
    cmp -s "$T/window.pftrace" "$RUN/window/trace.pftrace" || fail "view $i: the window served differs"
done
[ "$(stat -c %a "$RUN/window")" = 700 ] || fail "RUN/window is $(stat -c %a "$RUN/window"), not 700"

CTX="[b: token]"
view_start view --server-only --port 0 "$RUN"
first=$VIEW_TOKEN
view_stop
view_start view --server-only --port 0 "$RUN"
[ "$VIEW_TOKEN" != "$first" ] || fail "two views got the same token $first"
tok=$VIEW_TOKEN
last=${tok: -1}
[ "$last" = 0 ] && other=1 || other=0
wrong=${tok%?}$other
for p in /trace.json "/$wrong/trace.json" "/${tok:0:31}/trace.json" "/${tok}0/trace.json" \
    "/${tok:1}/trace.json" "/$(printf '%s' "$tok" | tr a-f A-F)/trace.json" "/$tok" \
    "/$tok/../trace.json" "/x/$tok/trace.json" "/$tok$tok/trace.json"; do
    got=$(http_probe get "$VIEW_PORT" "$p" "$T/got") || fail "GET $p failed"
    [ "$got" = 404 ] || fail "GET $p answered $got, expected 404"
    [ "$(cat "$T/got")" = "not found" ] || fail "GET $p sent '$(head -c 200 "$T/got")'"
done
[ "$(http_probe kept "$VIEW_PORT" "/$wrong/trace.json")" = "404
closed" ] || fail "a wrong token's connection was kept open"
served_is_orig "the right token" "$VIEW_BASE/trace.json"

CTX="[c: idle connections]"
out=$(http_probe flood "$VIEW_PORT" 200 "$VIEW_BASE/trace.json" "$T/flood.json")
note "$(printf '%s' "$out" | tr '\n' ' ')"
read -r status took connected <<<"$(head -n 1 <<<"$out")"
[ "$connected" = 200 ] || fail "only $connected of 200 idle connections were accepted"
[ "$status" = 200 ] || fail "with 200 idle connections, the fetch got $status"
awk -v t="$took" 'BEGIN { exit !(t < 3) }' || fail "with 200 idle connections, the fetch took $took s"
cmp -s "$T/flood.json" "$T/orig.json" || fail "with 200 idle connections, the trace fetched differs"
read -r _ dropped last <<<"$(tail -n 1 <<<"$out")"
[ "$dropped" = 200 ] || fail "the server dropped $dropped of 200 idle connections within 30 s"
awk -v t="$last" 'BEGIN { exit !(t >= 3 && t < 15) }' ||
    fail "the idle connections were dropped after $last s, not after the 5 s timeout"
kill -0 "$VIEW_PID" 2>/dev/null || fail "the server died"
served_is_orig "after the idle connections" "$VIEW_BASE/trace.json"
view_stop
[ "$VIEW_RC" = 0 ] || fail "view exited $VIEW_RC after SIGTERM: $(cat "$VIEW_ERR")"
