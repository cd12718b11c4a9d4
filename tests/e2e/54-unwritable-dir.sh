#!/bin/bash
# Fault: the run directory becomes unwritable in the middle of the run (the program is made to
# wait, the directory is chmod 0555, the program goes on). calltrace keeps recording into the
# events.ctr it already has open, cannot create trace.json, says so in one line and exits 1;
# once the directory is writable again, `calltrace export RUN` gives the complete trace.
# As root (CI), calltrace runs as nobody through setpriv, since root ignores permissions.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build faults O2

as_user=()
W=$T/w
mkdir -p "$W" || fail "mkdir $W"
if [ "$(id -u)" = 0 ]; then
    command -v setpriv >/dev/null || { echo "SKIP: root without setpriv"; exit 0; }
    as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
    chmod 0755 "$T" && chown 65534:65534 "$W" || fail "cannot prepare $W for nobody"
    [ -z "${CT_REPORT_DIR:-}" ] || chmod 0777 "$CT_REPORT_DIR"
fi
mkfifo "$T/in" || fail "mkfifo"
exec 3<>"$T/in"

CTX="[unwritable run directory]"
_next_files
CT_DIR=$W/run CT_TRACE=$W/run/trace.json CT_OUT=$_OUT CT_ERR=$_ERR
"${as_user[@]}" "$CALLTRACE" "${CT_ENGINE_OPT[@]}" -o "$CT_DIR" -- "$BIN" wait 300 "$W/ctr" <"$T/in" >"$CT_OUT" 2>"$CT_ERR" &
BG=$!
wait_until 30 "the program to make its first 300 calls" progress_ge "$W/ctr" 300
chmod 0555 "$CT_DIR" || fail "chmod 0555 $CT_DIR"
echo go >&3
ct_wait_bg 30
exec 3>&-
[ "$CT_RC" = 1 ] || fail "calltrace exited $CT_RC, expected 1 (the program's 0, but no trace)"
grep -q "^calltrace: cannot create $CT_DIR/trace.json.tmp: Permission denied" "$CT_ERR" ||
    fail "expected 'cannot create ...: Permission denied': $(head -c 600 "$CT_ERR")"
[ "$(wc -l <"$CT_ERR")" = 1 ] || fail "expected one line on stderr: $(head -c 600 "$CT_ERR")"
[ ! -e "$CT_TRACE" ] || fail "trace.json exists in a directory calltrace could not write"
[ "$(ls -A "$W" | sort | tr '\n' ' ')" = "ctr run " ] || fail "stray files in $W: $(ls -A "$W")"
grep -qx 'count work 600' "$CT_OUT" || fail "the program did not finish its calls: $(cat "$CT_OUT")"

prog_out=$CT_OUT
chmod 0700 "$CT_DIR"
# by its owner: calltrace writes into no one else's run directory
_next_files
CT_OUT=$_OUT CT_ERR=$_ERR
timeout -k 5 "$CT_TIMEOUT" "${as_user[@]}" "$CALLTRACE" export "$W/run" </dev/null >"$CT_OUT" 2>"$CT_ERR"
CT_RC=$?
CT_DIR=$W/run CT_TRACE=$W/run/trace.json
expect_rc 0 "export once the directory is writable again"
expect_trace
chk check-nesting
chk check-counts -f "$prog_out"
complete=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["otherData"]["complete"])' "$CT_TRACE")
[ "$complete" = True ] || fail "the record was complete, the trace says complete: $complete"
note "recorded on after chmod 0555: $(query summary | sed -n 's/^calls //p') calls exported"
