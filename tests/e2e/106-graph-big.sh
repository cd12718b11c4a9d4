#!/bin/bash
# graph on big programs.
#  - Graphviz 2.43's dot fails with "trouble in init_rank" on the graphs of big programs grouped
#    by source file (lua, jq, redis): calltrace draws the graph again without the groups and
#    says so in one line. A stand-in dot (first on PATH) fails like 2.43 whenever the graph has
#    clusters, printing 2,800 lines as 2.43 does, and keeps what it was given: the second graph
#    is the first without its clusters. tests/progs/tangle.c has the shape of graph the real
#    2.43 fails on; with a dot that lays it out, nothing is said.
#  - When dot fails anyway, its error output is one line: the first error, and how many more.
#  - -n N keeps the N functions with the largest total time (those report lists first), the
#    calls of the others hanging from their nearest kept caller.
#  - C++ names are shortened in the labels (templates and parameters emptied), whole in the
#    tooltips.
#  - A real program: Debian's sqlite3 with libsqlite3 (-l), its 20 hottest functions rendered.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
command -v dot >/dev/null || fail "Graphviz's dot missing: run scripts/install-deps.sh (package graphviz)"

build tangle O2 "$PROGS_DIR/tangle_parse.c" "$PROGS_DIR/tangle_eval.c"
ct_run "$BIN" 6
expect_rc 0
chk check-counts -f "$CT_OUT"
run=$CT_DIR

# a dot like Graphviz 2.43's on these graphs: fails on clusters, writes its inputs to dot.in.N
mkdir "$T/fakedot" && cat >"$T/fakedot/dot" <<'SH'
#!/bin/bash
# asked which formats it writes (graph -o FILE.svg asks first), answers as dot does
if [ "$1" = "-T?" ]; then
    echo 'Format: "?" not recognized. Use one of: dot png svg' >&2
    exit 1
fi
n=$(ls "$FAKE_DIR"/dot.in.* 2>/dev/null | wc -l)
cat >"$FAKE_DIR/dot.in.$n"
out=
while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
if [ "$FAKE_FAIL" = always ] || grep -q 'subgraph cluster' "$FAKE_DIR/dot.in.$n"; then
    echo "Error: trouble in init_rank" >&2
    for i in $(seq 2799); do printf '\tf%d 5\n' "$i" >&2; done
    exit 1
fi
echo '<svg>fake</svg>' >"$out"
SH
chmod +x "$T/fakedot/dot"
export FAKE_DIR=$T/fakedot

CTX="[init_rank: drawn again without the groups]"
PATH=$T/fakedot:$PATH ct_raw graph -o "$T/g.svg" "$run"
expect_rc 0
[ "$(wc -l <"$CT_ERR")" = 1 ] &&
    grep -qxF "calltrace: $T/g.svg: Graphviz's dot cannot lay out this graph grouped by source file (\"trouble in init_rank\"): drawn without the groups" "$CT_ERR" ||
    fail "not the one line saying so: $(head -5 "$CT_ERR")"
grep -q fake "$T/g.svg" || fail "no picture written"
[ -f "$FAKE_DIR/dot.in.1" ] && [ ! -f "$FAKE_DIR/dot.in.2" ] || fail "dot was not run twice: $(ls "$FAKE_DIR")"
grep -q 'subgraph cluster' "$FAKE_DIR/dot.in.0" || fail "the first graph had no groups"
grep -q 'subgraph' "$FAKE_DIR/dot.in.1" && fail "the second graph has groups"
diff <(grep -E '^ +f[0-9]+ ' "$FAKE_DIR/dot.in.0" | sed 's/^ *//' | sort) \
    <(grep -E '^ +f[0-9]+ ' "$FAKE_DIR/dot.in.1" | sed 's/^ *//' | sort) >/dev/null ||
    fail "the second graph does not have the first one's nodes and edges"

CTX="[dot fails: one line]"
rm -f "$FAKE_DIR"/dot.in.*
PATH=$T/fakedot:$PATH FAKE_FAIL=always ct_raw graph -g none -o "$T/h.svg" "$run"
expect_rc 1
[ "$(wc -l <"$CT_ERR")" = 1 ] || fail "dot's error output not summed up: $(wc -l <"$CT_ERR") lines"
grep -q "^calltrace: $T/h.svg: dot failed (exit status 1): Error: trouble in init_rank (and 2799 more lines)" "$CT_ERR" ||
    fail "the line: $(cat "$CT_ERR")"
