#!/bin/bash
# -l on a real program: Debian's /usr/bin/sqlite3 (stripped, -z now) with libsqlite3. The call
# counts of libsqlite3's API functions equal an independent count: an LD_PRELOAD shim of our own
# (tests/progs/count_shim.c) that wraps them.
#
# The shim sees only calls that reach the function through a PLT or GOT from outside it, while
# calltrace sees every call. They agree exactly for functions that nobody calls directly: the
# sqlite3 program reaches every libsqlite3 function through its PLT/GOT (it cannot do otherwise),
# and libsqlite3 itself calls its exported API through its own PLT (it is built with semantic
# interposition), which the shim, first in the lookup order, also interposes. That is checked
# first, on the library's disassembly: any direct call or jump to one of these functions would
# make the comparison meaningless, and the test says so instead of passing.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

SQLITE=/usr/bin/sqlite3
[ -x $SQLITE ] || fail "$SQLITE missing: run scripts/install-deps.sh --test (package sqlite3)"
LIBSQLITE=$(ldd $SQLITE | awk '$1 ~ /^libsqlite3/ { print $3 }')
[ -f "$LIBSQLITE" ] || fail "sqlite3 is not linked with libsqlite3: $(ldd $SQLITE)"
build_shared count_shim O2 shim/count_shim.so -ldl
SHIM=$LIB

FUNCS=(sqlite3_prepare_v2 sqlite3_step sqlite3_finalize sqlite3_reset sqlite3_column_text
    sqlite3_column_count sqlite3_column_int sqlite3_column_type sqlite3_bind_int sqlite3_errmsg)

objdump -d --no-show-raw-insn "$LIBSQLITE" >"$T/lib.dis" || fail "objdump failed on $LIBSQLITE"
# the pattern does find direct calls (of internal functions), so its silence below means something
grep -qE "call +[0-9a-f]+ <sqlite3[A-Za-z]+(@@[A-Za-z0-9_.]+)?>" "$T/lib.dis" ||
    fail "no direct call found in $LIBSQLITE's disassembly: is objdump's format understood?"
for f in "${FUNCS[@]}"; do
    if grep -qE "(call|jmp)[a-z]* +[0-9a-f]+ <$f(@@[A-Za-z0-9_.]+)?>" "$T/lib.dis"; then
        fail "$LIBSQLITE calls $f directly, bypassing its PLT: the shim cannot count those calls"
    fi
done

cat >"$T/work.sql" <<'SQL'
create table t(a integer, b text);
with recursive c(x) as (select 1 union all select x + 1 from c where x < 300)
  insert into t select x, 'row' || x from c;
select count(*), sum(a) from t;
select a, b from t where a % 50 = 0;
create index tb on t(b);
select b from t where b like 'row1%' order by a limit 5;
update t set a = a * 2 where a < 10;
select * from t where a < 20;
select no_such_column from t;
.parameter set @n 42
select @n + count(*) from t;
delete from t where a > 250;
select count(*) from t;
SQL

filters=()
for f in "${FUNCS[@]}"; do filters+=(-F "$f"); done
RUN_STDIN=$T/work.sql
CTX="[sqlite3, untraced]"
plain_run env LD_PRELOAD="$SHIM" CT_SHIM_OUT="$T/plain.counts" CT_SHIM_PREFIX=sqlite3_ $SQLITE :memory:
CTX="[sqlite3 -l 'libsqlite3*']"
ct_run -l 'libsqlite3*' "${filters[@]}" -- \
    env LD_PRELOAD="$SHIM" CT_SHIM_OUT="$T/traced.counts" CT_SHIM_PREFIX=sqlite3_ $SQLITE :memory:
expect_trace
inject_engaged
same_rc
same_stdout
[ "$(grep -c '^process' "$T/traced.counts")" = 1 ] || fail "expected one process: $(cat "$T/traced.counts")"
chk check-nesting
chk check-counts -f "$T/traced.counts"
# the shim's counts are the program's own: the same with and without calltrace
diff <(grep '^count' "$T/plain.counts") <(grep '^count' "$T/traced.counts") >/dev/null ||
    fail "the shim counted differently under calltrace: $(paste "$T/plain.counts" "$T/traced.counts")"
awk '$1 == "count" && $3 > 0 { n++ } END { exit n >= 6 ? 0 : 1 }' "$T/traced.counts" ||
    fail "too few of the functions were called to compare: $(cat "$T/traced.counts")"
ct_raw report -f csv "$CT_DIR"
grep -q "^\"sqlite3_step\",\"$LIBSQLITE\"," "$CT_OUT" ||
    grep -q '^"sqlite3_step",".*libsqlite3' "$CT_OUT" || fail "sqlite3_step not reported in libsqlite3: $(cat "$CT_OUT")"
note "$(grep '^count' "$T/traced.counts" | tr '\n' ' ')"
