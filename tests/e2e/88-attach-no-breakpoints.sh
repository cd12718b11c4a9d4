#!/bin/bash
# --engine=inject -p plants no breakpoint: a program calltrace attached to survives calltrace's
# SIGKILL whatever it does next. The program (tests/progs/attach_unwind.cc) throws C++
# exceptions through traced frames, catches and rethrows them, walks its stack with backtrace(),
# calls functions no 5-byte jump fits (1, 3 and 4 bytes with no padding, a loop back to the
# entry) and forks a child that throws through the calls it inherited; it checks every value
# that comes back; it dlopens libraries when told. Attached, the 3- and 4-byte ones are patched
# through hops (tracer/inject/hops.h) and the loop turns in its copy; the 1-byte one, which no
# jump fits, is left out and said so (no breakpoint); libgcc's unwinder and the dynamic linker are hooked
# in the program itself: a library loaded while attached is traced (-l), exactly; the trace
# nests. Then
# calltrace is SIGKILLed while attached: the program goes on throwing, walking, forking, loading
# libraries; a calltrace attached again afterwards (a thread stopped inside the killed one's
# trampolines is stepped out of them first) leaves the calls the killed one hooked returning
# right; the program ends with exit 0 and its checks held. Before, the first exception or
# unpatchable call after
# the kill ended it (SIGTRAP or SIGSEGV).
source "$(dirname "$0")/../lib/testlib.sh"
source "$TESTS_DIR/lib/attachlib.sh"
require_calltrace
engine_unsupported ptrace "the ptrace engine is made of breakpoints"
build attach_unwind O2
PROG_BIN=$BIN
build_shared plugin O2 dl/libplugin-a.so
LIB_A=$LIB
build_shared plugin O2 dl/libplugin-b.so -DVARIANT=3
LIB_B=$LIB
target_start "$PROG_BIN"
FUNCS=(-F dive -F catcher -F relay -F 'walk*' -F round_trip -F fork_child -F 'tiny_*' -F spin_down
    -l 'libplugin-*' -F 'plugin_s*')