[ -e "$T/h.svg" ] && fail "a picture was left by the failed dot"

CTX="[the real dot]"
ct_raw graph -o "$T/real.svg" "$run"
expect_rc 0
grep -q '<svg' "$T/real.svg" || fail "no SVG"
if [ -s "$CT_ERR" ]; then
    grep -q "init_rank\"): drawn without the groups" "$CT_ERR" || fail "unexpected: $(cat "$CT_ERR")"
    note "this Graphviz cannot lay out tangle's groups: drawn without them"
fi

# edges FILE: "caller->callee=N" sorted; nodes FILE: the labels' names sorted
edges() {
    python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
names = dict(re.findall(r'(f\d+) \[label="([^\\"]+)\\n', text))
print(" ".join(sorted(f"{names[a]}->{names[b]}={n}" for a, b, n in re.findall(r'(f\d+) -> (f\d+) \[label="(\d+)"', text))))
PY
}
nodes() { sed -n 's/^ *f[0-9]* \[label="\([^\\"]*\)\\n.*/\1/p' "$1" | sort | tr '\n' ' '; }

CTX="[-n]"
build nested O0
ct_run "$BIN"
expect_rc 0
ct_raw graph -n 2 "$CT_DIR"
expect_rc 0
[ "$(edges "$CT_OUT")" = "main->a=100" ] || fail "-n 2: $(edges "$CT_OUT")"
ct_raw report -s total -f csv "$run"
want=$(tail -n +2 "$CT_OUT" | head -5 | cut -d, -f1 | tr -d '"' | sort | tr '\n' ' ')
ct_raw graph -n 5 "$run"
expect_rc 0
[ "$(nodes "$CT_OUT")" = "$want" ] || fail "-n 5: $(nodes "$CT_OUT"), report's first five: $want"
grep -q 'label="[^"]*: the 5 hottest of 10 functions"' "$CT_OUT" || fail "-n 5: the graph does not say what it shows"

CTX="[C++ names]"
build argcxx O0
ct_run "$BIN"
expect_rc 0
ct_raw graph "$CT_DIR"
expect_rc 0
got=$(nodes "$CT_OUT")
[ "$got" = "Vec::operator+() const Vec::scaled() const leaf_sum() long twice<>() main " ] ||
    fail "labels: $got"
ct_raw report -f csv "$CT_DIR"
full=$(tail -n +2 "$CT_OUT" | python3 -c 'import csv,sys; print("|".join(sorted(r[0] for r in csv.reader(sys.stdin))))')
ct_raw graph "$CT_DIR"
tips=$(sed -n 's/.*tooltip="\([^"]*\)".*/\1/p' "$CT_OUT" | sort | tr '\n' '|' | sed 's/|$//')
[ "$tips" = "$full" ] || fail "tooltips: $tips; report: $full"

CTX="[sqlite3 -l, -n 20]"
SQLITE=/usr/bin/sqlite3
[ -x $SQLITE ] || fail "$SQLITE missing: run scripts/install-deps.sh (package sqlite3)"
printf 'create table t(a integer, b text);\nwith recursive c(x) as (select 1 union all select x + 1 from c where x < 300) insert into t select x, %s from c;\nselect count(*), sum(a) from t;\n' "'row' || x" >"$T/work.sql"
RUN_STDIN=$T/work.sql ct_run -l 'libsqlite3*' -- $SQLITE :memory:
expect_rc 0
ct_raw graph -n 20 -o "$T/sqlite.svg" "$CT_DIR"
expect_rc 0
[ -s "$CT_ERR" ] && [ "$(grep -c 'drawn without the groups' "$CT_ERR")" != "$(wc -l <"$CT_ERR")" ] &&
    fail "graph said: $(cat "$CT_ERR")"
[ "$(grep -c 'class="node"' "$T/sqlite.svg")" = 20 ] || fail "not 20 nodes in the picture"
exit 0
