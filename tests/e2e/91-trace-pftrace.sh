#!/bin/bash
# trace.pftrace (Perfetto's protobuf) against independent readers, and the output choices
# of issue 17:
#   - Perfetto's own trace processor (the WebAssembly build of ui.perfetto.dev, run under
#     node: tests/lib/perfetto/tp_query.js) loads the protobuf of threads, forks,
#     exceptions, signals, -A/-R values, a gzip one and a killed run's export, reports no
#     parse, interning, sequence or clock error, and finds the calls, names, threads and
#     processes the program itself counted (every other e2e test checks both traces with
#     tests/lib/pftrace.py);
#   - at most 30 bytes a call on fib;
#   - windows (--from/--to, --tid, -F, --max-calls) of export hold exactly the calls of the
#     full run that overlap them, in both formats;
#   - the default writes trace.json for a small run, trace.pftrace (and says why) for an
#     11M-call one; view of that run serves within 2 s;
#   - a progress line only on a terminal; the size warning once.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
TP_QUERY=$(dirname "$0")/../lib/perfetto/tp_query.js
TP_ASSETS=$(dirname "$0")/../build/perfetto/trace-processor
[ -f "$TP_ASSETS/trace_processor.wasm" ] ||
    fail "Perfetto's trace processor is not installed: run scripts/install-trace-processor.sh"

# tp SQL: the query's rows (tab-separated, its header line dropped) on the run's protobuf
tp() {
    local f
    f=$(ls "$CT_DIR"/trace.pftrace* | head -n 1)
    node "$TP_QUERY" "$f" "$1" >"$T/tp.out" 2>"$T/tp.err" ||
        fail "trace processor on $f: $(head -c 2000 "$T/tp.err")"
    tail -n +2 "$T/tp.out"
}

