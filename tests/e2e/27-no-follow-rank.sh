#!/bin/bash
# --no-follow traces only the first process: its children are detached before
# they run an instruction of their own, with no breakpoint left (the kernel
# shows them untraced, and they do not die of a stray int3). MPI ranks get
# their own default run directory and process names.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

for opt in O0 O2; do
    build proctree "$opt"

    CTX="[--no-follow fork -$opt]"
    plain_run "$BIN" many 5
    ct_run --no-follow -- "$BIN" many 5
    expect_trace
    same_rc
    same_stdout
    n=$(query processes | wc -l)
    [ "$n" = 1 ] || fail "expected calls in 1 process, the trace has $n"
    chk check-counts child_main=0 work=0 main=1

    CTX="[--no-follow vfork+exec -$opt]"
    plain_run "$BIN" vfork-exec
    ct_run --no-follow -- "$BIN" vfork-exec
    expect_trace
    same_rc
    same_stdout
    chk check-counts work=1 report=1 main=1

    CTX="[--no-follow leaves no tracer -$opt]"
    ct_run --no-follow -- "$BIN" tracer
    expect_rc 0
    grep -q '^child TracerPid:[[:space:]]*0$' "$CT_OUT" ||
        fail "the child is still traced: $(cat "$CT_OUT")"
    CTX="[followed child is traced -$opt]"
    ct_run "$BIN" tracer
    expect_rc 0
    grep -q '^child TracerPid:[[:space:]]*[1-9]' "$CT_OUT" ||
        fail "the child is not traced by default: $(cat "$CT_OUT")"
    chk check-counts child_main=1 work=2
done

CTX="[MPI rank]"
build proctree O0
mkdir -p "$T/rankdir"
(cd "$T/rankdir" && OMPI_COMM_WORLD_RANK=3 timeout 60 "$CALLTRACE" "$BIN" leaf 2 \
    >/dev/null 2>"$T/rank.err") || fail "traced run under rank 3 failed: $(cat "$T/rank.err")"
[ -f "$T/rankdir/calltrace-out-rank3/trace.json" ] ||
    fail "no calltrace-out-rank3/trace.json: $(ls "$T/rankdir")"
grep -q '"process_name".*"rank 3: ' "$T/rankdir/calltrace-out-rank3/trace.json" ||
    fail "the process name does not show the rank"
(cd "$T/rankdir" && PMI_RANK=12 timeout 60 "$CALLTRACE" -q "$BIN" leaf 2 >/dev/null) ||
    fail "traced run under PMI_RANK failed"
[ -d "$T/rankdir/calltrace-out-rank12" ] || fail "no calltrace-out-rank12: $(ls "$T/rankdir")"
