#!/bin/bash
# Process trees: vfork then exec, posix_spawn, exec from a non-main thread, a
# double-forking daemon, 50 children alive at once, a child killed by a
# signal, a parent that returns before its children, and a shell pipeline.
# Exact call counts per process; exit status and output as untraced.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

# per_pid NAME: the sorted per-process counts of NAME (one thread each here)
processes_are() {
    local n
    n=$(query processes | wc -l)
    [ "$n" = "$1" ] || fail "expected calls in $1 processes, the trace has $n"
}

for opt in O0 O2; do
    build proctree "$opt"

    CTX="[vfork-exec -$opt]"
    standard_case "$BIN" vfork-exec
    processes_are 2
    chk check-per-tid work 1 7
    # the vfork child called exec_leaf and never came back from its execl()
    chk check-unfinished exec_leaf

    CTX="[posix_spawn -$opt]"
    standard_case "$BIN" spawn 3
    processes_are 4
    chk check-per-tid work 3 3 3
    chk check-counts main=4

    CTX="[exec from a thread -$opt]"
    plain_run "$BIN" thread-exec
    ct_run "$BIN" thread-exec
    expect_trace
    same_rc
    same_stdout
    chk check-nesting
    processes_are 1
    # one work() before the exec in the thread, five in the new image
    chk check-counts work=6 exec_from_thread=1 exec_leaf=1 main=2 report=1
    chk check-unfinished main exec_from_thread exec_leaf --may thread_exec

    CTX="[double-forking daemon -$opt]"
    standard_case "$BIN" daemon
    chk check-per-tid work 6
    chk check-parent work child_main

    CTX="[50 children at once -$opt]"
    standard_case "$BIN" many 50
    processes_are 51
    chk check-per-tid child_main $(printf '1 %.0s' $(seq 50))
    chk check-parent child_main main many
    chk check-unfinished

    CTX="[child killed by a signal -$opt]"
    standard_case "$BIN" killed
    grep -qx 'child signal 11' "$CT_OUT" || fail "the child was not killed by SIGSEGV: $(cat "$CT_OUT")"
    # the child returned from child_main before raising: its open calls are
    # all inherited from its parent, none is a call of its own
    chk check-unfinished
    chk check-per-tid child_main 1

    CTX="[parent returns before its children -$opt]"
    standard_case "$BIN" orphans 4
    chk check-per-tid child_main 1 1 1 1
    chk check-per-tid work 3 3 3 3
done

CTX="[bash -c 'a | b | c']"
build proctree O2
plain_run bash -c "$BIN leaf 2 | $BIN leaf 3 | $BIN leaf 4"
ct_run bash -c "$BIN leaf 2 | $BIN leaf 3 | $BIN leaf 4"
expect_trace
same_rc
same_stdout
chk check-per-tid work 2 3 4
chk check-per-tid report 1 1 1
grep -q '"process_name".*proctree-O2 leaf 3"' "$CT_TRACE" ||
    fail "no process named by its command line 'proctree-O2 leaf 3'"

CTX="[a child execs a program without symbols]"
plain_run bash -c "/usr/bin/true; $BIN leaf 1"
ct_run bash -c "/usr/bin/true; $BIN leaf 1"
expect_trace
same_rc
same_stdout
grep -q '"process_name".*"args":{"name":"/usr/bin/true"}' "$CT_TRACE" ||
    fail "the child that ran /usr/bin/true (no symbols) has no track"
chk check-per-tid work 1
