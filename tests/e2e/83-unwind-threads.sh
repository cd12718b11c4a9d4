#!/bin/bash
# Unwinding through traced frames in threads, under both engines (see 82-unwind.sh): threads
# throwing at once, then a thread cancelled inside traced frames with destructors.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/../lib/unwind.sh"
require_calltrace

for opt in O0 O2; do
    build unwind "$opt"
    UNFINISHED=('cancelled(void*)' 'stuck(int)')
    run_both "unwind threads -$opt" "$BIN" threads
    chk check-per-tid 'catch_all(int)' 40 40 40 40
    chk check-per-tid 'stuck(int)' 3
    grep -q '^cancelled yes$' "$CT_OUT" || fail "the thread was not cancelled: $(cat "$CT_OUT")"
done
