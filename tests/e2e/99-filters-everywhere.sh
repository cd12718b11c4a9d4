#!/bin/bash
# Every reader of a run takes graph's filters: -F/--include (or --filter), -N/--exclude and
# --tid, in report, tree, calls and export, with the same messages: a glob that matches no
# function with calls is a warning, a thread that made no call an error. tests/progs/threads.c
# calls work() a known number of times per thread (the thread that calls it 200 times is the
# one picked), from worker(), with its loop counter as the argument: 0 to 199 on that thread.
# Independent answers: the program's own counts, and trace.json read by Python.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build threads O0
CTX="[record]"
ct_run -A -- "$BIN"
expect_trace
grep -q '^pertid work 25 25 25 25 50 100 150 200$' "$CT_OUT" || fail "program: $(cat "$CT_OUT")"
RUN=$CT_DIR
# the thread with 200 calls of work(), from trace.json
tid=$(python3 -c '
import collections, json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"] if isinstance(t, dict) else t
n = collections.Counter(e["tid"] for e in ev if e.get("ph") == "X" and e["name"] == "work")
print(*[k for k, v in n.items() if v == 200])' "$RUN/trace.json")
[[ $tid =~ ^[0-9]+$ ]] || fail "no single thread with 200 calls of work in the trace: '$tid'"

# reader ARGS...: calltrace ARGS, which must succeed; its output in $T/out, its stderr in $T/err
reader() {
    CTX="[$*]"
    "$CALLTRACE" "$@" >"$T/out" 2>"$T/err" || fail "exit status $?: $(cat "$T/err")"
    [ -s "$T/err" ] && fail "unexpected message: $(cat "$T/err")"
    return 0
}

# refused ARGS...: one line, no output, and the message names the thread's calls
no_such_tid() {
    CTX="[$*]"
    ct_raw "$@"
    one_stderr_line_error "$*"
    grep -q "^calltrace: --tid 1: no calls on that thread in .* (its threads: " "$CT_ERR" ||
        fail "the message does not list the threads: $(cat "$CT_ERR")"
}

# warns ARGS...: succeeds, with one warning for the glob nomatch*
warns() {
    CTX="[$*]"
    ct_raw "$@"
    expect_rc 0
    [ "$(grep -c "'nomatch\*': matches no function with calls (.*work" "$CT_ERR")" = 1 ] ||
        fail "no warning for the glob that matches nothing: $(cat "$CT_ERR")"
}

# report (it had them already: the same answers through --filter)
reader report -f csv --tid "$tid" --filter work "$RUN"
awk -F, 'NR > 1 { print $1, $3 }' "$T/out" | grep -qx '"work" 200' || fail "report: $(cat "$T/out")"
[ "$(wc -l <"$T/out")" = 2 ] || fail "report shows more than work: $(cat "$T/out")"
no_such_tid report --tid 1 "$RUN"
warns report -F 'nomatch*' "$RUN"

# tree: the kept calls, nested by their nearest kept caller
reader tree --tid "$tid" -F work "$RUN"
[ "$(grep -c "^ *[0-9.]* [mun]*s  work(x=[0-9]*);$" "$T/out")" = 200 ] ||
    fail "tree -F work: not 200 calls of work at depth 1: $(head -5 "$T/out")"
[ "$(grep -vc '^#\|DURATION' "$T/out")" = 200 ] || fail "tree -F work shows other calls: $(grep -v work "$T/out" | head)"
seq 0 199 | sed 's/.*/work(x=&);/' >"$T/want"
sed -n 's/^ *[0-9.]* [mun]*s  //p' "$T/out" | diff - "$T/want" >/dev/null ||
    fail "tree: work's arguments are not 0..199 in order: $(head -4 "$T/out")"
reader tree --tid "$tid" -F 'work*' "$RUN"
grep -q '^              worker(arg=0xc8) {$' "$T/out" || fail "tree -F 'work*': no worker opener: $(head -4 "$T/out")"
[ "$(grep -c '^ *[0-9.]* [mun]*s    work(x=[0-9]*);$' "$T/out")" = 200 ] ||
    fail "tree -F 'work*': work is not at depth 2 under worker: $(head -5 "$T/out")"
# -N worker: its calls of work come up to depth 1 on that thread
reader tree --tid "$tid" -N worker "$RUN"
[ "$(grep -c '^ *[0-9.]* [mun]*s  work(x=[0-9]*);$' "$T/out")" = 200 ] ||
    fail "tree -N worker: work is not at depth 1: $(head -5 "$T/out")"
grep -q worker "$T/out" && fail "tree -N worker shows worker: $(grep worker "$T/out" | head -3)"
no_such_tid tree --tid 1 "$RUN"
warns tree -F 'nomatch*' -F work "$RUN"

# calls: the functions listed, and with --tid that thread's calls and folders
reader calls --tid "$tid" --include work "$RUN"
grep -qE '^200 +200 +work\(int x\)' "$T/out" || fail "calls --tid -F work: $(cat "$T/out")"
[ "$(wc -l <"$T/out")" = 2 ] || fail "calls -F work lists more: $(cat "$T/out")"
reader calls -N work "$RUN"
grep -q 'work(' "$T/out" && fail "calls -N work lists work: $(cat "$T/out")"
grep -qE '^6 +6 +worker\(' "$T/out" || fail "calls -N work: no worker: $(cat "$T/out")"
for n in 1 200; do
    reader calls --tid "$tid" "$RUN" work "$n"
    grep -q "^work #[0-9]*  pid [0-9]*  tid $tid  entry " "$T/out" && grep -qx "  x = $((n - 1))" "$T/out" ||
        fail "calls --tid $tid work $n: not that thread's call number $n: $(cat "$T/out")"
done
CTX="[calls --tid work 201]"
ct_raw calls --tid "$tid" "$RUN" work 201
one_stderr_line_error "calls --tid work 201"
grep -q "has 200 calls with a folder on thread $tid, not 201" "$CT_ERR" || fail "$(cat "$CT_ERR")"
no_such_tid calls --tid 1 "$RUN"
warns calls -F 'nomatch*' "$RUN"

# export: a window of one thread's calls of one function
reader export -q --format json --tid "$tid" --include work "$RUN"
CT_TRACE=$RUN/trace.json
chk check-counts work=200 worker=0 main=0
chk check-per-tid work 200
no_such_tid export -q --tid 1 "$RUN"
warns export -q -F 'nomatch*' "$RUN"
exit 0