CTX="[attach, dlopen, detach]"
"$CALLTRACE" -v -p "$PROG" -o "$T/run1" "${FUNCS[@]}" 2>"$T/ct1.err" &
ct=$!
ATTACH_CT=$ct
wait_until 30 "calltrace to attach" grep -q "attached in" "$T/ct1.err"
echo "load $LIB_A" >&3 # the dynamic linker's hook asks calltrace to trace it
wait_until 30 "the program to load a library" grep -q '^loaded libplugin-a.so sum 100$' "$PROG_LOG"
kill -INT "$ct"
wait "$ct"
CT_RC=$?
ATTACH_CT=""
[ "$CT_RC" = 0 ] || fail "calltrace exited $CT_RC: $(grep -v "^calltrace\[symbols" "$T/ct1.err" | grep -v "left out (attached" | tail -12)"
traced_by "$PROG" 0 || fail "the program is still traced after calltrace exited"
grep -q "^calltrace\[probe\]: tiny_ret: left out (attached: no breakpoint), not patched: one byte long" "$T/ct1.err" ||
    fail "-v does not say that tiny_ret is left out: $(grep tiny_ret "$T/ct1.err")"
for f in tiny_inc tiny_same spin_down; do
    grep -q "^calltrace\[probe\]: $f: left out" "$T/ct1.err" && fail "$f was left out: $(grep "$f" "$T/ct1.err")"
done
grep -q '^calltrace: 1 function left out: the inject engine cannot patch it' "$T/ct1.err" ||
    fail "the closing lines do not count the function left out: $(grep -v '^calltrace\[' "$T/ct1.err")"
grep -q 'on a breakpoint' "$T/ct1.err" && fail "a breakpoint was planted: $(grep 'on a breakpoint' "$T/ct1.err")"
CT_TRACE=$T/run1/trace.json
chk check-nesting
chk check-parent dive dive catcher
chk check-parent catcher relay
chk check-parent walk3 walk2
[ "$(query counts | awk '$1 == "dive" { print $2 }')" -gt 0 ] || fail "no call of dive() recorded"
chk check-counts plugin_sum=100 plugin_square=400
# leaf() calls each once; a thread let go between two of them is one call apart
read -r n_inc n_same n_spin < <(query counts | awk '$1 == "tiny_inc" { a = $2 } $1 == "tiny_same" { b = $2 }
    $1 == "spin_down" { c = $2 } END { print a + 0, b + 0, c + 0 }')
[ "$n_inc" -gt 0 ] && [ $((n_same - n_inc)) -le 4 ] && [ $((n_inc - n_spin)) -le 4 ] &&
    [ $((n_spin - n_same)) -le 4 ] && [ $((n_inc - n_same)) -le 4 ] && [ $((n_spin - n_inc)) -le 4 ] ||
    fail "calls of tiny_same, tiny_inc and spin_down (one each a leaf call): $n_same $n_inc $n_spin"

CTX="[SIGKILL while attached]"
"$CALLTRACE" -q -p "$PROG" -o "$T/run2" "${FUNCS[@]}" 2>"$T/ct2.err" &
ct=$!
ATTACH_CT=$ct
wait_until 30 "calltrace to attach" traced_by "$PROG" "$ct"
wait_until 30 "calls to be recorded" recording "$T/run2/events.ctr"
kill -KILL "$ct"
wait "$ct" 2>/dev/null
ATTACH_CT=""
wait_until 10 "the program to be let go" traced_by "$PROG" 0
echo fork >&3
wait_until 30 "the program's fork after the kill" grep -q '^forked 1$' "$PROG_LOG"
echo "load $LIB_B" >&3 # the hook waits for calltrace once, ~200 ms, then never again
wait_until 30 "a library load after the kill" grep -q '^loaded libplugin-b.so sum 100$' "$PROG_LOG"
echo "load $LIB_A" >&3
loaded_twice() { [ "$(grep -c '^loaded libplugin-a.so sum 100$' "$PROG_LOG")" = 2 ]; }
wait_until 30 "a second library load after the kill" loaded_twice

# The calls hooked by the calltrace that was killed and still open (the main thread waits for
# its next command inside read_command, entered after the kill) return through that calltrace's
# code: a new attachment must not take them over, and leaves them returning right.
# CT_PARK=1 (tests/soak/reattach-parked.sh) first parks a worker inside the killed calltrace's
# entry trampoline, between its shadow push and its call (tests/progs/park.c; the process stays
# stopped until SIGCONT): the new attachment must step it out before taking its thread over.
# Not in make check: in the group-stopped process it still fails about 1 run in 5 (issue 16).
CTX="[attach again after the SIGKILL]"
if [ "${CT_PARK:-0}" = 1 ]; then
    CTX="[attach again after the SIGKILL, a thread inside the killed calltrace's entry]"
    build park O2
    worker=$(ls "/proc/$PROG/task" | sort -n | sed -n 2p)
    "$BIN" "$worker" >"$T/park.out" 2>&1 || fail "cannot park a thread: $(cat "$T/park.out")"
fi
"$CALLTRACE" -q -p "$PROG" -o "$T/run3" -t 1 "${FUNCS[@]}" 2>"$T/ct3.err"
CT_RC=$?
if ! kill -CONT "$PROG"; then
    wait "$PROG"
    fail "the program died (wait status $?): $(tail -3 "$PROG_LOG")"
fi
[ "$CT_RC" = 0 ] || fail "calltrace exited $CT_RC: $(tail -5 "$T/ct3.err")"
traced_by "$PROG" 0 || fail "the program is still traced after calltrace exited"
CT_TRACE=$T/run3/trace.json
chk check-nesting
echo fork >&3
wait_until 30 "the program's fork after the second attachment" grep -q '^forked 2$' "$PROG_LOG"
target_finish 'rounds>0 1 errors 0'
echo "attached without a breakpoint, then SIGKILLed: the program threw, walked, forked and loaded libraries on unharmed"
