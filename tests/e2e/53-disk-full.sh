#!/bin/bash
# Fault: the disk fills up during the run (a 128 KiB tmpfs; needs root to mount it, as CI has,
# and says SKIP otherwise). The program must run on undisturbed, calltrace must say what it could
# not write and exit non-zero, and once there is room again `calltrace export RUN` must give a
# valid trace of everything that fit.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build faults O2

if [ "$(id -u)" != 0 ]; then
    echo "SKIP: mounting a small tmpfs needs root"
    exit 0
fi
MNT=$T/full
mkdir -p "$MNT" || fail "mkdir $MNT"
mount -t tmpfs -o size=128k,mode=0755 calltrace-test "$MNT" || { echo "SKIP: cannot mount a tmpfs here"; exit 0; }
trap 'umount "$MNT" 2>/dev/null; _kill_bg; _cleanup' EXIT

CTX="[disk full]"
plain_run "$BIN" count 20000
_next_files
CT_DIR=$MNT/run CT_TRACE=$MNT/run/trace.json CT_OUT=$_OUT CT_ERR=$_ERR
start=$(now_ms)
timeout -k 5 "$CT_TIMEOUT" "$CALLTRACE" "${CT_ENGINE_OPT[@]}" -o "$CT_DIR" -- "$BIN" count 20000 \
    </dev/null >"$CT_OUT" 2>"$CT_ERR"
CT_RC=$?
took=$(($(now_ms) - start))
same_stdout
[ "$CT_RC" = 1 ] || fail "calltrace exited $CT_RC on a full disk, expected 1 (program's status 0)"
grep -q "^calltrace: writing $CT_DIR/events.ctr: No space left on device" "$CT_ERR" ||
    fail "no 'No space left' error for events.ctr: $(head -c 600 "$CT_ERR")"
grep -v '^calltrace: ' "$CT_ERR" && fail "stderr has lines not from calltrace"
[ ! -e "$CT_TRACE.tmp" ] || fail "a half-written trace.json.tmp was left behind"
[ ! -e "$CT_TRACE" ] || python3 "$CHECKER" validate "$CT_TRACE" >/dev/null ||
    fail "an invalid trace.json was left on the full disk"
size=$(stat -c %s "$CT_DIR/events.ctr")
note "full after $size bytes of record; calltrace ended in $took ms, stderr:"
sed 's/^/    /' "$CT_ERR"

mount -o remount,size=32m "$MNT" || fail "cannot grow the tmpfs"
ct_raw export "$MNT/run"
CT_DIR=$MNT/run CT_TRACE=$MNT/run/trace.json
expect_rc 0 "export after space was freed"
expect_trace
chk check-nesting
works=$(query counts | sed -n 's/^work //p')
[ "${works:-0}" -gt 0 ] && [ "${works:-0}" -le 20000 ] ||
    fail "exported trace has ${works:-0} work calls, expected 1..20000"
complete=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["otherData"]["complete"])' "$CT_TRACE")
[ "$complete" = False ] || fail "the trace of a run whose record was cut says complete: $complete"
note "export after freeing space: $works of 20000 work calls, $(query summary | sed -n 's/^calls //p') calls"
