#!/usr/bin/env bash
# bench/coverage.sh - how many functions calltrace patches in-process, against uftrace -P .
#
# Not a timing: a count of the functions each tracer instruments inside the program, on
#   python3      Debian's /usr/bin/python3 (python3.11): its executable's own functions
#                (`python3 -c pass`);
#   libc.so.6    libc as a library (/bin/true): calltrace -l 'libc.so*', uftrace -P .@libc.so.6;
#   libsqlite3   libsqlite3.so.0 as a library, driven by /usr/bin/sqlite3 running a small SQL
#                script (needs the Debian packages sqlite3 and libsqlite3-0);
#   PROGS        calltrace's test programs (tests/build/progs, made by `make check`; a missing
#                one is compiled into the scratch directory as tests/lib/testlib.sh does).
#
# calltrace runs `calltrace -v -v -o DIR [-l GLOB] -- PROG ARGS` (its default inject engine) and
# the count is read from what -v says, per image:
#   functions    "PATH: N functions, ..." (-v -v): its FUNC symbols with a size, one per
#                address, from .symtab, else .dynsym, or from the debug file it names
#                ("PATH: debug file F") when there is one (libc6-dbg: /usr/lib/debug);
#   skipped      "skipping NAME: REASON" (C runtime code, .cold parts): deliberately untraced;
#   fallback     "NAME: on a breakpoint (the ptrace engine's), not patched: REASON" (with -p:
#                "left out (attached: no breakpoint)"), and "IFUNC NAME: on a breakpoint, not
#                patched: REASON" for IFUNC implementations outside the image's symbols;
#   in-process   "PATH: N functions traced in process PID (inject)" counts patched + fallback.
# uftrace (0.13, full dynamic patching with capstone: no recompile) runs
#   uftrace record --no-libcall -P PATTERN -v --debug-domain=dynamic:4 --logfile=LOG -- PROG ARGS
# with PATTERN "." for an executable and ".@SONAME" for a library (the module after '@' is
# compared with the file name or soname as a prefix). Its log has, per function it tries,
# "force patch normal func: NAME" or ">> FAIL: NAME" (after the reason: "prologue has
# PC-relative addressing", "jump to middle of function", ...) or ">> SKIP: NAME", and at the end
# "dynamic patch stats" (total/patched/failed/skipped) - printed only when something failed.
# Functions shorter than 6 bytes are skipped without a word. Its total is the FUNC symbols of
# the symbol table it loads (.symtab, else .dynsym; never a debug file), one per address, less
# _start and __libc_csu_*; its "patched" includes functions it reverts at the end (a later
# "bad jump" into them): the table shows those apart. A module it takes for a -pg or -mfentry
# build (libc.so.6 defines __fentry__ and mcount: "dynamic patch type: libc.so.6: 2 (fentry)")
# gets no patching at all, every function skipped, and no stats.
#
# Then both are matched by address (the names resolved through the symbol tables, uftrace's
# C++ names demangled "simple" as it does) to list what one instruments and the other does
# not, and a few examples of each reason with their size and first instructions (objdump).
#
# Nothing is timed, so nothing is pinned. A tracer or binary that is missing shows as N/A.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$SCRIPT_DIR/.." && pwd)

usage()
{
    cat <<EOF
usage: bench/coverage.sh [--examples N] [--table-only] [-h]

  --examples N   example functions shown per reason (default 3; 0: none)
  --table-only   print only the table and its legend
  -h, --help     this help

Environment (defaults in brackets):
  CALLTRACE   calltrace binary [$ROOT/calltrace]
  UFTRACE     uftrace binary [uftrace]
  PROGS       test programs of tests/build/progs
              [unpatchable-O2 unpatchable-O0 exceptions-O2 threads-O2 argstress-O2]
  CC, CXX     compilers for a test program not built yet [gcc, g++]
  KEEP_TMP=1  keep the scratch directory
EOF
}

EXAMPLES=3
TABLE_ONLY=0
while [ $# -gt 0 ]; do
    case $1 in
    --examples)
        [ $# -ge 2 ] || { usage >&2; exit 2; }
        EXAMPLES=$2
        shift
        ;;
    --examples=*) EXAMPLES=${1#*=} ;;
    --table-only) TABLE_ONLY=1 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
    shift
done
case $EXAMPLES in '' | *[!0-9]*) echo "coverage.sh: --examples takes a number" >&2; exit 2 ;; esac

CALLTRACE=${CALLTRACE:-$ROOT/calltrace}
UFTRACE=${UFTRACE:-uftrace}
PROGS=${PROGS:-unpatchable-O2 unpatchable-O0 exceptions-O2 threads-O2 argstress-O2}
PROGS_DIR=$ROOT/tests/build/progs
SRC_DIR=$ROOT/tests/progs

note() { printf '%s\n' "$*" >&2; }
have() { command -v "$1" >/dev/null 2>&1; }

