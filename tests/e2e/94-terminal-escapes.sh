#!/bin/bash
# Terminal escapes in names: a program whose symbols hold ESC ] 0 ; title BEL, ESC [ 2 J,
# ESC [ 31 m, the C1 CSI U+009B, a newline, DEL, invalid UTF-8, a right-to-left override and a
# literal "\x1b", whose DWARF names a parameter, its type, an enumerator and its source file
# with escapes too, and whose file name and run directory hold escapes. report (table, csv,
# json, --hist, --srcline), tree (--srcline), calls (text and json), graph, flame (folded and
# SVG), diff (table, csv, json, --tree), export's and the recording's closing lines and
# -v -v -v output must hold no control byte (but the newlines and tabs of their formats), no
# DEL, no C1 control, no bidi override, nothing but valid UTF-8, and show each name escaped
# exactly as the man page says ("Names in text output"); the arg_NAME.bin of the hostile
# parameter has a safe name.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
CTX="[terminal escapes]"

mkdir "$T/work" && cd "$T/work" || fail "cannot make $T/work"
# Built here: its source file's name is a placeholder too.
cp "$PROGS_DIR/escapes.c" "$T/work/fPLACEHOLDER.c" || fail "cannot copy escapes.c"
gcc -g -O2 -pthread -Wall -I"$PROGS_DIR" -o "$T/work/escapes" "$T/work/fPLACEHOLDER.c" \
    2>"$T/build.log" || fail "cannot build escapes.c: $(head -5 "$T/build.log")"
prog=$T/work/$(printf 'prog\033]0;p\007')
run=$T/work/$(printf 'run\033[2J')
python3 - "$T/work/escapes" "$prog" <<'PY' || fail "cannot make the renamed program"
import subprocess, sys
src, dst = sys.argv[1], sys.argv[2].encode("utf-8", "surrogateescape")
names = [b"osc\x1b]0;pwned\x07", b"clear\x1b[2J", b"red\x1b[31m", b"c1\xc2\x9b31m", b"new\nline",
         b"bad\xff\xfe", b"del\x7f", b"back\\x1b", b"rtl\xe2\x80\xae", b"caf\xc3\xa9"]
args = [b"objcopy", b"--redefine-sym", b"escape_args=args\x1b[2J"]
for i, n in enumerate(names, 1):
    args += [b"--redefine-sym", b"escape_%d=" % i + n]
subprocess.run(args + [src.encode(), dst], check=True)
# The DWARF strings: each placeholder of escapes.c overwritten in place, same length.
dwarf = {b"pPLACEHOLDER": b"p\x1b[2J\xc2\x9b\n/..z", b"tPLACEHOLDER": b"t\x1b]0;x\x07\xffqqqq",
         b"ePLACEHOLDER": b"e\x1b[31m\x7fqqqqq", b"fPLACEHOLDER": b"f\x1b]0;src\x07qqq"}
with open(dst, "rb") as f:
    data = f.read()
for old, new in dwarf.items():  # the source file's name: in the unit and in the line table
    if len(new) != len(old) or data.count(old) != (2 if old[0] == ord("f") else 1):
        sys.exit("placeholder %r: %d in the file" % (old, data.count(old)))
    data = data.replace(old, new)
with open(dst, "wb") as f:
    f.write(data)
PY

ct_raw "${CT_ENGINE_OPT[@]}" -o "$run" -A -R -v -v -v -- "$prog"
expect_rc 0
CT_DIR=$run CT_TRACE=$run/trace.json
expect_trace
cp "$CT_ERR" "$T/record.err"
outputs=("$T/record.err")
# each output of a subcommand into $T/NAME
save() {
    local name=$1
    shift
    ct_raw "$@"
    expect_rc 0 "calltrace $1"
    cp "$CT_OUT" "$T/$name"
    outputs+=("$T/$name" "$CT_ERR")
}
save report report "$run"
save report.csv report -f csv "$run"
save report.json report -f json "$run"
save report.src report --srcline "$run"
save report.hist report --hist 'osc\x1b]0;pwned\x07' "$run" # the name as report prints it
save tree tree "$run"
save tree.src tree --srcline "$run"
save flame.folded flame -c "$run" # weights are calls: every frame wide enough to be drawn
save flame.err flame -c -o "$T/flame.svg" "$run"
outputs+=("$T/flame.svg")
save diff diff "$run" "$run"
save diff.csv diff -f csv "$run" "$run"
save diff.json diff -f json "$run" "$run"
save diff.tree diff --tree -f csv "$run" "$run"
save calls calls "$run"
save calls.json calls --json "$run"
save call calls "$run" "$(printf 'args\033[2J')" 1
save call.escaped calls "$run" 'args\x1b[2J' 1 # the name as calls prints it
cmp -s "$T/call" "$T/call.escaped" || fail "calls RUN FUNC N: the escaped name finds another call"
save graph.dot graph "$run"
save export.err export "$run"
cp "$CT_ERR" "$T/export.err"
save view.out view --server-only --port 0 --timeout 1 # the newest run here: $run
cp "$CT_ERR" "$T/view.err"
if command -v dot >/dev/null; then
    dot -Tcanon "$T/graph.dot" >/dev/null 2>"$T/dot.err" || fail "dot rejects the graph: $(head -3 "$T/dot.err")"
