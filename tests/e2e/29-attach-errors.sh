#!/bin/bash
# calltrace -p refusals: each is one line "calltrace: WHAT: WHY" naming the
# cause, a non-zero exit, and no run directory left behind.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build attachee O2

refused() { # WHAT EXPECTED_TEXT CALLTRACE_ARGS...
    local what=$1 text=$2
    shift 2
    CTX="[$what]"
    ct_raw "$@"
    one_stderr_line_error "$what"
    grep -q -- "$text" "$CT_ERR" || fail "the message does not say '$text': $(cat "$CT_ERR")"
    [ -z "$(ls -A "$T" | grep calltrace-out)" ] || fail "a run directory was left behind"
}

refused "no such process" "no such process" -p 4194303
refused "kernel thread" "kernel thread" -p 2
CTX="[calltrace's parent]"
"$CALLTRACE" -p $$ 2>"$T/parent.err" && fail "tracing its parent succeeded"
grep -q "^calltrace: .*calltrace's parent" "$T/parent.err" || fail "unclear: $(cat "$T/parent.err")"
CTX="[calltrace itself]"
bash -c "exec '$CALLTRACE' -p \$\$" 2>"$T/self.err" && fail "tracing itself succeeded"
grep -q '^calltrace: .*calltrace itself' "$T/self.err" || fail "unclear: $(cat "$T/self.err")"

# a zombie: the child of a process that never reaps it
(sleep 0.01 & exec sleep 30) &
holder=$!
wait_until 10 "a zombie child" bash -c "ps -o stat= --ppid $holder | grep -q Z"
zombie=$(ps -o pid= --ppid $holder | tr -d ' ')
refused "zombie" "zombie" -p "$zombie"
kill $holder

# already traced: by a first calltrace
mkfifo "$T/ctl"
"$CALLTRACE" -q -o "$T/first" "$BIN" <"$T/ctl" >/dev/null 2>&1 &
first=$!
exec 3>"$T/ctl"
wait_until 10 "the program to start under a first calltrace" pgrep -P $first
prog=$(pgrep -P $first)
refused "already traced" "already traced by process $first ($CT_COMM)" -p "$prog"
echo stop >&3
exec 3>&-
wait $first

# another user: nobody may not trace root's process
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    sleep 30 &
    victim=$!
    CTX="[another user]"
    setpriv --reuid=65534 --regid=65534 --clear-groups "$CALLTRACE" -o /tmp/ct-never-$$ -p $victim 2>"$T/user.err"
    rc=$?
    kill $victim
    [ $rc != 0 ] || fail "nobody attached to root's process"
    grep -q '^calltrace: .*permission denied.*user 0' "$T/user.err" ||
        fail "the message does not name the other user: $(cat "$T/user.err")"
fi

refused "bad pid" "process id is invalid" -p abc
refused "pid 0" "process id is too small" -p 0
refused "-p and a program" "unexpected with -p" -p 1 "$BIN"
refused "bad duration" "not a duration" -p 1 -t 0