for t in readelf objdump c++filt; do
    have "$t" || { note "coverage.sh: $t (binutils) is needed"; exit 2; }
done
[ -x "$CALLTRACE" ] || { note "coverage.sh: $CALLTRACE not built (run make)"; exit 2; }
HAVE_UF=0
if have "$UFTRACE"; then HAVE_UF=1; else note "coverage.sh: $UFTRACE not installed: its columns are N/A"; fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/calltrace-coverage.XXXXXX")
cleanup()
{
    if [ "${KEEP_TMP:-0}" = 1 ]; then
        note "coverage.sh: kept $TMP"
    else
        rm -rf "$TMP"
    fi
}
trap cleanup EXIT
cd "$TMP"

# The awk functions every analysis below shares (mawk: no 64-bit printf, so addresses are kept
# as hex strings without leading zeros, and added by hand).
AWKLIB='
function hexval(h,   i, n) {
    h = tolower(h); sub(/^0x/, "", h); n = 0
    for (i = 1; i <= length(h); i++) n = n * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
    return n
}
function hexstr(n,   s, d) {
    if (n < 1) return "0"
    s = ""
    while (n >= 1) { d = n % 16; s = substr("0123456789abcdef", d + 1, 1) s; n = (n - d) / 16 }
    return s
}
function base(p) { sub(/.*\//, "", p); return p }
function lastsep(s, sep,   i, j) { j = 0; while ((i = index(substr(s, j + 1), sep)) > 0) j += i; return j }
'

# syms FILE: "ADDR<TAB>SIZE<TAB>NAME" (NAME demangled as calltrace and c++filt print it) for the
# defined FUNC symbols with a size, of both symbol tables, one line per name and address.
syms()
{
    readelf -W -s "$1" 2>/dev/null | awk "$AWKLIB"'
        $4 == "FUNC" && $7 != "UND" && NF >= 8 {
            size = ($3 ~ /^0x/) ? hexval($3) : $3 + 0
            if (size <= 0) next
            name = $8; sub(/@.*/, "", name)
            key = hexstr(hexval($2)) "\t" name
            if (!(key in seen)) { seen[key] = 1; print hexstr(hexval($2)) "\t" size "\t" name }
        }' >"$TMP/syms.raw"
    cut -f3 "$TMP/syms.raw" | c++filt >"$TMP/syms.dem"
    cut -f1,2 "$TMP/syms.raw" | paste - "$TMP/syms.dem"
}

# load_base FILE: the virtual address of its first PT_LOAD (uftrace's .sym offsets are from it).
load_base() { readelf -W -l "$1" 2>/dev/null | awk '$1 == "LOAD" { print $3; exit }'; }

# parse_ct ERR NAMES...: calltrace's -v -v output, reduced to the image whose file name is one of
# NAMES: "funcs N", "traced N", "debug FILE", "fb REASON NAME", "skip REASON NAME",
# "ifunc REASON NAME", "note TEXT". The fallback and skip lines of an image come before its
# "(inject)" line; IFUNC lines after it.
parse_ct()
{
    local err=$1
    shift
    awk -v names="$*" "$AWKLIB"'
        BEGIN { n = split(names, t, " "); for (i = 1; i <= n; i++) want[t[i]] = 1 }
        !/^calltrace\[[a-z]*\]: / { next }
        {
            dom = $0; sub(/\].*/, "", dom); sub(/^calltrace\[/, "", dom)
            msg = $0; sub(/^calltrace\[[a-z]*\]: /, "", msg)
        }
        msg ~ /: on a breakpoint \(the ptrace engine.s\), not patched: / ||
        msg ~ /: left out \(attached: no breakpoint\), not patched: / {
            i = index(msg, ": on a breakpoint (the ptrace"); if (!i) i = index(msg, ": left out (attached")
            why = msg; sub(/.*, not patched: /, "", why)
            pend[++np] = "fb\t" why "\t" substr(msg, 1, i - 1)
            next
        }
        msg ~ /^IFUNC .*: on a breakpoint, not patched: / {
            name = msg; sub(/^IFUNC /, "", name); sub(/: on a breakpoint, not patched: .*/, "", name)
            why = msg; sub(/.*, not patched: /, "", why)
            if (last_target) print "ifunc\t" why "\t" name
            next
        }
        msg ~ /^skipping / {
            s = substr(msg, 10); j = lastsep(s, ": ")
            pend[++np] = "skip\t" substr(s, j + 2) "\t" substr(s, 1, j - 1)
            next
        }
        dom == "inject" && msg ~ /: [0-9]+ functions traced in process [0-9]+ \(inject\)$/ {
            path = msg; sub(/: [0-9]+ functions traced in process.*/, "", path)
            cnt = msg; sub(/ functions traced in process.*/, "", cnt); sub(/.*: /, "", cnt)
            last_target = 0
            if (want[base(path)] && !done) {
                done = last_target = 1
                print "traced\t" cnt
                for (i = 1; i <= np; i++) print pend[i]
            }
            np = 0
            next
        }
        dom == "symbols" && msg ~ /: [0-9]+ functions, / {
            path = msg; sub(/: [0-9]+ functions, .*/, "", path)
            cnt = msg; sub(/ functions, .*/, "", cnt); sub(/.*: /, "", cnt)
            if (want[base(path)] && cnt + 0 > funcs + 0) funcs = cnt
            next
        }
        dom == "symbols" && msg ~ /: debug file / {
            path = msg; sub(/: debug file .*/, "", path)
            f = msg; sub(/.*: debug file /, "", f)
            if (want[base(path)] && !gotdebug) { gotdebug = 1; print "debug\t" f }
            next
        }
        msg ~ /traced by the ptrace engine/ { print "note\t" msg }
        END { print "funcs\t" funcs + 0 }
    ' "$err"
}

# parse_uf LOG NAMES...: uftrace's dynamic-domain log: "type TYPE" (of the image named), "ok NAME",
# "fail REASON NAME", "skip NAME", "bad OFFSET" (a function found to be jumped into at
# OFFSET from the module start: reverted if already patched), "stat KEY N".
parse_uf()
{
    local log=$1
    shift
    awk -v names="$*" "$AWKLIB"'
        BEGIN { n = split(names, t, " "); for (i = 1; i <= n; i++) want[t[i]] = 1 }
        { sub(/^dynamic: /, "") }
        /^dynamic patch type: / {
            s = $0; sub(/^dynamic patch type: /, "", s)
            b = s; sub(/: [0-9]+ \(.*$/, "", b)
            ty = s; sub(/.*\(/, "", ty); sub(/\).*/, "", ty)
            if (want[b]) print "type\t" ty
            next
        }
        /^force patch normal func: / {
            s = $0; sub(/^force patch normal func: /, "", s); sub(/ \(patch size: [0-9]+\)$/, "", s)
            print "ok\t" s; why = ""; next
        }
        /^bad jump: / { s = $0; sub(/.* to /, "", s); print "bad\t" s; next }
        /^jump to middle of function: / { why = "out-jump"; next }
        /^jump to prologue: / { why = "jump-back"; next }
        /^prologue has relative jump/ { why = "reljmp"; next }
        /^prologue has \(relative\) call/ { why = "relcall"; next }
        /^prologue has PC-relative addressing/ { why = "pcrel"; next }
        /^ *>> FAIL: / { s = $0; sub(/^ *>> FAIL: /, "", s); print "fail\t" (why == "" ? "-" : why) "\t" s; why = ""; next }
        /^ *>> SKIP: / { s = $0; sub(/^ *>> SKIP: /, "", s); print "skip\t" s; why = ""; next }
        /^ *(total|patched|failed|skipped): +[0-9]+/ { k = $1; sub(/:$/, "", k); print "stat\t" k "\t" $2 }
    ' "$log"
}

# uf_syms DATADIR FILE: the functions uftrace considers in FILE, from its DATADIR/BASENAME.sym:
# "ADDR<TAB>SIMPLE-NAME", by address (SIMPLE-NAME: demangled without parameters, templates
# nor clone suffixes, as uftrace's default --demangle=simple prints them).
uf_syms()
{
    local sym b
    sym=$1/$(basename "$2").sym
    [ -f "$sym" ] || return 0
    b=$(load_base "$2")
    awk -v b="${b:-0}" "$AWKLIB"'
        $2 ~ /^[TtWw]$/ && $3 !~ /^(_start|__libc_csu_init|__libc_csu_fini)$/ {
            print hexstr(hexval($1) + hexval(b)) "\t" $3
        }' "$sym" >"$TMP/ufsyms.raw"
    cut -f2 "$TMP/ufsyms.raw" | c++filt | sed -E 's/ \[clone [^]]*\]//g; :a; s/<[^<>]*>//; ta; s/\(.*//' \
        >"$TMP/ufsyms.dem"
    cut -f1 "$TMP/ufsyms.raw" | paste - "$TMP/ufsyms.dem"
}

# Reason tags: calltrace's fallback reasons and uftrace's failure reasons, with their meaning.
ct_tag()
{
    case $1 in
    "too short for a jump, and no padding after it" | "too short for a jump") echo short ;;
    "too short for a jump, and no padding in reach for a hop") echo no-hop ;;
    "one byte long, too short for a jump") echo one-byte ;;
    "its jump would cross a page boundary (calltrace killed while writing it could leave half of it)") echo page-cross ;;
    "a branch lands inside the bytes the jump would cover") echo branch-in ;;
    "a branch among the instructions the jump would cover") echo branch-among ;;
    "its body jumps back to its first instruction") echo loop-entry ;;
    "a thread may resume in the middle of the bytes the jump would cover") echo resume ;;
    "the extent of its implementation is not known") echo ifunc-extent ;;
    "C runtime code, or the cold part of a function") echo crt/cold ;;
    *) printf '%s\n' "$1" | tr ' ' '-' ;;
    esac
}
declare -A LEGEND=(
    [short]="calltrace: too short for a jump, and no padding after it (or the jump would cover more than the function)"
    [no-hop]="calltrace: too short for a jump (or a branch after its first two bytes), and no padding within a rel8 jump for a hop"
    [one-byte]="calltrace: one byte long, with no padding after it: not even a 2-byte jump fits"
    [page-cross]="calltrace: its jump would cross a page boundary (a SIGKILL of calltrace between two pages could leave half of it)"
    [branch-in]="calltrace: a branch lands inside the bytes the jump would cover"
    [branch-among]="calltrace: a branch among the instructions the jump would cover (not the last one)"
    [loop-entry]="calltrace: its body jumps back to its first instruction"
    [resume]="calltrace: a thread may resume in the middle of the bytes the jump would cover"
    [ifunc-extent]="calltrace: an IFUNC implementation whose extent is not known (IFUNC lines, not among the functions counted)"
    [crt/cold]="calltrace skipped: C runtime code, or the cold part of a function"
    [out-jump]="uftrace: a jump after the patched bytes leaves the function for an address no symbol starts at (\"jump to middle of function\": a .cold part, a static function a stripped file has no symbol for, another function's middle)"
    [jump-back]="uftrace: a jump lands inside the patched bytes (\"jump to prologue\")"
    [reljmp]="uftrace: a jump in the patched bytes it cannot relocate (\"prologue has relative jump\")"
    [relcall]="uftrace: a call in the patched bytes it cannot relocate (\"prologue has (relative) call\")"
    [pcrel]="uftrace: a rip-relative operand in the patched bytes other than lea or mov to a register (\"prologue has PC-relative addressing\")"
    [badsym]="uftrace: another function jumps into its middle (a \"bad jump\" seen earlier; no message of its own)"
    [-]="uftrace: failed with no message"
    [size]="uftrace skipped: shorter than 6 bytes (no message), or every function of a module it takes for a -pg/-mfentry build"
    [SKIP]="uftrace skipped with \">> SKIP\": a .cold name, or endbr64 and less than 6 bytes more"
)

