#!/bin/bash
# calltrace report --hist: tests/progs/naps.c sleeps 4.5 ms 5 times, 18 ms 3 times, 70 ms
# twice, and prints how long each sleep took by its own clock. The power-of-two buckets of
# nap's durations are those of the program's measures (each call's traced time may exceed its
# measure by at most 2 ms: the tracing and a printf); p50, p90, p99 and max are the 5th, 9th,
# 10th and 10th of the ten, within 1/64 and the same slack; csv and json; report's csv and json
# give the same p99; a glob; a function with no calls.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

build naps O0
ct_run "$BIN" 0 0 hist
expect_rc 0
run=$CT_DIR out=$CT_OUT
SLACK=2000000

CTX="[hist json]"
ct_raw report --hist nap -f json "$run"
expect_rc 0
python3 - "$CT_OUT" "$out" "$SLACK" <<'PY' || fail "histogram (see above): $(head -c 1500 "$CT_OUT")"
import json, sys
h = json.load(open(sys.argv[1]))["histograms"]
slack = int(sys.argv[3])
took = sorted(int(l.split()[2]) for l in open(sys.argv[2]) if l.startswith("nap "))
asked = sorted(int(l.split()[1]) for l in open(sys.argv[2]) if l.startswith("nap "))
bad = 0
def check(cond, what):
    global bad
    if not cond:
        print(what); bad = 1
check(asked == [4500] * 5 + [18000] * 3 + [70000] * 2, f"the program asked for {asked}")
check([x["name"] for x in h] == ["nap"], f"histograms of {[x['name'] for x in h]}")
h = h[0]
check(h["calls"] == 10, f"{h['calls']} calls")
buckets = h["buckets"]
# the traced durations, one per call, rebuilt from the buckets (as bucket indexes), in order
got = []
for b in buckets:
    lo, hi = b["low_ns"], b["high_ns"]
    check(hi == 2 * lo and lo & (lo - 1) == 0, f"not a power-of-two bucket: {b}")
    got += [lo.bit_length()] * b["count"]
check(len(got) == 10, f"{len(got)} durations in the buckets")
check(buckets[0]["count"] > 0 and buckets[-1]["count"] > 0, f"empty end bucket: {buckets}")
check(all(buckets[i]["high_ns"] == buckets[i + 1]["low_ns"] for i in range(len(buckets) - 1)),
      "buckets not contiguous")
# a call's bucket is that of its measure, or of its measure plus the slack
for i, (k, m) in enumerate(zip(got, took)):
    check(k in (m.bit_length(), (m + slack).bit_length()),
          f"call {i + 1} of 10 by length: in [2^{k - 1}, 2^{k}), the program measured {m} ns")
def near(name, value, rank):
    m = took[rank - 1]
    check(m <= value <= (m + slack) * (1 + 1 / 64), f"{name} {value} ns; call {rank} took {m} ns")
near("p50", h["p50_ns"], 5)
near("p90", h["p90_ns"], 9)
near("p99", h["p99_ns"], 10)
near("max", h["max_ns"], 10)
check(took[0] <= h["min_ns"] <= took[0] + slack, f"min {h['min_ns']}")
sys.exit(bad)
PY
json_p99=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["histograms"][0]["p99_ns"])' "$CT_OUT")
# the table's bucket lines as bpftrace labels them, from the json's buckets
want_lines=$(python3 - "$CT_OUT" <<'PY'
import json, sys
def label(v):
    for unit in ("", "K", "M", "G"):
        if v < 1024 or v % 1024:
            return f"{v}{unit}"
        v //= 1024
for b in json.load(open(sys.argv[1]))["histograms"][0]["buckets"]:
    print(f"[{label(b['low_ns'])}, {label(b['high_ns'])}) {b['count']}")
PY
)

CTX="[hist table]"
ct_raw report --hist 'na*' "$run"
expect_rc 0
head -n 1 "$CT_OUT" | grep -qx 'nap: 10 calls, their durations in ns' || fail "header: $(head -n 1 "$CT_OUT")"
got=$(sed -n 's/^\(\[[^)]*)\) *\([0-9]*\) |[@ ]*|$/\1 \2/p' "$CT_OUT")
[ "$got" = "$want_lines" ] || fail "table buckets:
$got
json's:
$want_lines"
grep -qE '\|@{52}\|$' "$CT_OUT" || fail "the fullest bucket's bar is not 52 wide: $(cat "$CT_OUT")"
tail -n 1 "$CT_OUT" | grep -qE '^p50 [0-9.]+ ms  p90 [0-9.]+ ms  p99 [0-9.]+ ms  max [0-9.]+ ms$' ||
    fail "percentiles line: $(tail -n 1 "$CT_OUT")"

CTX="[hist csv]"
ct_raw report --hist nap -f csv "$run"
expect_rc 0
head -n 1 "$CT_OUT" | grep -qx 'function,low_ns,high_ns,count' || fail "csv header: $(head -n 1 "$CT_OUT")"
sum=$(awk -F, 'NR > 1 { s += $4 } END { print s }' "$CT_OUT")
[ "$sum" = 10 ] || fail "csv counts add up to $sum"

CTX="[report p99]"
ct_raw report -f csv "$run"
expect_rc 0
got=$(python3 -c 'import csv,sys; print([r["p99_ns"] for r in csv.DictReader(open(sys.argv[1])) if r["function"] == "nap"][0])' "$CT_OUT")
[ "$got" = "$json_p99" ] || fail "report's csv p99 $got, --hist's $json_p99"
ct_raw report -f json "$run"
got=$(python3 -c 'import json,sys; print([f["p99_ns"] for f in json.load(open(sys.argv[1]))["functions"] if f["name"] == "nap"][0])' "$CT_OUT")
[ "$got" = "$json_p99" ] || fail "report's json p99 $got, --hist's $json_p99"

CTX="[hist errors]"
ct_raw report --hist no_such_function "$run"
expect_rc 1
grep -q "no_such_function': no function of that name made a call" "$CT_ERR" || fail "$(cat "$CT_ERR")"
exit 0