fi

CT_ENGINE=$CT_ENGINE python3 - "$T" "$run" "$prog" "${outputs[@]}" <<'PY' || fail "names are not escaped as documented"
import csv, io, json, os, re, sys
T, run, prog, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
bad = []

# 1. No output holds what a terminal acts on.
for path in files:
    data = open(path, "rb").read()
    allowed = b"\n\t" if path.endswith((".json", ".svg")) else b"\n"
    ctl = sorted({c for c in data if (c < 0x20 and c not in allowed) or c == 0x7f})
    if ctl:
        bad.append("%s: control bytes %r" % (os.path.basename(path), [hex(c) for c in ctl]))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        bad.append("%s: not UTF-8: %s" % (os.path.basename(path), e))
        continue
    odd = sorted({"U+%04X" % ord(c) for c in text if 0x80 <= ord(c) <= 0x9f or c in "\u202e\u200e"})
    if odd:
        bad.append("%s: holds %s" % (os.path.basename(path), odd))

# 2. Each name escaped as documented: \xNN per byte, a backslash doubled, UTF-8 kept.
want = {r"osc\x1b]0;pwned\x07": 1, r"clear\x1b[2J": 2, r"red\x1b[31m": 3, r"c1\xc2\x9b31m": 4,
        r"new\x0aline": 5, r"bad\xff\xfe": 6, r"del\x7f": 7, r"back\\x1b": 8,
        r"rtl\xe2\x80\xae": 9, "caf\u00e9": 10, r"args\x1b[2J": 1, "main": 1}
prog_shown = prog.replace("\x1b", r"\x1b").replace("\x07", r"\x07")
run_shown = run.replace("\x1b", r"\x1b")
param, ptype, enum = r"p\x1b[2J\xc2\x9b\x0a/..z", "t\\x1b]0;x\\x07\ufffdqqqq", r"e\x1b[31m\x7fqqqqq"

def read(name):
    return open(os.path.join(T, name), encoding="utf-8", errors="replace").read()

got = {}
for line in read("report").splitlines()[1:]:
    m = re.fullmatch(r"\s*(\d+)(?:\s+\S+ \S+){5}  (.*)", line)
    if m:
        got[m.group(2)] = int(m.group(1))
if got != want:
    bad.append("report: %r" % got)
rows = list(csv.DictReader(io.StringIO(read("report.csv"))))
if {r["function"]: int(r["calls"]) for r in rows} != want or {r["image"] for r in rows} != {prog_shown}:
    bad.append("report -f csv: %r" % [(r["function"], r["image"]) for r in rows])
doc = json.loads(read("report.json"))
exact = {"osc\x1b]0;pwned\x07", "clear\x1b[2J", "new\nline", "bad\ufffd\ufffd", "del\x7f",
         "back\\x1b", "rtl\u202e", "c1\x9b31m"}
if not exact <= {f["name"] for f in doc["functions"]}:
    bad.append("report -f json names: %r" % [f["name"] for f in doc["functions"]])

tree = read("tree")
for name, n in want.items():
    leaves = len(re.findall(r"^ *\S+ \S+ +" + re.escape(name) + r"\(.*\)(?: = .*)?;$", tree, re.M))
    if name != "main" and leaves != n:
        bad.append("tree: %d calls of %s" % (leaves, name))
args_line = r" *\S+ \S+ +args\\x1b\[2J\(%s=0x[0-9a-f]+ \"text\", m=%s\) = 5;" % (
    re.escape(param), re.escape(enum))
if not re.search("^" + args_line + "$", tree, re.M):
    bad.append("tree: no line %r in\n%s" % (args_line, tree[-400:]))

calls = read("calls")  # names read back from calls/index.json: invalid UTF-8 became U+FFFD
for name in set(want) - {r"args\x1b[2J", r"bad\xff\xfe"} | {"bad\ufffd\ufffd"}:
    if not re.search(r"^\d+ +\d+ +%s\(\) -> " % re.escape(name), calls, re.M):
        bad.append("calls: no line for %s" % name)
sig = r"args\x1b[2J(%s %s, enum mood m) -> " % (ptype, param)
if sig not in calls:
    bad.append("calls: no signature %r in\n%s" % (sig, calls))
call = read("call").splitlines()
if (len(call) != 4 or not call[0].startswith(r"args\x1b[2J #1  pid ") or
        not re.fullmatch(r"  %s = 0x[0-9a-f]+ \"text\"" % re.escape(param), call[1]) or
        call[2] != "  m = " + enum or call[3] != "  return = 5"):
    bad.append("calls RUN FUNC 1: %r" % call)
json.loads(read("calls.json"))

labels = re.findall(r'^    f\d+ \[label="((?:[^"\\]|\\.)*)"', read("graph.dot"), re.M)
shown = {re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), l).split("\n")[0]
         for l in labels}
if shown != set(want):
    bad.append("graph labels: %r" % sorted(shown))

