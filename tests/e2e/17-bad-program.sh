#!/bin/bash
# Programs calltrace cannot trace.  Each must give: exit status != 0, exactly
# one stderr line "calltrace: WHAT: WHY", nothing on stdout, and no run
# directory (neither the -o one nor ./calltrace-out* in the cwd).
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build nested O0
GOOD=$BIN
B=$T/bad
mkdir -p "$B"

# not found (by path and by PATH lookup)
NOTFOUND=$B/does-not-exist
# not executable
cp "$GOOD" "$B/noexec" && chmod -x "$B/noexec"
# a directory
mkdir -p "$B/adir"
# a text file (executable, no #! line)
printf 'just some text\nnot a program\n' >"$B/text" && chmod +x "$B/text"
# an empty file
: >"$B/empty" && chmod +x "$B/empty"
# a 32-bit ELF: EI_CLASS (byte 4) = 1
cp "$GOOD" "$B/elf32" && printf '\001' | dd of="$B/elf32" bs=1 seek=4 conv=notrunc status=none
# an ELF for another machine: e_machine (bytes 18-19) = EM_AARCH64 (183)
cp "$GOOD" "$B/elfarm" && printf '\267\000' | dd of="$B/elfarm" bs=1 seek=18 conv=notrunc status=none
# a truncated ELF
head -c 200 "$GOOD" >"$B/truncated" && chmod +x "$B/truncated"
# no function to trace: stripped (static, dynamic PIE) and without an unwind table either (a
# stripped program that has one is traced from it: e2e 104)
build nested O2 -static
no_functions() {
    strip --strip-all "$1" && objcopy --remove-section .eh_frame --remove-section .eh_frame_hdr "$1"
}
cp "$BIN" "$B/stripped-static" && no_functions "$B/stripped-static"
cp "$GOOD" "$B/stripped-pie" && no_functions "$B/stripped-pie"
# a relocatable object and a shared library are not programs
gcc -c -o "$B/object.o" "$PROGS_DIR/nested.c" && chmod +x "$B/object.o"

check_bad() {   # check_bad WHAT PROGRAM [ARGS]
    local what=$1
    shift
    CTX="[$what]"
    local cwd=$T/cwd.$what out=$T/outdir.$what
    mkdir -p "$cwd"
    (cd "$cwd" && ct_raw_in "$out" "$@")
    CT_RC=$(cat "$T/rc") CT_OUT=$T/last.out CT_ERR=$T/last.err
    one_stderr_line_error "$what"
    [ ! -e "$out" ] || fail "$what: run directory $out was left behind (contents: $(ls -A "$out" | tr '\n' ' '))"
    [ -z "$(ls -A "$cwd")" ] || fail "$what: files left in the cwd: $(ls -A "$cwd" | tr '\n' ' ')"
    note "ok: $(cat "$CT_ERR")"
}
ct_raw_in() {
    local out=$1
    shift
    timeout -k 5 "$CT_TIMEOUT" "$CALLTRACE" -o "$out" -- "$@" </dev/null >"$T/last.out" 2>"$T/last.err"
    echo $? >"$T/rc"
}

check_bad not-found "$NOTFOUND"
check_bad not-in-path calltrace-no-such-program-xyz
check_bad not-executable "$B/noexec"
check_bad directory "$B/adir"
check_bad text-file "$B/text"
check_bad empty-file "$B/empty"
check_bad elf32 "$B/elf32"
check_bad elf-arm "$B/elfarm"
check_bad truncated-elf "$B/truncated"
check_bad stripped-static "$B/stripped-static"
check_bad stripped-pie "$B/stripped-pie"
check_bad object-file "$B/object.o"
