#!/bin/bash
# calltrace view in a real browser: a page from another origin (standing in for
# ui.perfetto.dev, which is not reachable here; --ui-origin allows it) fetches the
# trace through CORS and parses it, plain and gzip-compressed (-z); a page from an
# origin that is not allowed cannot read it; the response carries exactly the
# allowed origin, and the default one is https://ui.perfetto.dev.
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/viewlib.sh"
require_calltrace
build nested O0
mkdir -p "$T/page" && cp "$VIEW_LIB/fetch.html" "$T/page/"
page_server "$T/page"
ALLOWED=$PAGE_ORIGIN
page_server "$T/page"   # a second origin (other port), not allowed
OTHER=$PAGE_ORIGIN

# expect_page RESULT_REGEX PAGE_ORIGIN TRACE_URL
expect_page() {
    local dom
    dom=$(chromium_dump "$2/fetch.html?u=$3")
    local got
    got=$(printf '%s' "$dom" | sed -n 's|.*<pre id="out">\([^<]*\)</pre>.*|\1|p')
    printf '%s\n' "$got" | grep -Eq "$1" ||
        fail "page from $2 fetching $3: expected /$1/, got '$got'"
    note "page from $2: $got"
}

for form in plain gzip; do
    CTX="[$form]"
    if [ $form = gzip ]; then ct_run -z -- "$BIN"; name=trace.json.gz; else ct_run "$BIN"; name=trace.json; fi
    expect_rc 0
    [ -f "$CT_DIR/$name" ] || fail "no $name in $CT_DIR: $(ls "$CT_DIR")"
    calls=$(grep -c '"ph":"X"' <(if [ $form = gzip ]; then zcat "$CT_DIR/$name"; else cat "$CT_DIR/$name"; fi))
    view_start view --server-only --port 0 --ui-origin "$ALLOWED" "$CT_DIR"
    [ "$VIEW_URL" = "$ALLOWED/#!/?url=http://127.0.0.1:$VIEW_PORT$VIEW_BASE/$name" ] ||
        fail "printed URL '$VIEW_URL' is not the deep link into $ALLOWED"
    trace_url=http://127.0.0.1:$VIEW_PORT$VIEW_BASE/$name
    [ "$(http_probe header "$VIEW_PORT" "$VIEW_BASE/$name" Access-Control-Allow-Origin)" = "$ALLOWED" ] ||
        fail "Access-Control-Allow-Origin is not $ALLOWED"
    expect_page "^OK events=[0-9]+ calls=$calls\$" "$ALLOWED" "$trace_url"
    expect_page "^ERR TypeError: Failed to fetch" "$OTHER" "$trace_url"
    view_stop
    [ "$VIEW_RC" = 0 ] || fail "view exited $VIEW_RC after SIGTERM, expected 0: $(cat "$VIEW_ERR")"
done

CTX="[default origin]"
view_start view --server-only --port 0 "$CT_DIR"
[ "$(http_probe header "$VIEW_PORT" "$VIEW_BASE/trace.json.gz" Access-Control-Allow-Origin)" = https://ui.perfetto.dev ] ||
    fail "the default Access-Control-Allow-Origin is not https://ui.perfetto.dev"
expect_page "^ERR TypeError: Failed to fetch" "$ALLOWED" "http://127.0.0.1:$VIEW_PORT$VIEW_BASE/trace.json.gz"
view_stop