ROWS=()
NOTES=()
CROSS=()
EXAMPLE_TEXT=()

# disasm FILE ADDR SIZE: its first instructions (up to 4), on one line.
disasm()
{
    local stop
    stop=$(awk -v a="$2" -v s="$3" "$AWKLIB"'BEGIN { n = s < 64 ? s : 64; print "0x" hexstr(hexval(a) + n) }')
    objdump -d -M intel --no-show-raw-insn --start-address="0x$2" --stop-address="$stop" "$1" 2>/dev/null |
        awk -F'\t' '/^ *[0-9a-f]+:\t/ { sub(/ *#.*/, "", $2); gsub(/  +/, " ", $2); if (n < 4) s = s (n++ ? "; " : "") $2 }
            END { print s }'
}

# measure LABEL IMAGE LIBGLOB UFPATTERN -- CMD...: one row.
measure()
{
    local label=$1 image=$2 glob=$3 pat=$4
    shift 5
    local d=$TMP/$label
    mkdir -p "$d"
    if [ ! -e "$image" ]; then
        ROWS+=("| $label | N/A | N/A | N/A | N/A | N/A ($image not found) |")
        return
    fi
    local real names
    real=$(readlink -f "$image")
    names="$(basename "$image") $(basename "$real")"

    # calltrace
    local ctargs=(-v -v -o "$d/ct")
    [ -z "$glob" ] || ctargs+=(-l "$glob")
    local ct_ok=1
    if ! "$CALLTRACE" "${ctargs[@]}" -- "$@" >"$d/ct.out" 2>"$d/ct.err" </dev/null; then
        ct_ok=0
        note "coverage.sh: $label: calltrace failed: $(tail -3 "$d/ct.err")"
    fi
    # shellcheck disable=SC2086
    parse_ct "$d/ct.err" $names >"$d/ct.tsv"
    local symsrc=$real dbg
    dbg=$(awk -F'\t' '$1 == "debug" { print $2 }' "$d/ct.tsv")
    [ -z "$dbg" ] || [ ! -f "$dbg" ] || symsrc=$dbg
    syms "$symsrc" >"$d/ctsyms.tsv"

    # uftrace
    local uf_ok=0
    : >"$d/uf.tsv"
    : >"$d/ufsyms.tsv"
    if [ "$HAVE_UF" = 1 ]; then
        uf_ok=1
        if ! "$UFTRACE" record --no-libcall -P "$pat" -d "$d/uf.data" -v --debug-domain=dynamic:4 \
            --logfile="$d/uf.log" -- "$@" >"$d/uf.out" 2>"$d/uf.err" </dev/null; then
            uf_ok=0
            note "coverage.sh: $label: uftrace failed: $(tail -3 "$d/uf.err" "$d/uf.log" 2>/dev/null)"
        fi
        # shellcheck disable=SC2086
        [ ! -f "$d/uf.log" ] || parse_uf "$d/uf.log" $names >"$d/uf.tsv"
        uf_syms "$d/uf.data" "$real" >"$d/ufsyms.tsv"
    fi

    # Both, by address. Output: "sum KEY VALUE", "ex SIDE TAG ADDR SIZE NAME" (up to EX per tag),
    # "cross KIND TAG ADDR SIZE NAME".
    awk -F'\t' -v ex="$EXAMPLES" -v lbase="$(load_base "$real")" "$AWKLIB"'
        FNR == 1 { for (part = 1; part < 4 && FILENAME != ARGV[part]; part++); }
        part == 1 { # ctsyms: ADDR SIZE NAME
            if (!($1 in csize)) { csize[$1] = $2; cname[$1] = $3; nct++ }
            byname[$3] = byname[$3] " " $1 # split() drops the leading blank
            next
        }
        part == 2 { # ufsyms: ADDR SIMPLE (by address)
            if ($1 in uin) next
            uin[$1] = 1; ua[++nu] = $1; uav[nu] = hexval($1); uname[$1] = $2
            qa[$2, ++qn[$2]] = $1
            next
        }
        part == 3 { # ct.tsv
            if ($1 == "funcs" || $1 == "traced") s[$1] = $2
            else if ($1 == "fb" || $1 == "skip" || $1 == "ifunc") {
                k = $1 == "skip" ? "skip" : "fb"
                nwhy[k, $2]++; n[k]++
                if (!((k, $2) in seenwhy)) { seenwhy[k, $2] = 1; whys[k] = whys[k] (whys[k] == "" ? "" : "\034") $2 }
                if ($1 == "ifunc") { n["ifunc"]++; next }
                m = split(($3 in byname) ? byname[$3] : "", as, " ")
                if (m == 0) unresolved++
                if (m > 1) ambiguous++
                for (i = 1; i <= m; i++) { cstat[as[i]] = k; cwhy[as[i]] = $2 }
            } else if ($1 == "note") print "sum\tnote\t" $2
            next
        }
        part == 4 { # uf.tsv
            if ($1 == "type") utype = $2
            else if ($1 == "stat") ustat[$2] = $3
            else if ($1 == "bad") badat(hexval($2) + hexval(lbase))
            else if ($1 == "ok" || $1 == "fail" || $1 == "skip") {
                nm = $2
                if ($1 == "fail") nm = $3
                a = pop(nm)
                if (a == "") unmatched++
                if ($1 == "ok") {
                    nok++
                    if (a != "") ustat_[a] = "ok"
                } else if ($1 == "fail") {
                    w = $2
                    if (w == "-" && a != "" && (a in bad)) w = "badsym"
                    nfail++; nuw[w]++
                    if (a != "") { ustat_[a] = "fail"; uwhy[a] = w }
                } else {
                    nskip++
                    if (a != "") { ustat_[a] = "skip"; uwhy[a] = "SKIP" }
                }
            }
            next
        }
        function pop(name) { # the next function of uftrace named name, by address
            if (qi[name] >= qn[name]) return ""
            return qa[name, ++qi[name]]
        }
        function badat(v,   lo, hi, mid) { # the function of uftrace at or before v
            lo = 1; hi = nu
            if (nu == 0 || v < uav[1]) return
            while (lo < hi) { mid = int((lo + hi + 1) / 2); if (uav[mid] <= v) lo = mid; else hi = mid - 1 }
            bad[ua[lo]] = 1
            if (ustat_[ua[lo]] == "ok") { ustat_[ua[lo]] = "reverted"; uwhy[ua[lo]] = "reverted"; nrev++ }
        }
        function emit(side, tag, a) {
            if (tag == "") tag = "-"
            if (cnt[side, tag]++ < ex)
                print "ex\t" side "\t" tag "\t" a "\t" (a in csize ? csize[a] : 16) "\t" (a in cname ? cname[a] : uname[a])
        }
        END {
            print "sum\tct_funcs\t" (s["funcs"] == "" ? nct : s["funcs"])
            print "sum\tct_symtab\t" nct
            print "sum\tct_traced\t" s["traced"] + 0
            print "sum\tct_fb\t" n["fb"] + 0
            print "sum\tct_ifunc\t" n["ifunc"] + 0
            print "sum\tct_skip\t" n["skip"] + 0
            print "sum\tct_in\t" s["traced"] - (n["fb"] - n["ifunc"])
            for (k in whys) {
                m = split(whys[k], wl, "\034"); r = ""
                for (i = 1; i <= m; i++) r = r (i > 1 ? "\034" : "") wl[i] "\035" nwhy[k, wl[i]]
                print "sum\tct_" k "_why\t" r
            }
            print "sum\tct_unresolved\t" unresolved + 0
            print "sum\tct_ambiguous\t" ambiguous + 0
            # uftrace: functions without an outcome line were skipped silently
            for (i = 1; i <= nu; i++) if (!(ua[i] in ustat_)) { ustat_[ua[i]] = "skip"; uwhy[ua[i]] = "size"; nsilent++ }
            print "sum\tuf_type\t" utype
            print "sum\tuf_total\t" (ustat["total"] != "" ? ustat["total"] : nu)
            print "sum\tuf_syms\t" nu
            print "sum\tuf_ok\t" nok + 0
            print "sum\tuf_reverted\t" nrev + 0
            print "sum\tuf_fail\t" nfail + 0
            print "sum\tuf_skip\t" nskip + nsilent
            print "sum\tuf_stat_patched\t" ustat["patched"]
            print "sum\tuf_stat_failed\t" ustat["failed"]
            print "sum\tuf_stat_skipped\t" ustat["skipped"]
            print "sum\tuf_unmatched\t" unmatched + 0
            r = ""
            for (w in nuw) r = r (r == "" ? "" : "\034") w "\035" nuw[w]
            print "sum\tuf_fail_why\t" r
            # by address, over the functions both count
            both = inb = 0
            for (i = 1; i <= nu; i++) {
                a = ua[i]
                if (!(a in csize)) continue
                both++
                if (!(a in cstat)) inb++
                if (ustat_[a] == "ok" && (a in cstat)) { print "cross\tuf-only\t" cwhy[a] "\t" a "\t" csize[a] "\t" cname[a]; emit("ufonly", cwhy[a], a) }
                if (ustat_[a] != "ok" && !(a in cstat)) { print "cross\tct-only\t" uwhy[a] "\t" a "\t" csize[a] "\t" cname[a]; emit("uf", uwhy[a], a) }
            }
            print "sum\tboth\t" both
            print "sum\tct_in_of_both\t" inb
            for (a in cstat) if (cstat[a] == "fb") emit("ct", cwhy[a], a)
        }
    ' "$d/ctsyms.tsv" "$d/ufsyms.tsv" "$d/ct.tsv" "$d/uf.tsv" >"$d/result.tsv"

    local -A S=()
    local k v
    while IFS=$'\t' read -r k v; do S[$k]=$v; done < <(awk -F'\t' '$1 == "sum" { print $2 "\t" $3 }' "$d/result.tsv")

    # the cells
    local funcs ct_in ct_fb uf_p uf_f why tag c
    local ctf=${S[ct_funcs]} ifn=${S[ct_ifunc]}
    funcs=$ctf
    [ "$ifn" = 0 ] || funcs+=" +$ifn IFUNC"
    if [ "$ct_ok" = 0 ] && [ "${S[ct_traced]}" = 0 ]; then
        ct_in=FAIL ct_fb=FAIL
    else
        ct_in="${S[ct_in]} ($(pct "${S[ct_in]}" "$((ctf + ifn))"))"
        [ "${S[ct_skip]}" = 0 ] || ct_in+="; ${S[ct_skip]} skipped ($(whys "${S[ct_skip_why]:-}"))"
        ct_fb=${S[ct_fb]}
        [ "${S[ct_fb]}" = 0 ] || ct_fb+=" ($(whys "${S[ct_fb_why]:-}"))"
    fi
    if [ "$HAVE_UF" = 0 ]; then
        funcs+=" / N/A" uf_p=N/A uf_f=N/A
    elif [ "$uf_ok" = 0 ] && [ ! -s "$d/uf.tsv" ]; then
        funcs+=" / ${S[uf_total]}" uf_p=FAIL uf_f=FAIL
    else
        funcs+=" / ${S[uf_total]}"
        local okn=$((S[uf_ok] - S[uf_reverted]))
        uf_p="$okn ($(pct "$okn" "${S[uf_total]}"))"
        [ "${S[uf_reverted]}" = 0 ] || uf_p+="; +${S[uf_reverted]} reverted (uftrace counts them patched)"
        [ "${S[uf_type]}" = none ] || [ -z "${S[uf_type]}" ] ||
            uf_p+="; module taken for a ${S[uf_type]} build: no patching"
        uf_f="${S[uf_fail]}"
        [ "${S[uf_fail]}" = 0 ] || uf_f+=" ($(whys "${S[uf_fail_why]}" uf))"
        uf_f+=" / ${S[uf_skip]}"
        [ -z "${S[uf_stat_patched]}" ] ||
            [ "${S[uf_stat_patched]}/${S[uf_stat_failed]}/${S[uf_stat_skipped]}" = \
                "${S[uf_ok]}/${S[uf_fail]}/${S[uf_skip]}" ] ||
            NOTES+=("$label: uftrace's own stats (patched/failed/skipped ${S[uf_stat_patched]}/${S[uf_stat_failed]}/${S[uf_stat_skipped]}) differ from its log's lines (${S[uf_ok]}/${S[uf_fail]}/${S[uf_skip]})")
        [ -n "${S[uf_stat_patched]}" ] || [ "${S[uf_total]}" = 0 ] ||
            NOTES+=("$label: uftrace printed no patch stats (it does only when some function failed); counts from its log and ${S[uf_total]} functions in its $(basename "$real").sym")
        [ "${S[uf_unmatched]}" = 0 ] ||
            NOTES+=("$label: ${S[uf_unmatched]} uftrace log names not found in its symbol list (left out of the by-address comparison)")
        CROSS+=("| $label | ${S[ct_in_of_both]} of ${S[both]} | $(cross_cell "$d" uf-only) | $(cross_cell "$d" ct-only) |")
    fi
    local src=".dynsym"
    readelf -S -W "$symsrc" 2>/dev/null | grep -q ' \.symtab ' && src=.symtab
    [ "$symsrc" = "$real" ] || src="$src of $symsrc"
    NOTES+=("$label: calltrace reads $src ($ctf functions$([ "${S[ct_symtab]}" = "$ctf" ] || echo ", ${S[ct_symtab]} FUNC addresses with a size there"))$([ "$HAVE_UF" = 0 ] || echo "; uftrace ${S[uf_syms]} functions of $(basename "$real")'s own symbols")")
    [ "${S[ct_unresolved]}" = 0 ] || NOTES+=("$label: ${S[ct_unresolved]} calltrace names not found in $symsrc")
    [ "${S[ct_ambiguous]}" = 0 ] || NOTES+=("$label: ${S[ct_ambiguous]} calltrace names at several addresses (all marked)")
    [ -z "${S[note]:-}" ] || NOTES+=("$label: ${S[note]}")
    [ "$ct_ok" = 1 ] || NOTES+=("$label: calltrace exited non-zero: see $d/ct.err")
    ROWS+=("| $label | $funcs | $ct_in | $ct_fb | $uf_p | $uf_f |")

    # examples
    [ "$EXAMPLES" -gt 0 ] && [ "$TABLE_ONLY" = 0 ] || return 0
    local side addr size name lasthead=
    EXAMPLE_TEXT+=("### $label")
    while IFS=$'\t' read -r _ side why addr size name; do
        [ -n "$why" ] || why=-
        tag=$(ct_tag "$why")
        case $side in
        ct) c="calltrace fallback, $tag" ;;
        uf) c="uftrace $tag (calltrace patches them)" ;;
        ufonly) c="uftrace patches, calltrace $tag" ;;
        esac
        if [ "$c" != "$lasthead" ]; then EXAMPLE_TEXT+=("  $c:"); lasthead=$c; fi
        EXAMPLE_TEXT+=("    $name ($size bytes): $(disasm "$real" "$addr" "${size:-16}")")
    done < <(awk -F'\t' '$1 == "ex"' "$d/result.tsv" | sort -t$'\t' -k2,2 -k3,3 -k4,4)
}

pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f%%", 100 * a / b; else printf "-" }'; }

# whys "REASON\035N\034..." [uf]: "tag N, tag N" by count.
whys()
{
    local r=$1 side=${2:-ct} reason n tag out=()
    [ -n "$r" ] || return 0
    while IFS=$'\035' read -r reason n; do
        [ -n "$reason" ] || continue
        if [ "$side" = uf ]; then tag=$reason; else tag=$(ct_tag "$reason"); fi
        out+=("$n $tag")
    done < <(printf '%s\n' "$r" | tr '\034' '\n')
    printf '%s\n' "${out[@]}" | sort -rn | awk '{ n = $1; $1 = ""; sub(/^ /, ""); s = s (NR > 1 ? ", " : "") $0 " " n } END { print s }'
}

# cross_cell DIR KIND: "N (tag n, ...): name, name" for the by-address differences.
cross_cell()
{
    awk -F'\t' -v k="$2" '$1 == "cross" && $2 == k { n++; c[$3]++; if (n <= 3) names = names (n > 1 ? ", " : "") $6 }
        END {
            if (!n) { print 0; exit }
            for (t in c) tags[++m] = t
            for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (c[tags[j]] > c[tags[i]]) { x = tags[i]; tags[i] = tags[j]; tags[j] = x }
            for (i = 1; i <= m; i++) r = r (i > 1 ? ", " : "") tags[i] " " c[tags[i]]
            print n " (" r "; e.g. " names (n > 3 ? ", ..." : "") ")"
        }' \
        "$1/result.tsv" | while IFS= read -r line; do
        # the full reasons of calltrace read as tags
        local t
        for t in "too short for a jump, and no padding after it:short" \
            "a branch lands inside the bytes the jump would cover:branch-in" \
            "a branch among the instructions the jump would cover:branch-among" \
            "its body jumps back to its first instruction:loop-entry" \
            "C runtime code, or the cold part of a function:crt/cold"; do
            line=${line//"${t%:*}"/"${t##*:}"}
        done
        printf '%s\n' "$line"
    done
}

# The SQL for sqlite3: enough to run the parser, the VDBE, an index and some functions.
cat >"$TMP/q.sql" <<'SQL'
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);
WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 500)
INSERT INTO t SELECT x, printf('%08x', x * 2654435761 % 4294967296), x / 7.0 FROM n;
CREATE INDEX tb ON t(b);
SELECT count(*), sum(a), round(avg(c), 3), max(length(b)) FROM t WHERE b LIKE '%a%';
SELECT b FROM t ORDER BY b DESC LIMIT 3;
UPDATE t SET c = c * 2 WHERE a % 3 = 0;
DELETE FROM t WHERE a > 400;
SELECT group_concat(a) FROM (SELECT a FROM t WHERE a < 10);
SQL