src = T + r"/work/f\x1b]0;src\x07qqq.c"  # the source file, as --srcline and graph show it
lines = read("tree.src").splitlines()
leaves = [l for l in lines if "(" in l and ") {" not in l]
if (len(leaves) != 56 or any(not re.search(r"; /\* %s:\d+ \*/$" % re.escape(src), l) for l in leaves)
        or not any(re.fullmatch(r" +main\(\) \{ /\* %s:\d+ \*/" % re.escape(src), l) for l in lines)):
    bad.append("tree --srcline: %r" % leaves[:3])
if not re.search(r"^ +1 .*  main at %s:\d+$" % re.escape(src), read("report.src"), re.M):
    bad.append("report --srcline: %r" % read("report.src")[:300])
hist = read("report.hist").splitlines()
if not hist or hist[0] != r"osc\x1b]0;pwned\x07: 1 calls, their durations in ns":
    bad.append("report --hist: %r" % hist[:2])
clusters = re.findall(r'^  subgraph cluster_\d+ \{\n    label="((?:[^"\\]|\\.)*)"', read("graph.dot"), re.M)
if [re.sub(r"\\(.)", r"\1", c) for c in clusters] != [src]:
    bad.append("graph clusters: %r" % clusters)

stacks = {}
for line in read("flame.folded").splitlines():
    m = re.fullmatch(r"(.*) (\d+)", line)
    if m:
        stacks[m.group(1)] = int(m.group(2))
folded = {"main;" + n.replace(";", ":"): c for n, c in want.items() if n != "main"}  # ';' parts frames
folded["main"] = 1
if stacks != folded:
    bad.append("flame: %r" % sorted(stacks))
import xml.etree.ElementTree as ET
svg = ET.parse(os.path.join(T, "flame.svg"))
titles = {t.text.split("\n")[0] for t in svg.iter("{http://www.w3.org/2000/svg}title") if t.text}
if not set(want) <= titles:
    bad.append("flame SVG titles: missing %r" % sorted(set(want) - titles))

got = {}
for line in read("diff").splitlines()[1:]:
    m = re.fullmatch(r"\s*(\d+)\s+(\d+)(?:\s+\S+ \S+){4}\s+\S+ \S+\s+\S+  (.*)", line)
    if m:
        got[m.group(3)] = int(m.group(1))
if got != want:
    bad.append("diff: %r" % got)
rows = list(csv.DictReader(io.StringIO(read("diff.csv"))))
if {r["function"]: int(r["calls_a"]) for r in rows} != want:
    bad.append("diff -f csv: %r" % [r["function"] for r in rows])
if not exact <= {f["name"] for f in json.loads(read("diff.json"))["functions"]}:
    bad.append("diff -f json: %r" % read("diff.json")[:300])
stacks = {r["stack"] for r in csv.DictReader(io.StringIO(read("diff.tree")))}
if stacks != {"main"} | {"main;" + n for n in want if n != "main"}:
    bad.append("diff --tree: %r" % sorted(stacks))

err = read("record.err")
for line in ["calltrace: trace in %s/trace.json: 57 calls, 1 thread, 1 process (%s engine)"
             % (run_shown, os.environ["CT_ENGINE"]),
             "calltrace: arguments of 57 calls of 12 functions in %s/calls" % run_shown]:
    if line not in err.splitlines():
        bad.append("recording: no line %r" % line)
if prog_shown not in err or r"osc\x1b]0;pwned\x07" not in err:
    bad.append("-v -v -v: no escaped program or function name")
if "calltrace: trace in %s/trace.json: 57 calls" % run_shown not in read("export.err"):
    bad.append("export: %r" % read("export.err"))
view = read("view.err").splitlines()
if (r"calltrace: the newest run here is run\x1b[2J" not in view or
        not any(l.startswith(r"calltrace: serving run\x1b[2J/") for l in view)):
    bad.append("view: %r" % view)

# 3. File names: the hostile parameter's bytes go to a safe arg_NAME.bin.
safe = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+~-]*")
for top, dirs, names in os.walk(os.path.join(run, "calls")):
    for n in dirs + names:
        if not safe.fullmatch(n) or len(n) > 255:
            bad.append("unsafe file name %r in %s" % (n, top))
index = json.load(open(os.path.join(run, "calls", "index.json"), encoding="utf-8"))
folder = [f["folder"] for f in index["functions"] if f["name"] == "args\x1b[2J"]
one = json.load(open(os.path.join(run, "calls", folder[0], "1", "call.json"), encoding="utf-8"))
bins = [p.get("bytes") for p in one["params"] if p.get("bytes")]
if (len(bins) != 1 or not re.fullmatch(r"arg_p__2J____\.\.z~[0-9a-f]{16}\.bin", bins[0]) or
        open(os.path.join(run, "calls", folder[0], "1", bins[0]), "rb").read().rstrip(b"\0") != b"text"):
    bad.append("arg_NAME.bin of the hostile parameter: %r" % bins)
if bad:
    sys.exit("\n".join(bad))
PY
note "names with terminal escapes: escaped in report, tree, calls, graph, flame, diff, -v and the closing lines"
