#!/bin/bash
# --engine=inject: the same trace as the ptrace engine for what it supports (counts exact, calls
# nested, nothing lost even with the smallest ring, which makes threads wait for calltrace), its
# refusals and fallbacks said in one line, and a forked child, which the ptrace engine traces
# once calltrace has taken its copy of the patches and rings out of it.
# It is the default: the rest of the suite runs under it too, and again under the ptrace engine
# with CALLTRACE_ENGINE=ptrace (tests/lib/testlib.sh).
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
export CALLTRACE_ENGINE=inject

CTX="[bad options]"
ct_raw --engine=bogus true
one_stderr_line_error "--engine=bogus"
ct_raw --engine=inject --buffer-size 12 true
one_stderr_line_error "--buffer-size 12"
ct_raw --engine=ptrace --buffer-size 1M true
one_stderr_line_error "--buffer-size with --engine=ptrace"

CTX="[the default engine, --buffer-size]"
build recursion O2
plain_run "$BIN" 18
CALLTRACE_ENGINE="" ct_run --buffer-size 64K -- "$BIN" 18
expect_trace
same_stdout
chk check-counts -f "$CT_OUT"
inject_engaged

for opt in O0 O2; do
    CTX="[recursion -$opt, 64K ring]"
    build recursion "$opt"
    # fib(22): 57313 calls, over 100000 events: a 64 KiB ring (2048 events) fills ~50 times
    plain_run "$BIN" 22
    ct_run --buffer-size 64K -- "$BIN" 22
    expect_trace
    same_rc
    same_stdout
    chk check-nesting
    chk check-counts -f "$CT_OUT"
    chk check-unfinished
    grep -q 'not recorded' "$CT_ERR" && fail "calls were dropped: $(cat "$CT_ERR")"

    CTX="[threads -$opt]"
    build threads "$opt"
    standard_case "$BIN"
    chk check-per-tid work 25 25 25 25 50 100 150 200

    CTX="[fork -$opt: the ptrace engine traces the child]"
    build forks "$opt"
    standard_case "$BIN"
    grep -q 'forked processes are traced by the ptrace engine' "$CT_ERR" ||
        fail "no line says the ptrace engine traces the child: $(cat "$CT_ERR")"
    chk check-per-tid work 10 30

    CTX="[vfork and exec -$opt: the child's calls before its exec, then its new image]"
    build proctree "$opt"
    standard_case "$BIN" vfork-exec
    chk check-per-tid work 1 7
    chk check-unfinished exec_leaf
    grep -q 'not recorded' "$CT_ERR" && fail "calls were dropped: $(cat "$CT_ERR")"

    CTX="[static -$opt: the ptrace engine instead]"
    build nested "$opt" -static
    standard_case "$BIN"
    grep -q 'static executables are not supported yet; it is traced by the ptrace engine' \
        "$CT_ERR" || fail "no line says the ptrace engine traces it: $(cat "$CT_ERR")"
done
