#!/bin/bash
# Stress: a program with 200 threads alive at once (a barrier holds them until all exist), each
# making its calls. Every thread's calls must be on its own track, exactly counted.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build faults O2
CTX="[200 threads]"
start=$(now_ms)
ct_run "$BIN" threads 200 5
took=$(($(now_ms) - start))
expect_rc 0
expect_trace
chk check-nesting
chk check-metadata
chk check-counts -f "$CT_OUT"
chk check-counts work=1000 thread_main=200
chk check-unfinished
chk check-per-tid thread_main $(printf '1 %.0s' $(seq 200))
chk check-per-tid work $(printf '5 %.0s' $(seq 200))
note "200 threads, $(query summary | sed -n 's/^calls //p') calls, traced in $took ms"
