#!/bin/bash
# trace.json format details: top-level shape, X events (validated by the
# checker), metadata: a process_name for every pid and a thread_name for
# every thread with calls; timestamps plausible (calls of one program run
# lie within a window no longer than the run itself).
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build threads O2
CTX="[format]"
start=$(date +%s%N)
ct_run "$BIN"
end=$(date +%s%N)
expect_rc 0
expect_trace
chk check-metadata
span=$(python3 - "$CT_TRACE" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
xs = [e for e in d["traceEvents"] if e.get("ph") == "X"]
lo = min(e["ts"] for e in xs)
hi = max(e["ts"] + e["dur"] for e in xs)
print(int((hi - lo) * 1000))
PY
) || fail "cannot compute the time span"
wall=$((end - start))
[ "$span" -le "$wall" ] || fail "calls span ${span} ns, longer than the whole calltrace run (${wall} ns): timestamps are off"
[ "$span" -gt 0 ] || fail "all calls have the same time: span $span ns"