soname() { readelf -d "$1" 2>/dev/null | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p'; }

note "coverage.sh: python3"
measure python3 /usr/bin/python3 "" . -- /usr/bin/python3 -c pass

note "coverage.sh: libc"
LIBC=/lib/x86_64-linux-gnu/libc.so.6
measure libc.so.6 "$LIBC" 'libc.so*' ".@$(soname "$LIBC")" -- /bin/true

note "coverage.sh: libsqlite3"
SQLITE_LIB=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0
if [ -x /usr/bin/sqlite3 ] && [ -e "$SQLITE_LIB" ]; then
    measure libsqlite3 "$SQLITE_LIB" 'libsqlite3.so*' ".@$(soname "$SQLITE_LIB")" -- \
        /usr/bin/sqlite3 :memory: ".read $TMP/q.sql"
else
    ROWS+=("| libsqlite3 | N/A | N/A | N/A | N/A | N/A (apt-get install sqlite3 libsqlite3-0) |")
fi

# prog NAME-OPT: tests/build/progs/NAME-OPT, or built here as tests/lib/testlib.sh builds it.
prog()
{
    local p=$1 name=${1%-O*} opt=${1##*-} src cc
    if [ -x "$PROGS_DIR/$p" ]; then
        echo "$PROGS_DIR/$p"
        return 0
    fi
    if [ -f "$SRC_DIR/$name.c" ]; then src=$SRC_DIR/$name.c cc=${CC:-gcc}
    elif [ -f "$SRC_DIR/$name.cc" ]; then src=$SRC_DIR/$name.cc cc=${CXX:-g++}
    else return 1; fi
    mkdir -p "$TMP/progs"
    "$cc" -g "-$opt" -pthread -Wall -o "$TMP/progs/$p" "$src" >"$TMP/progs/$p.log" 2>&1 || return 1
    echo "$TMP/progs/$p"
}

for p in $PROGS; do
    note "coverage.sh: $p"
    if bin=$(prog "$p"); then
        measure "$p" "$bin" "" . -- "$bin"
    else
        ROWS+=("| $p | N/A | N/A | N/A | N/A | N/A (cannot build it) |")
    fi
done

echo "| binary | functions (calltrace / uftrace) | calltrace in-process | calltrace fallback (reasons) | uftrace -P patched | uftrace failed (reasons) / skipped |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
echo
echo "functions: calltrace's count of the image's FUNC symbols with a size, one per address (-v -v"
echo "\"N functions\"), + IFUNC implementations it could not place; uftrace's total (FUNC symbols of"
echo "its own symbol table, one per address, less _start and __libc_csu_*). Percentages are of each"
echo "tool's own count. Tags:"
ALL_CELLS="${ROWS[*]} ${CROSS[*]}"
for t in short no-hop one-byte page-cross branch-in branch-among loop-entry resume ifunc-extent crt/cold out-jump jump-back \
    reljmp relcall pcrel badsym - size SKIP; do
    [[ $ALL_CELLS == *"$t "[0-9]* ]] || continue
    printf '  %-13s %s\n' "$t" "${LEGEND[$t]}"
done
[ "$TABLE_ONLY" = 0 ] || exit 0

if [ "${#CROSS[@]}" -gt 0 ]; then
    echo
    echo "By address, over the functions both count:"
    echo
    echo "| binary | calltrace in-process | uftrace patches, calltrace does not | calltrace patches, uftrace does not |"
    echo "|---|---|---|---|"
    printf '%s\n' "${CROSS[@]}"
fi
echo
echo "Notes:"
printf '  %s\n' "${NOTES[@]}"
if [ "${#EXAMPLE_TEXT[@]}" -gt 0 ]; then
    echo
    echo "Examples (size from the symbol table; first instructions, objdump -M intel):"
    printf '%s\n' "${EXAMPLE_TEXT[@]}"
fi
