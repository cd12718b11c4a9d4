#!/bin/bash
# calltrace view against the other local users (root's view of a directory they can
# write, on a port they can connect to):
#  (b) every URL starts with a random token (32 hex digits, new for each view): a
#      request without it, with a wrong or partial one, is 404 with none of the trace's
#      bytes, and its connection is closed (not kept alive for more guesses);
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/viewlib.sh"
require_calltrace
sample_run
cp "$RUN/trace.json" "$T/orig.json"

# served_is_orig WHAT PATH: GET PATH is 200 with exactly the original trace, no secret
served_is_orig() {
    local got
    got=$(http_probe get "$VIEW_PORT" "$2" "$T/got") || fail "$1: GET $2 failed"
    [ "$got" = 200 ] || fail "$1: GET $2 answered $got"
    grep -q "ROOT-ONLY" "$T/got" && fail "$1: the root-only file was served"
    cmp -s "$T/got" "$T/orig.json" || fail "$1: what is served is not the trace checked at the start"
    note "$1: still the checked trace"
}

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

view_stop
[ "$VIEW_RC" = 0 ] || fail "view exited $VIEW_RC after SIGTERM: $(cat "$VIEW_ERR")"
