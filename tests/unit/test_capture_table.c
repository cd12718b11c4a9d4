/* The inject engine's capture tables (tracer/inject/capture_table.c): a plan encoded, the ring data a
 * trampoline would write under it (modelled here in C, slot by slot as the assembly writes
 * it), decoded: the REC_ARGS / REC_RETVAL bytes equal those values_record.c builds reading the
 * same memory directly, as the ptrace engine does; cut caps and damaged data are handled. */
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/inject_tramp.h"
#include "tracer/inject/capture_table.h"
#include "unit.h"

/* A fake address space: [BASE, BASE + sizeof mem) is readable, nothing else. */
#define BASE 0x10000u
static uint8_t mem[256];

static ssize_t read_fake(uint64_t addr, void *buf, size_t len)
{
    if (addr < BASE || addr >= BASE + sizeof(mem))
        return -14; /* -EFAULT */
    size_t room = BASE + sizeof(mem) - addr;
    size_t n = len < room ? len : room;
    memcpy(buf, mem + (addr - BASE), n);
    return (ssize_t)n;
}

static ssize_t read_direct(void *ctx, int which, uint64_t addr, void *buf, size_t len)
{
    (void)ctx, (void)which;
    ssize_t n = read_fake(addr, buf, len);
    return n < 0 ? -1 : n;
}

