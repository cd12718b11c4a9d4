#!/bin/bash
# calltrace graph: edge counts equal the known call structure of nested.c (main -> a 100,
# a -> b 200, b -> c 200, main -> c 50); a left-out function's callees hang from its nearest
# kept caller; -D; clusters by source file; a glob matching nothing warns and lists functions;
# rendering with dot (when installed) and the message when dot is missing.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build nested O0
ct_run "$BIN"
expect_rc 0
run=$CT_DIR

# edges FILE: "caller->callee=N" sorted, from the DOT text
edges() {
    python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
names = dict(re.findall(r'(f\d+) \[label="([^\\"]+)\\n', text))
out = [f"{names[a]}->{names[b]}={n}" for a, b, n in re.findall(r'(f\d+) -> (f\d+) \[label="(\d+)"', text)]
print(" ".join(sorted(out)))
PY
}

CTX="[graph]"
ct_raw graph "$run"
expect_rc 0
got=$(edges "$CT_OUT")
[ "$got" = "a->b=200 b->c=200 main->a=100 main->c=50" ] || fail "edges: $got"
grep -q 'label="main\\ncalls: 1\\n' "$CT_OUT" || fail "no main node with its calls"
grep -q 'subgraph cluster_0' "$CT_OUT" && grep -q 'label="[^"]*nested.c"' "$CT_OUT" ||
    fail "nodes not clustered by source file: $(grep -A1 subgraph "$CT_OUT")"

CTX="[graph -N b]"
ct_raw graph -N b "$run"
expect_rc 0
got=$(edges "$CT_OUT")
[ "$got" = "a->c=200 main->a=100 main->c=50" ] || fail "b's callees must hang from a: $got"

CTX="[graph -F]"
ct_raw graph -F main -F c "$run"
got=$(edges "$CT_OUT")
[ "$got" = "main->c=250" ] || fail "c hangs from main through a and b: $got"

CTX="[graph -D 2]"
ct_raw graph -D 2 -g image "$run"
got=$(edges "$CT_OUT")
[ "$got" = "main->a=100 main->c=50" ] || fail "-D 2: $got"
grep -q 'label="nested-O0"' "$CT_OUT" || fail "-g image: no cluster named after the executable"

CTX="[graph glob]"
ct_raw graph -F 'nomatch*' "$run"
expect_rc 0
grep -q "^calltrace: -F 'nomatch\*': matches no function with calls (.*main" "$CT_ERR" ||
    fail "unmatched glob: $(cat "$CT_ERR")"

CTX="[graph render]"
if command -v dot >/dev/null; then
    ct_raw graph -o "$T/g.svg" "$run"
    expect_rc 0
    grep -q '<svg' "$T/g.svg" || fail "no SVG written"
    grep -q '>main<' "$T/g.svg" || fail "SVG has no main node"
    ct_raw graph -o "$T/g.dot" "$run"
    dot -Tsvg "$T/g.dot" -o "$T/g2.svg" || fail "dot rejects the DOT file"
else
    note "Graphviz not installed: rendering not tested"
fi
mkdir "$T/bin" && ln -s "$(command -v timeout)" "$T/bin/timeout"
PATH=$T/bin ct_raw graph -o "$T/nodot.svg" "$run"
one_stderr_line_error "graph without dot"
grep -q "dot is not installed" "$CT_ERR" || fail "no clear message without dot: $(cat "$CT_ERR")"
[ -e "$T/nodot.svg" ] && fail "an SVG was written without dot"
exit 0