# The trace processor's verdict on the run: no error of any kind, and the calls and names
# the JSON reader finds (the program's own counts are checked against those by chk).
tp_agrees() {
    local errors
    errors=$(tp "select name || '=' || value from stats where value > 0 and
        (severity in ('error', 'data_loss') or name like '%skipped%' or name like 'clock_sync_failure%'
         or name like 'interned%' or name like '%misplaced%' or name like 'track_event%')")
    [ -z "$errors" ] || fail "the trace processor reports: $errors"
    local open
    open=$(tp "select count(*) from slice where dur < 0")
    [ "$open" = 0 ] || fail "the trace processor has $open slices that never end"
    # every slice, a forked child's inherited copies too (trace.json marks them), by name
    tp "select name || ' ' || count(*) from slice group by name order by name" >"$T/tp.counts"
    python3 - "$CT_TRACE" >"$T/json.counts" <<'PY'
import collections, json, sys
d = json.load(open(sys.argv[1]))
c = collections.Counter(e["name"] for e in d["traceEvents"] if e.get("ph") == "X")
for name in sorted(c):
    print(name, c[name])
PY
    cmp -s <(LC_ALL=C sort "$T/tp.counts") <(LC_ALL=C sort "$T/json.counts") ||
        fail "slices per name differ (- trace.json, + trace processor):
$(diff <(LC_ALL=C sort "$T/json.counts") <(LC_ALL=C sort "$T/tp.counts") | head -20)"
    # the threads with calls, as pid/tid, and every process named as in trace.json
    tp "select distinct p.pid || '/' || t.tid from slice s join thread_track tt on s.track_id = tt.id
        join thread t using (utid) join process p using (upid) order by 1" | LC_ALL=C sort >"$T/tp.threads"
    query threads | LC_ALL=C sort >"$T/json.threads"
    cmp -s "$T/tp.threads" "$T/json.threads" ||
        fail "threads with calls differ: trace processor $(tr '\n' ' ' <"$T/tp.threads"), trace.json $(tr '\n' ' ' <"$T/json.threads")"
}

for prog in threads forks exceptions signals; do
    CTX="[trace processor: $prog]"
    build "$prog" O2
    ct_run "$BIN"
    expect_trace
    chk check-counts -f "$CT_OUT"
    tp_agrees
done

CTX="[trace processor: -A -R, -z]"
build args O0
ct_run -A -R -z -- "$BIN"
[ -f "$CT_DIR/trace.pftrace.gz" ] || fail "-z --format both wrote no trace.pftrace.gz: $(ls "$CT_DIR")"
CT_TRACE=$CT_DIR/trace.json.gz
v=$(tp "select count(*) from args where key like 'debug.%'")
[ "$v" -gt 0 ] || fail "the -A/-R values are not in the slices' arguments"

CTX="[trace processor: killed run, exported]"
build timed_calls O2
ct_start_bg "$BIN" "$T/ctr" 50 100
wait_until 60 "both threads to park" progress_ge "$T/ctr" 2000000
kill -KILL "$BG"
ct_wait_bg 20
run=$CT_DIR
ct_raw export -q --format both "$run"
expect_rc 0 "calltrace export of a killed run"
CT_DIR=$run CT_TRACE=$run/trace.json
chk validate
tp_agrees
u=$(tp "select count(*) from slice s join args a using (arg_set_id) where a.key = 'debug.unfinished'")
[ "$u" -ge 2 ] || fail "the killed run's open calls are not marked unfinished ($u)"

CTX="[fib: bytes a call, default format]"
build recursion O2
ct_run --format perfetto -- "$BIN" 20
calls=$(python3 "$CHECKER" summary "$CT_DIR/trace.pftrace" | awk '$1 == "calls" {print $2}')
bytes=$(stat -c %s "$CT_DIR/trace.pftrace")
[ $((bytes / calls)) -le 30 ] || fail "trace.pftrace takes $((bytes / calls)) bytes a call on fib, more than 30"
CT_FORMAT=default ct_run "$BIN" 20
[ -f "$CT_DIR/trace.json" ] && [ ! -e "$CT_DIR/trace.pftrace" ] ||
    fail "a small run should get trace.json alone by default: $(ls "$CT_DIR")"
SMALL=$CT_DIR
# An 11M-call run: seconds with the inject engine, hours under the ptrace engine or valgrind.
if [ "$CT_ENGINE" = ptrace ] || [ -n "${CALLTRACE_REAL:-}" ]; then
    echo "[11M-call run] left out under valgrind and the ptrace engine: too slow there"
else
    CT_FORMAT=default ct_run "$BIN" 33
    expect_rc 0
    [ -f "$CT_DIR/trace.pftrace" ] && [ ! -e "$CT_DIR/trace.json" ] ||
        fail "an 11M-call run should get trace.pftrace alone by default: $(ls "$CT_DIR")"
    grep -q "^calltrace: writing trace.pftrace, not trace.json: the run is too big" "$CT_ERR" ||
        fail "the default's choice of trace.pftrace is not said: $(head -c 1000 "$CT_ERR")"
    grep -q "recording:" "$CT_ERR" && fail "a progress line was written to a stderr that is no terminal"
    BIG=$CT_DIR

    CTX="[view of an 11M-call run]"
    fifo=$T/view.fifo
    mkfifo "$fifo"
    "$CALLTRACE" view --server-only --port 0 --timeout 20 "$BIG" >"$fifo" 2>"$T/view.err" &
    view=$!
    start=$(date +%s%N)
    read -r -t 10 url <"$fifo" || fail "view printed no URL within 10 s: $(head -c 1000 "$T/view.err")"
    ms=$((($(date +%s%N) - start) / 1000000))
    kill $view 2>/dev/null
    wait $view 2>/dev/null
    [[ $url =~ ^https://ui\.perfetto\.dev/#!/\?url=http://127\.0\.0\.1:[0-9]+/[0-9a-f]{32}/trace\.pftrace$ ]] ||
        fail "view serves $url, not the run's trace.pftrace under a token"
    [ $ms -lt 2000 ] || fail "view took $ms ms to start serving an 11M-call run (at most 2000)"
fi

CTX="[progress line on a terminal]"
# attachee runs until a line comes on its stdin, on a terminal by script(1): the line is sent once
# the progress line shows (or after 60 s, when the test fails), not after a guessed time, which
# valgrind's start-up alone can outlast
build attachee O2
mkfifo "$T/tty.stdin"
script -qec "$CALLTRACE -o $T/tty-run --format perfetto $BIN <$T/tty.stdin" "$T/tty.log" \
    >/dev/null &
tty_run=$!
exec 7<>"$T/tty.stdin" # read-write: never blocks, even if script(1) failed before opening it
progress_shown() { grep -aq "calltrace: recording: [0-9]* calls, [0-9.]*M/s, [0-9.]* MB on disk" "$T/tty.log"; }
shown=0
within 60 progress_shown || shown=1
echo stop >&7
exec 7>&-
wait $tty_run || fail "calltrace under script(1) failed: $(tail -c 500 "$T/tty.log")"
[ $shown = 0 ] ||
    fail "no progress line while recording on a terminal: $(tr '\r' '\n' <"$T/tty.log" | head -c 600)"

CTX="[size warning]"
CALLTRACE_SIZE_WARNING=100000 "$CALLTRACE" export --format perfetto "$SMALL" 2>"$T/warn.err" ||
    fail "export failed: $(cat "$T/warn.err")"
n=$(grep -c "trace.pftrace has passed 0.1 MB, more than a viewer opens whole" "$T/warn.err")
[ "$n" = 1 ] || fail "the size warning was said $n times, not once: $(head -c 800 "$T/warn.err")"

CTX="[windows]"
export LIBDIR=$(cd "$(dirname "$0")/../lib" && pwd)
# window_run: RUN's start (the record header's start anchor, CLOCK_MONOTONIC ns at byte 24)
# into run_start, and from/to (from the run's start) a third and a half into its calls
window_run() {
    RUN=$CT_DIR
    read -r run_start from to < <(python3 - "$RUN" <<'PY'
import json, struct, sys
run = sys.argv[1]
start = struct.unpack_from("<Q", open(run + "/events.ctr", "rb").read(64), 24)[0]
xs = [e for e in json.load(open(run + "/trace.json"))["traceEvents"] if e.get("ph") == "X"]
first = min(round(e["ts"] * 1000) for e in xs) - start
last = max(round(e["ts"] * 1000) + round(e["dur"] * 1000) for e in xs) - start
print(start, first + (last - first) // 3, first + (last - first) // 2)
PY
)
}
check_window() { # WINDOW_OPTIONS... : both traces of the export equal the full run's selection
    local win=$T/win
    rm -rf "$win" && cp -r "$RUN" "$win"
    "$CALLTRACE" export -q --format both "$@" "$win" || fail "export $* failed"
    python3 - "$RUN/trace.json" "$win" "$run_start" "$@" <<'PY' || fail "window $*: see above"
import fnmatch, os, sys
full, win, run_start, opts = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
sys.path.insert(0, os.environ["LIBDIR"])
import check_trace
def calls(path):
    return check_trace.Trace(path).calls
frm, to, tid, only, maxc = 0, None, None, None, None
i = 0
while i < len(opts):
    k, v = opts[i], opts[i + 1]
    i += 2
    ns = lambda text: int(text[:-2])  # "123ns"
    if k == "--from": frm = ns(v)
    if k == "--to": to = ns(v)
    if k == "--tid": tid = int(v)
    if k == "-F": only = v
    if k == "--max-calls": maxc = int(v)
want = [c for c in calls(full)
        if (tid is None or c.tid == tid) and (only is None or fnmatch.fnmatch(c.name, only))
        and (to is None or c.ts <= run_start + to) and c.end >= run_start + frm]
want.sort(key=lambda c: (c.ts, c.tid))
if maxc is not None:
    want = want[:maxc]
key = lambda c: (c.name, c.pid, c.tid, c.ts, c.dur)
want = sorted(map(key, want))
for name in ("trace.json", "trace.pftrace"):
    got = sorted(map(key, calls(win + "/" + name)))
    if got != want:
        print("%s of window %s: %d calls, the full run has %d in it; first differences: %s" % (
            name, " ".join(opts), len(got), len(want),
            sorted(set(got) ^ set(want))[:5]), file=sys.stderr)
        sys.exit(1)
PY
}

build threads O2
ct_run "$BIN"
expect_trace
window_run
tid=$(query threads | sed -n 2p | cut -d/ -f2)
[ -n "$tid" ] || fail "threads made no second thread"
check_window --from "${from}ns" --to "${to}ns"
check_window --from "${from}ns"
check_window --tid "$tid"
check_window -F 'work*'
check_window --tid "$tid" --max-calls 7
check_window --from "${from}ns" --to "${to}ns" --tid "$tid" --max-calls 3
# one deep call tree: at --from, calls are open many deep, begun before their children
build recursion O2
ct_run "$BIN" 16
expect_trace
window_run
check_window --from "${from}ns" --to "${to}ns"
check_window --from "${from}ns" --max-calls 50
check_window --from "${from}ns" -F 'is_*'
