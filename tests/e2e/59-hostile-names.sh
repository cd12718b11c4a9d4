#!/bin/bash
# Hostile names: symbols renamed (objcopy --redefine-sym) to names with '/', "..", a newline,
# quotes and backslashes, control characters, invalid UTF-8, exactly 4 KiB and 5,000 bytes,
# and a JSON injection attempt; the program's own file name hostile too. The trace must be
# valid JSON of valid UTF-8 with every name intact (invalid bytes as U+FFFD, the 5,000-byte
# one cut to 4 KiB ending in "..."), and nothing may be written outside the run directory.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build hostile O2
CTX="[hostile names]"

mkdir "$T/work" && cd "$T/work" || fail "cannot make $T/work"
python3 - "$BIN" "$T/work/$(printf 'evil"prog\nname\377')" <<'PY' || fail "cannot make the renamed program"
import subprocess, sys
names = [b"../../escape/evil", b"line1\nline2", b'quote"and\\back"slash', b"bad\xff\xfeutf8\xc3",
         b"A" * 4096, b"B" * 5000, b"ctl\x01\x1b[31mred\t", b'x","ph":"X","name":"y']
args = [b"objcopy"]
for i, n in enumerate(names, 1):
    args += [b"--redefine-sym", b"hostile_%d=" % i + n]
subprocess.run(args + [sys.argv[1].encode(), sys.argv[2].encode("utf-8", "surrogateescape")],
               check=True)
PY
prog=$(printf '%s' "$T/work/"evil*)
before=$(find "$T" -printf '%P\n' | sort)
ct_run "$prog"
after=$(find "$T" -printf '%P\n' | sort)
expect_rc 0
expect_trace
chk check-nesting
extra=$(comm -13 <(echo "$before") <(echo "$after") | grep -v "^run\.$_RUN_SEQ\(/events.ctr\|/trace.json\)\?$" |
    grep -v "^\(out\|err\)\.$_RUN_SEQ$")
[ -z "$extra" ] || fail "files created outside the run directory: $extra"
[ "$(ls -A "$CT_DIR" | tr '\n' ' ')" = "events.ctr trace.json " ] ||
    fail "run directory holds: $(ls -A "$CT_DIR")"

python3 - "$CT_TRACE" <<'PY' || fail "names in the trace are not as expected"
import collections, json, sys
with open(sys.argv[1], "rb") as f:
    doc = json.loads(f.read().decode("utf-8"))   # strict: invalid UTF-8 raises
want = {"../../escape/evil": 1, "line1\nline2": 2, 'quote"and\\back"slash': 3,
        "bad\ufffd\ufffdutf8\ufffd": 4, "A" * 4096: 5, "B" * 4093 + "...": 6,
        "ctl\x01\x1b[31mred\t": 7, 'x","ph":"X","name":"y': 8}
got = collections.Counter(e["name"] for e in doc["traceEvents"] if e["ph"] == "X")
bad = ["%r: %d calls, expected %d" % (n[:40], got.get(n, 0), c) for n, c in want.items()
       if got.get(n, 0) != c]
procs = [e["args"]["name"] for e in doc["traceEvents"] if e.get("name") == "process_name"]
if not procs or not procs[-1].endswith('evil"prog\nname\ufffd'):
    bad.append("process name %r does not end with the program's name" % procs)
if bad:
    sys.exit("\n".join(bad))
PY
note "8 hostile names and a hostile program name: valid trace, nothing outside $CT_DIR"
