#!/bin/bash
# Stripped executables and libraries (no .symtab): their functions come from the FDEs of
# .eh_frame, named from .dynsym when exported and func_0xADDRESS (the address in the file, as
# nm shows it in the unstripped copy) otherwise; gcc's .cold parts (one entered mid-frame, one
# only jumped to) and the runtime's code (_start, the PLT) are no functions. The counts equal
# the program's own, under both engines, and with -l for a stripped library. A debug file gives
# the names back, found by libdwfl's lookup: by .gnu_debuglink, by build ID under a directory
# CALLTRACE_DEBUG_DIRS names, from a debuginfod server (DEBUGINFOD_URLS). Then Debian's
# stripped Rust ripgrep: each function's count equals the kernel's, uprobes at the same
# addresses (bpftrace), on the same work.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

N=300
build_shared stripped_lib O2 stripped/libstrippedlib.so -Wl,-soname,libstrippedlib.so
LIBFILE=$LIB
build stripped O2 -Wl,--export-dynamic-symbol=exported_sum "$LIBFILE" '-Wl,-rpath,$ORIGIN'
cp "$LIBFILE" "$BUILD_DIR/" || fail "cp"
nm "$BIN" | grep -q 'walk\.cold$' && nm "$BIN" | grep -q 'clamp\.cold$' ||
    fail "gcc split no .cold part out of walk and clamp: the test shows nothing"
D=$T/stripped
mkdir -p "$D" && cp "$BIN" "$D/prog" && cp "$LIBFILE" "$D/libstrippedlib.so" || fail "cp"
strip --strip-all "$D/prog" "$D/libstrippedlib.so" || fail "strip"
readelf -S "$D/prog" | grep -q '\.symtab' && fail "strip left a .symtab"
plain_run "$BIN" $N
[ "$PL_RC" = 0 ] || fail "the program failed: $(cat "$PL_ERR")"
cp "$PL_OUT" "$T/own.counts"
export CALLTRACE_DEBUG_DIRS=$T/no-debug-files # nothing the machine has installed

# stripped_name FILE NAME: NAME as a stripped FILE shows it: its own name when .dynsym has it,
# else func_0x and its address in FILE (from its unstripped copy).
stripped_name() {
    if readelf --dyn-syms -W "$1" | awk '$4 == "FUNC" && $7 != "UND" { print $8 }' |
        grep -qx "$2"; then
        echo "$2"
        return
    fi
    local addr
    addr=$(nm "$1" | awk -v f="$2" '$3 == f && ($2 == "t" || $2 == "T") { print $1 }')
    [ -n "$addr" ] || fail "no symbol $2 in $1"
    printf 'func_0x%x\n' "0x$addr"
}

# expect_counts FILE NAME...: "NAME COUNT" for each function NAME of FILE as its stripped copy
# shows it, with the program's own count (a function it does not count is called once).
expect_counts() {
    local file=$1 name count
    shift
    for name in "$@"; do
        count=$(awk -v f="$name" '$1 == "count" && $2 == f { print $3 }' "$T/own.counts")
        echo "$(stripped_name "$file" "$name") ${count:-1}"
    done
}
PROG_FUNCS=(main exported_sum walk clamp report_bad tail_caller tail_target)
LIB_FUNCS=(lib_run lib_step lib_scale lib_report)

# traced_as_stripped: the last run's functions and counts are exactly $T/want's.
traced_as_stripped() {
    expect_rc 0
    expect_trace
    same_stdout
    chk check-nesting
    query counts | sort >"$T/got"
    sort "$T/want" -o "$T/want"
    diff -u "$T/want" "$T/got" >"$T/diff" || fail "functions or counts differ: $(cat "$T/diff")"
}

expect_counts "$BIN" "${PROG_FUNCS[@]}" >"$T/want"
grep -q '^exported_sum ' "$T/want" && grep -q '^func_0x' "$T/want" ||
    fail "expected names: $(cat "$T/want")"
for engine in inject ptrace; do
    CTX="[stripped program, $engine engine]"
    ct_run -v --engine=$engine -- "$D/prog" $N
    traced_as_stripped
    [ $engine = inject ] && inject_engaged
    grep -q "prog: no symbol table: 7 functions from its .* FDEs, 6 of them unnamed .*, 1 entered mid-frame (.cold parts), 1 only jumped to" "$CT_ERR" ||
        fail "-v does not account for the FDEs: $(grep 'no symbol table' "$CT_ERR")"
done

CTX="[stripped library, -l]"
expect_counts "$BIN" "${PROG_FUNCS[@]}" >"$T/want"
expect_counts "$LIBFILE" "${LIB_FUNCS[@]}" >>"$T/want"
grep -q '^func_0x' <(expect_counts "$LIBFILE" lib_step) || fail "lib_step is exported"
ct_run -l 'libstrippedlib*' -- "$D/prog" $N
traced_as_stripped
inject_engaged

