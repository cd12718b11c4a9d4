#!/bin/bash
# Large runs: report reads the binary record, never trace.json, with memory independent of
# the run's size: the peak RSS for 3 million events is within 2 MiB of that for 300 thousand,
# and the exact call counts of the synthetic tree come out.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
GEN=$ROOT/bench/gen-record
[ -x "$GEN" ] || fail "$GEN missing (make bench/gen-record)"
CTX="[big]"
rss() { sed -n 's/.*peak RSS \([0-9]*\) KiB/\1/p' "$CT_ERR"; }
"$GEN" "$T/small" 300000 >/dev/null || fail "gen-record failed"
"$GEN" "$T/big" 3000000 >/dev/null || fail "gen-record failed"
CALLTRACE_STATS=1 ct_raw report -f csv "$T/small"
expect_rc 0
small=$(rss)
CALLTRACE_STATS=1 ct_raw report -f csv "$T/big"
expect_rc 0
big=$(rss)
note "$(cat "$CT_ERR")"
[ -n "$small" ] && [ -n "$big" ] || fail "no stats line: $(cat "$CT_ERR")"
[ "$big" -le $((small + 2048)) ] || fail "peak RSS grows with the run: $small KiB -> $big KiB"
# each tree: 8 nested calls (func_1..3 cycling) and 6 leaves; 28 events each: 3000000 events make 107143 trees
python3 - "$CT_OUT" <<'PY' || fail "synthetic counts"
import csv, sys
r = {x["function"]: int(x["calls"]) for x in csv.DictReader(open(sys.argv[1]))}
trees = 107143
assert r["main"] == 4, r["main"]
assert r["func_1"] + r["func_2"] + r["func_3"] == 8 * trees, r
assert sum(v for k, v in r.items() if k not in ("main", "func_1", "func_2", "func_3")) == 6 * trees
PY
