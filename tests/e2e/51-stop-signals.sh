#!/bin/bash
# Fault: calltrace gets SIGINT, SIGTERM or SIGHUP at a pseudo-random moment (after a random
# number of the program's progress markers). It must end the program, exit with 128+N, and
# leave a complete, valid trace. Half the runs signal calltrace alone, half the whole process
# group as a terminal would (then the program gets the signal too). The program calls at a
# pace of its own (a chain of calls every 75 us), so that the trace stays small under the inject
# engine too.
source "$(dirname "$0")/../lib/testlib.sh"
CT_FORMAT=default # the closing line names the one trace.json
require_calltrace
build faults O2
RANDOM=${CT_SEED:-51}

complete_flag() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["otherData"]["complete"])' "$CT_TRACE"; }

run=0
for sig in INT TERM HUP; do
    for target in calltrace group; do
        run=$((run + 1))
        n=$((500 + RANDOM % 15000))
        CTX="[SIG$sig to $target, after $n markers]"
        rm -f "$T/ctr" "$T/pid"
        if [ $target = group ]; then
            # A process group of its own, as a shell job would have.
            _next_files
            CT_DIR=$T/run.$_RUN_SEQ CT_TRACE=$T/run.$_RUN_SEQ/trace.json CT_OUT=$_OUT CT_ERR=$_ERR
            setsid "$CALLTRACE" "${CT_ENGINE_OPT[@]}" -o "$CT_DIR" -- "$BIN" busy "$T/ctr" "$T/pid" 75 \
                </dev/null >"$CT_OUT" 2>"$CT_ERR" &
            BG=$!
        else
            ct_start_bg "$BIN" busy "$T/ctr" "$T/pid" 75
        fi
        wait_until 60 "$n progress markers" progress_ge "$T/ctr" "$n"
        BG_PROG=$(cat "$T/pid")
        start=$(now_ms)
        if [ $target = group ]; then
            kill -s "$sig" -- "-$BG" || fail "cannot signal process group $BG"
        else
            kill -s "$sig" "$BG" || fail "cannot signal calltrace $BG"
        fi
        wait_until 20 "the program (pid $BG_PROG) to end after SIG$sig" pid_ended "$BG_PROG"
        ct_wait_bg 20
        took=$(($(now_ms) - start))
        expect_rc $((128 + $(kill -l "$sig"))) "calltrace got SIG$sig"
        expect_trace
        chk check-nesting
        chk check-unfinished --may main --may level1 --may level2 --may work
        [ "$(complete_flag)" = True ] || fail "trace says complete: $(complete_flag), expected true"
        grep -q "^calltrace: trace in $CT_DIR/trace.json: [0-9]* calls\\?" "$CT_ERR" ||
            fail "no closing line on stderr: $(head -c 500 "$CT_ERR")"
        calls=$(query summary | sed -n 's/^calls //p')
        note "finished ${took} ms after the signal, $calls calls in the trace"
    done
done