# with_debug_names: the last run's functions are the unstripped program's, by name.
with_debug_names() {
    expect_rc 0
    expect_trace
    chk check-counts -f "$T/prog.counts"
    ct_raw report -f csv "$CT_DIR"
    grep -q '^"func_0x' "$CT_OUT" && fail "functions without a name: $(cat "$CT_OUT")"
    return 0
}
grep -E "^count ($(IFS='|' && echo "${PROG_FUNCS[*]}")) " "$T/own.counts" >"$T/prog.counts"
objcopy --only-keep-debug "$BIN" "$T/prog.debug" || fail "objcopy --only-keep-debug"
id=$(readelf -n "$BIN" | awk '/Build ID:/ { print $3 }')
[ -n "$id" ] || fail "the test program has no build ID"

CTX="[debug file by .gnu_debuglink]"
cp "$D/prog" "$D/linked" && cp "$T/prog.debug" "$D/linked.debug" || fail "cp"
objcopy --add-gnu-debuglink="$D/linked.debug" "$D/linked" || fail "objcopy --add-gnu-debuglink"
ct_run -v -- "$D/linked" $N
grep -q "linked: debug file $D/linked.debug" "$CT_ERR" || fail "-v does not name the debug file"
with_debug_names

CTX="[debug file by build ID, under CALLTRACE_DEBUG_DIRS]"
mkdir -p "$T/debug-tree/.build-id/${id:0:2}" || fail "mkdir"
cp "$T/prog.debug" "$T/debug-tree/.build-id/${id:0:2}/${id:2}.debug" || fail "cp"
CALLTRACE_DEBUG_DIRS=$T/elsewhere:$T/debug-tree ct_run -- "$D/prog" $N
with_debug_names

CTX="[debug file from debuginfod]"
mkdir -p "$T/server/buildid/$id" && cp "$T/prog.debug" "$T/server/buildid/$id/debuginfo" ||
    fail "cp"
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$T/server" >"$T/http.log" 2>&1 &
HTTP=$!
trap 'kill "$HTTP" 2>/dev/null; _kill_bg; _cleanup' EXIT
wait_until 20 "the HTTP server's port" grep -q 'Serving HTTP on .* port [0-9]' "$T/http.log"
port=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$T/http.log" | head -1)
DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$T/debuginfod-cache ct_run -- "$D/prog" $N
with_debug_names
grep -q "GET /buildid/$id/debuginfo" "$T/http.log" || fail "debuginfod was not asked: $(cat "$T/http.log")"
kill "$HTTP"

# Debian's ripgrep (Rust, stripped, no .dynsym function): counts against the kernel's uprobes.
CTX="[ripgrep against uprobes]"
RG=/usr/bin/rg
[ -x "$RG" ] || fail "no $RG: scripts/install-deps.sh installs ripgrep"
command -v bpftrace >/dev/null || fail "no bpftrace: scripts/install-deps.sh installs it"
readelf -S "$RG" | grep -q '\.symtab' && fail "$RG has a symbol table: not the stripped case"
# A uprobe is placed at a file offset: in rg's code segment they equal the addresses.
read -r _ off vaddr _ < <(readelf -lW "$RG" | grep -E '^ *LOAD .* R E ') || fail "readelf -l $RG"
[ $((off)) = $((vaddr)) ] || fail "rg's code is at file offset $off, address $vaddr: probe offsets differ"
mkdir -p "$T/tree" && cp "$PROGS_DIR"/*.c "$T/tree/" || fail "cp"
work=("$RG" -j1 --sort path -c TRACED "$T/tree") # one thread, files in order: the same calls
plain_run "${work[@]}"
for i in 1 2; do
    ct_run -- "${work[@]}"
    expect_rc 0
    same_stdout
    query counts >"$T/rg.$i"
done
# the functions whose counts both runs agree on (hash tables are seeded at random)
join <(sort "$T/rg.1") <(sort "$T/rg.2") | awk '$1 ~ /^func_0x/ && $2 == $3 { print $1, $2 }' |
    sort -k2,2n >"$T/rg.stable"
[ "$(wc -l <"$T/rg.stable")" -ge 200 ] || fail "too few functions traced: $(wc -l <"$T/rg.stable")"
# the 20 most called and the 20 least (attaching a uprobe takes bpftrace a few hundred ms)
{ head -20 "$T/rg.stable"; tail -20 "$T/rg.stable"; } | sort -u >"$T/rg.picked"
probes=""
while read -r name _; do
    probes+="${probes:+, }uprobe:$RG:${name#func_}"
done <"$T/rg.picked"
timeout -k 5 90 bpftrace --unsafe -e "$probes /pid == cpid/ { @[probe] = count(); }" \
    -c "${work[*]}" >"$T/bpftrace.out" 2>"$T/bpftrace.err" ||
    fail "bpftrace failed: $(tail -5 "$T/bpftrace.err")"
# "@[uprobe:/usr/bin/rg:1239984]: 17": the offset in decimal
awk '$1 ~ /^@\[uprobe:/ { a = $1; sub("\\]:$", "", a); sub(".*:", "", a); printf "func_0x%x %d\n", a, $2 }' \
    "$T/bpftrace.out" | sort >"$T/rg.uprobes"
sort "$T/rg.picked" >"$T/rg.want"
diff -u "$T/rg.uprobes" "$T/rg.want" >"$T/diff" ||
    fail "calltrace's counts (+) differ from the uprobes' (-): $(head -40 "$T/diff")"
note "$(wc -l <"$T/rg.want") functions of $(wc -l <"$T/rg.1") traced, counts equal to uprobes'"
echo "ok"
