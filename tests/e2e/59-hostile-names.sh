#!/bin/bash
# Hostile names: symbols renamed (objcopy --redefine-sym) to names with '/', "..", a newline,
# quotes and backslashes, control characters, invalid UTF-8, exactly 4 KiB and 5,000 bytes,
# and a JSON injection attempt; the program's own file name hostile too. The trace must be
# valid JSON of valid UTF-8 with every name intact (invalid bytes as U+FFFD, the 5,000-byte
# one cut to 4 KiB ending in "..."), and nothing may be written outside the run directory.
# With -A -R, the call folders of those functions get safe, distinct names (mapped in
# calls/index.json) and hostile string arguments come out escaped as gdb prints them, with their
# exact bytes in arg_s.bin.
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
extra=$(comm -13 <(echo "$before") <(echo "$after") | grep -v "^run\.$_RUN_SEQ\(/events.ctr\|/trace.json\|/trace.pftrace\)\?$" |
    grep -v "^\(out\|err\)\.$_RUN_SEQ$")
[ -z "$extra" ] || fail "files created outside the run directory: $extra"
[ "$(ls -A "$CT_DIR" | tr '\n' ' ')" = "events.ctr trace.json trace.pftrace " ] ||
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

CTX="[hostile names and strings, -A -R]"
before=$(find "$T" -printf '%P\n' | sort)
ct_run -A -R --string-max 4096 -- "$prog"
after=$(find "$T" -printf '%P\n' | sort)
expect_rc 0
expect_trace
extra=$(comm -13 <(echo "$before") <(echo "$after") | grep -v "^run\.$_RUN_SEQ\(/.*\)\?$" |
    grep -v "^\(out\|err\)\.$_RUN_SEQ$")
[ -z "$extra" ] || fail "files created outside the run directory: $extra"
python3 - "$CT_DIR" <<'PY' || fail "call folders or string values are not as expected"
import json, os, re, sys
run = sys.argv[1]
bad = []
with open(os.path.join(run, "trace.json"), "rb") as f:
    doc = json.loads(f.read().decode("utf-8"))
want_values = ['"../../escape/evil"', r'"line1\nline2"', r'"quote\"and\\back"',
               r'"bad\377\376utf8\303"', r'"ctl\001\033[31mred\t"',
               "<big> 'C' <repeats 4096 times>..."]
got = [e["args"]["s"] for e in doc["traceEvents"] if e.get("name") == "hostile_text"]
if len(got) != len(want_values) or any(not re.fullmatch(r"0x[0-9a-f]+ " + re.escape(w), g)
                                       for g, w in zip(got, want_values)):
    bad.append("hostile_text's values: %r" % got)
calls = os.path.join(run, "calls")
index = json.load(open(os.path.join(calls, "index.json"), encoding="utf-8"))
folders = {}
for fn in index["functions"]:
    folder = fn["folder"]
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.+~-]*", folder) or len(folder) > 255:
        bad.append("unsafe folder name %r for %r" % (folder, fn["name"][:40]))
    if folder in folders:
        bad.append("%r and %r share folder %r" % (folders[folder][:40], fn["name"][:40], folder))
    folders[folder] = fn["name"]
    n = sorted(os.listdir(os.path.join(calls, folder)), key=int)
    if n != [str(i) for i in range(1, fn["calls"] + 1)]:
        bad.append("%r: folders %r for %d calls" % (fn["name"][:40], n[:5], fn["calls"]))
    for i in n:
        call = json.load(open(os.path.join(calls, folder, i, "call.json"), encoding="utf-8"))
        if call["function"] != fn["name"]:
            bad.append("call.json of %r names %r" % (fn["name"][:40], call["function"][:40]))
hostile = {"../../escape/evil", "line1\nline2", 'quote"and\\back"slash',
           "bad\ufffd\ufffdutf8\ufffd", "A" * 4096, "B" * 4093 + "...", "ctl\x01\x1b[31mred\t",
           'x","ph":"X","name":"y'}
missing = hostile - set(folders.values())
if missing:
    bad.append("no folder for %r" % sorted(m[:40] for m in missing))
if sorted(set(os.listdir(calls)) - {"index.json"}) != sorted(folders):
    bad.append("calls/ holds %r" % sorted(os.listdir(calls))[:12])
text = os.path.join(calls, folders and [k for k, v in folders.items() if v == "hostile_text"][0])
blobs = [open(os.path.join(text, str(i), "arg_s.bin"), "rb").read() for i in range(1, 7)]
want_blobs = [b"../../escape/evil", b"line1\nline2", b'quote"and\\back', b"bad\xff\xfeutf8\xc3",
              b"ctl\x01\x1b[31mred\t", b"C" * 4096]
if [b.rstrip(b"\0") for b in blobs] != want_blobs:
    bad.append("arg_s.bin bytes: %r" % [b[:20] for b in blobs])
if bad:
    sys.exit("\n".join(bad))
PY
note "8 hostile names and a hostile program name: valid trace, nothing outside $CT_DIR"
