#!/bin/bash
# calltrace -p, run as root, on a process of another user (nobody): the inject engine still
# records in-process. The shared region is a memfd the program creates and calltrace takes with
# pidfd_getfd, which needs no more than the ptrace access calltrace has. Before, the program
# had to open calltrace's memfd through /proc/CALLTRACE/fd/N, which another user may not, and
# the whole process silently fell to the ptrace engine (25 us a call).
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/attachlib.sh"
require_calltrace
engine_unsupported ptrace "the region shared with calltrace is the inject engine's"
if [ -n "${CALLTRACE_REAL:-}" ]; then # make check VALGRIND=1
    echo "skipped: valgrind does not know pidfd_open; without it, a process of another user cannot be given the region"
    exit 77
fi
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
    echo "skipped: needs root and setpriv, to run the program as another user"
    exit 77
fi
build attachee O2
chmod 755 "$T" # nobody runs its copy of the program from here
install -m 755 "$BIN" "$T/attachee"
printf '#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups %s\n' "$T/attachee" \
    >"$T/as-nobody"
chmod 755 "$T/as-nobody"
target_start "$T/as-nobody"
[ "$(awk '/^Uid:/ { print $2 }' "/proc/$PROG/status")" = 65534 ] ||
    fail "the program does not run as nobody: $(grep Uid "/proc/$PROG/status")"

"$CALLTRACE" -v -p "$PROG" -o "$T/run" -t 1 2>"$T/ct.err"
CT_RC=$?
[ "$CT_RC" = 0 ] || fail "calltrace exited $CT_RC: $(grep -v '^calltrace\[' "$T/ct.err" | head -5)"
grep -q "functions traced in process $PROG (inject)" "$T/ct.err" ||
    fail "the inject engine did not trace the program: $(grep -v '^calltrace\[symbols' "$T/ct.err" | head -8)"
grep -q "ptrace engine" "$T/ct.err" && fail "something fell to the ptrace engine: $(grep 'ptrace engine' "$T/ct.err")"
traced_by "$PROG" 0 || fail "the program is still traced after calltrace exited"
CT_TRACE=$T/run/trace.json
chk check-nesting
[ "$(query counts | awk '$1 == "step" { print $2 }')" -gt 0 ] || fail "no call of step() recorded"
target_finish 'rounds>0 1 signals exact threads>0 1 reads exact errors 0'
echo "a process of uid 65534 traced in-process by root's calltrace"
