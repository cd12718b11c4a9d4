#!/bin/bash
# -A on bad pointers: one into unmapped memory shows as its address and <unreadable>, a string
# running into a hole or longer than --string-max stops there with "...", and the program runs
# as untraced. --capture copies a buffer of a length given by another parameter. Malformed -A
# globs, --capture rules (in syntax, or naming parameters the function does not have) and
# --string-max values are refused in one line before anything runs.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build argfaults O0

CTX="[bad pointers]"
plain_run "$BIN"
ct_run -A -R --string-max 20 --capture 'block:buf:len' -- "$BIN"
expect_rc 0
same_stdout
RUN=$CT_DIR
show() { "$CALLTRACE" calls "$RUN" show "$1" | grep '^  s = '; }
show 1 | grep -qx '  s = 0x[0-9a-f]* "fine"' || fail "show 1: $(show 1)"
show 2 | grep -qx '  s = 0x[0-9a-f]*000 <unreadable>' || fail "show 2: $(show 2)"
show 3 | grep -qx '  s = 0x[0-9a-f]*ff6 "aaaaaaaaaa"\.\.\.' || fail "show 3: $(show 3)"
show 4 | grep -qx "  s = 0x[0-9a-f]*000 'a' <repeats 20 times>\.\.\." || fail "show 4: $(show 4)"
[ -e "$CT_DIR/calls/show/2/arg_s.bin" ] && fail "an unreadable pointer has bytes"
[ "$(od -An -tx1 "$CT_DIR/calls/block/1/arg_buf.bin" | tr -d ' \n')" = 000102feff07 ] ||
    fail "--capture block:buf:len: $(od -An -tx1 "$CT_DIR/calls/block/1/arg_buf.bin")"
[ "$(stat -c %s "$CT_DIR/calls/show/4/arg_s.bin")" = 20 ] || fail "--string-max 20 not kept"

CTX="[constant length]"
ct_run -Ablock --capture 'block:buf:3' -- "$BIN"
expect_rc 0
[ "$(od -An -tx1 "$CT_DIR/calls/block/1/arg_buf.bin" | tr -d ' \n')" = 000102 ] ||
    fail "--capture block:buf:3"
[ -e "$CT_DIR/calls/show" ] && fail "-A block captured show too"

CTX="[refused]"
for bad in "-A[abc --" "--capture block --" "--capture block:buf --" "--capture :buf:len --" \
    "--capture block:9buf:len --" "--capture block:buf:0 --" "--capture block:buf:x-y --" \
    "--capture block:nobuf:len --" "--capture block:len:buf --" "--capture block:buf:nolen --" \
    "--string-max 0 --" "--string-max 99999 --" "--max-call-dirs -1 --" "--capture block:buf:len --"; do
    read -ra opts <<<"$bad"
    [ "$bad" = "--capture block:buf:len --" ] || opts=(-A "${opts[@]}")
    [ "${opts[0]}${opts[1]}" = "-A-A[abc" ] && opts=("-A[abc" --)
    ct_run "${opts[@]}" "$BIN"
    expect_rc 2 "calltrace ${opts[*]}"
    one_stderr_line_error "calltrace ${opts[*]}"
    [ -e "$CT_DIR" ] && fail "calltrace ${opts[*]}: a run directory was created"
done
CTX="[rule for no function]"
ct_run -A --capture 'nosuch:buf:4' -- "$BIN"
expect_rc 0
grep -qx "calltrace: warning: --capture nosuch: matches no function of $BIN" "$CT_ERR" ||
    fail "no warning for a rule matching nothing: $(cat "$CT_ERR")"
exit 0