static uint32_t u32_at(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint64_t u64_at(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* The model of the trampoline's reads: what .Lop_reserve and .Lcapture_reads do. */
static uint64_t count_of(const uint8_t *op, const uint64_t *regs, const uint8_t *stack,
                         uint32_t stack_bytes, uint8_t src, uint32_t off)
{
    uint64_t v = 0;
    if (src == CT_SRC_CONST)
        return u64_at(op + OP_COUNT_CONST);
    if (src == CT_SRC_GPR)
        v = regs[off / 8];
    else if (src == CT_SRC_STACK && stack && off + 8 <= stack_bytes)
        v = u64_at(stack + off);
    uint8_t shift = op[OP_SHIFT];
    return shift ? (v << shift) >> shift : v;
}

static uint64_t reserve_of(const uint8_t *op, const uint64_t *regs)
{
    uint64_t cap = u32_at(op + OP_CAP);
    uint8_t src = op[OP_COUNT_SRC];
    if (src == CT_SRC_CONST || src == CT_SRC_GPR) {
        uint64_t c = count_of(op, regs, NULL, 0, src, u32_at(op + OP_COUNT_OFF));
        if (c < cap)
            cap = c;
    }
    return (cap + 7) & ~7ull;
}

static uint8_t *put_slot(uint8_t *at, uint64_t ptr, uint64_t len, uint64_t bytes)
{
    int64_t got = ptr ? read_fake(ptr, at + 16, len) : 0;
    memcpy(at, &got, 8);
    memcpy(at + 8, &bytes, 8);
    return at + 16 + bytes;
}

static uint8_t *put_reads(uint8_t *at, const uint8_t *op, size_t n, const uint64_t *regs,
                          const uint8_t *stack, uint32_t stack_bytes)
{
    for (size_t i = 0; i < n; i++, op += CT_OP_SIZE) {
        uint64_t ptr = 0, off = u32_at(op + OP_PTR_OFF);
        if (op[OP_PTR_SRC] == CT_SRC_GPR)
            ptr = regs[off / 8];
        else if (op[OP_PTR_SRC] == CT_SRC_STACK && stack && off + 8 <= stack_bytes)
            ptr = u64_at(stack + off);
        uint64_t bytes = reserve_of(op, regs), len = bytes;
        if (op[OP_COUNT_SRC] == CT_SRC_STACK) {
            uint64_t c =
                count_of(op, regs, stack, stack_bytes, CT_SRC_STACK, u32_at(op + OP_COUNT_OFF));
            len = c < bytes ? c : bytes;
        } else if (op[OP_COUNT_SRC] != CT_SRC_NONE) {
            uint64_t c = count_of(op, regs, NULL, 0, op[OP_COUNT_SRC], u32_at(op + OP_COUNT_OFF));
            len = c < bytes ? c : bytes;
        }
        at = put_slot(at, ptr, len, bytes);
    }
    return at;
}

static size_t finish(uint8_t *data, uint8_t *end)
{
    size_t len = (size_t)(end - data);
    len = (len + 31) & ~(size_t)31;
    memcpy(data, &len, 8);
    return len;
}

static size_t model_entry(const uint8_t *table, const uint64_t *gprs, const uint8_t *xmm,
                          uint64_t rsp, uint8_t *data)
{
    memset(data, 0, INJECT_RECORD_MAX);
    uint8_t *at = data + 8;
    memcpy(at, gprs, 48);
    at += 48;
    if (table[CT_ENTRY_XMM]) {
        memcpy(at, xmm, 128);
        at += 128;
    }
    uint32_t stack_bytes = u32_at(table + CT_STACK_BYTES);
    const uint8_t *stack = NULL;
    if (stack_bytes) {
        stack = at + 16;
        at = put_slot(at, rsp + 8, stack_bytes, (stack_bytes + 7) & ~7u);
    }
    uint16_t nreads;
    memcpy(&nreads, table + CT_NREADS, 2);
    at = put_reads(at, table + CT_HEAD, nreads, gprs, stack, stack_bytes);
    return finish(data, at);
}

static size_t model_exit(const uint8_t *table, const uint64_t *gprs, uint8_t *data)
{
    memset(data, 0, INJECT_RECORD_MAX);
    uint8_t *at = data + 8;
    memcpy(at, gprs, 16);
    at += 16;
    uint32_t hidden = u32_at(table + CT_HIDDEN_SIZE);
    if (hidden)
        at = put_slot(at, gprs[0], hidden, (hidden + 7) & ~7u);
    uint16_t nreads, nresult;
    memcpy(&nreads, table + CT_NREADS, 2);
    memcpy(&nresult, table + CT_NRESULT_READS, 2);
    at = put_reads(at, table + CT_HEAD + nreads * CT_OP_SIZE, nresult, gprs, NULL, 0);
    return finish(data, at);
}

static struct values_buf want, got;
static uint8_t table[4096], data[INJECT_RECORD_MAX];

static bool same_record(void)
{
    return want.used == got.used && memcmp(want.u.bytes, got.u.bytes, want.used) == 0;
}

/* The flags of the n-th chunk of b (0-based). */
static const struct rec_chunk *chunk(const struct values_buf *b, int n)
{
    size_t at = sizeof(struct rec_values);
    for (int i = 0;; i++) {
        const struct rec_chunk *c = (const struct rec_chunk *)(b->u.bytes + at);
        if (i == n)
            return c;
        at += sizeof(*c) + ((c->len + 7) & ~7u);
    }
}

int main(void)
{
    memset(mem, 'x', sizeof(mem));
    memcpy(mem, "hello", 6);                 /* BASE: a string */
    memcpy(mem + 16, "\1\2\3\4\5\6", 6);     /* BASE+16: a buffer */
    memcpy(mem + sizeof(mem) - 3, "end", 3); /* a string running into the end */
    uint64_t ptr_on_stack = BASE, len_on_stack = 5;
    memcpy(mem + 64, &ptr_on_stack, 8); /* the stack arguments, at BASE + 64 + 8 */
    memcpy(mem + 72, &ptr_on_stack, 8);
    memcpy(mem + 80, &len_on_stack, 8);

    struct capture_read reads[] = {
        {0, READ_STRING, {SRC_GPR, 0, 8, 0}, 0, {0}},                     /* rdi: "hello" */
        {1, READ_COUNTED, {SRC_GPR, 1, 8, 0}, 0, {SRC_GPR, 2, 4, 0}},     /* rsi, edx bytes */
        {2, READ_STRING, {SRC_GPR, 3, 8, 0}, 0, {0}},                     /* rcx: unreadable */
        {3, READ_STRING, {SRC_GPR, 4, 8, 0}, 0, {0}},                     /* r8: cut at the end */
        {4, READ_FIXED, {SRC_GPR, 5, 8, 0}, 4, {0}},                      /* r9: NULL */
        {6, READ_COUNTED, {SRC_STACK, 0, 8, 0}, 0, {SRC_STACK, 8, 8, 0}}, /* stack, stack */
        {7, READ_COUNTED, {SRC_GPR, 0, 8, 0}, 0, {SRC_CONST, 0, 8, 3}},   /* rdi, 3 bytes */
    };
    struct capture_plan plan = {.entry = true,
                                .result = true,
                                .entry_xmm = true,
                                .stack_bytes = 16,
                                .reads = reads,
                                .nreads = 7,
                                .hidden_size = 6};
    struct capture_read result_reads[] = {{CHUNK_RESULT, READ_STRING, {SRC_GPR, 0, 8, 0}, 0, {0}}};
    plan.result_reads = result_reads;
    plan.nresult_reads = 1;
    uint64_t gprs[6] = {BASE, BASE + 16, 0xffffffff00000006ull, 0x9999, BASE + sizeof(mem) - 3, 0};
    uint8_t xmm[128];
    for (int i = 0; i < 128; i++)
        xmm[i] = (uint8_t)i;
    uint64_t rsp = BASE + 64;

    CHECK(capture_table_size(&plan) <= sizeof(table));
    capture_table_encode(&plan, 64, INJECT_RECORD_MAX, table);
    size_t len = model_entry(table, gprs, xmm, rsp, data);
    CHECK(len % 32 == 0 && len > u32_at(table + CT_ENTRY_SIZE) && len < INJECT_RECORD_MAX);
    struct values_regs regs = {gprs, xmm, NULL, rsp};
    values_build_args(&want, 7, 42, &plan, &regs, read_direct, NULL, 64);
    CHECK(capture_decode_args(&got, 7, 42, &plan, table, data, len, rsp, 64) == 0);
    CHECK(same_record());
    CHECK_EQ_U64(chunk(&got, 3)->len, 6); /* "hello" and its NUL */
    CHECK_EQ_U64(chunk(&got, 4)->len, 6); /* edx = 6: the upper half masked */
    CHECK_EQ_U64(chunk(&got, 5)->flags, CHUNK_UNREADABLE);
    CHECK_EQ_U64(chunk(&got, 6)->flags, CHUNK_CUT); /* "end" without a NUL */
    CHECK_EQ_U64(chunk(&got, 7)->len, 5);           /* through the stack arguments */
    CHECK_EQ_U64(chunk(&got, 8)->len, 3);           /* a constant length */

    /* the return: a hidden result, and a string at rax */
    uint64_t ret[2] = {BASE, 0};
    len = model_exit(table, ret, data);
    struct values_regs rregs = {ret, NULL, NULL, 0};
    values_build_retval(&want, 7, 42, &plan, &rregs, read_direct, NULL, 64);
    CHECK(capture_decode_retval(&got, 7, 42, &plan, table, data, len, 64) == 0);
    CHECK(same_record());

    /* damaged data: a wrong length word, a slot running past the end */
    len = model_entry(table, gprs, xmm, rsp, data);
    uint64_t bad = len + 32;
    memcpy(data, &bad, 8);
    CHECK(capture_decode_args(&got, 7, 42, &plan, table, data, len, rsp, 64) < 0);
    memcpy(data, &len, 8);
    uint64_t huge = 1u << 20;
    memcpy(data + 8 + 48 + 128 + 8, &huge, 8); /* the stack slot's size */
    CHECK(capture_decode_args(&got, 7, 42, &plan, table, data, len, rsp, 64) == 0);
    CHECK_EQ_U64(chunk(&got, 2)->flags, CHUNK_UNREADABLE); /* its bytes are not trusted */

    /* a small record limit cuts the largest reads: shown cut, never overrun */
    capture_table_encode(&plan, 4096, 1024, table);
    len = model_entry(table, gprs, xmm, rsp, data);
    CHECK(len + EVENT_SIZE <= 1024);
    CHECK(capture_decode_args(&got, 7, 42, &plan, table, data, len, rsp, 4096) == 0);
    CHECK_EQ_U64(chunk(&got, 3)->len, 6); /* "hello" still whole */

    /* -R only: no argument reads in the table, the entry still carries the registers */
    struct capture_plan only_result = plan;
    only_result.entry = false;
    capture_table_encode(&only_result, 64, INJECT_RECORD_MAX, table);
    CHECK_EQ_U64(u32_at(table + CT_STACK_BYTES), 0);
    CHECK_EQ_U64(table[CT_NREADS], 0);
    return unit_finish("capture_table");
}
