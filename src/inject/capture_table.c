#include "inject/capture_table.h"

#include <string.h>

#include "arch/x86_64/inject_tramp.h"

static uint64_t pad8(uint64_t n)
{
    return (n + 7) & ~(uint64_t)7;
}

static uint64_t pad32(uint64_t n)
{
    return (n + 31) & ~(uint64_t)31;
}

static void put_u8(uint8_t *at, uint8_t v)
{
    *at = v;
}
static void put_u16(uint8_t *at, uint16_t v)
{
    memcpy(at, &v, 2);
}
static void put_u32(uint8_t *at, uint32_t v)
{
    memcpy(at, &v, 4);
}
static void put_u64(uint8_t *at, uint64_t v)
{
    memcpy(at, &v, 8);
}
static uint32_t get_u32(const uint8_t *at)
{
    uint32_t v;
    memcpy(&v, at, 4);
    return v;
}
static uint16_t get_u16(const uint8_t *at)
{
    uint16_t v;
    memcpy(&v, at, 2);
    return v;
}
static int64_t get_i64(const uint8_t *at)
{
    int64_t v;
    memcpy(&v, at, 8);
    return v;
}

size_t capture_table_size(const struct capture_plan *plan)
{
    return CT_HEAD + (plan->nreads + plan->nresult_reads) * CT_OP_SIZE;
}

/* Where a word is, for the trampoline: ngprs registers were copied. */
static void encode_word(const struct capture_word *w, size_t ngprs, uint8_t *src, uint32_t *off,
                        uint64_t *value, uint8_t *shift)
{
    *off = 0;
    *value = 0;
    *shift = w->size && w->size < 8 ? (uint8_t)(64 - 8 * w->size) : 0;
    if (w->src == SRC_CONST) {
        *src = CT_SRC_CONST;
        *value = w->value;
        *shift = 0;
    } else if (w->src == SRC_STACK) {
        *src = CT_SRC_STACK;
        *off = w->offset;
    } else if (w->offset < ngprs) {
        *src = CT_SRC_GPR;
        *off = w->offset * 8;
    } else {
        *src = CT_SRC_NONE;
    }
}

/* The most bytes values_record.c asks of a read (CAPTURE_BUFFER_MAX at most). */
static uint32_t read_cap(const struct capture_read *r, unsigned string_max)
{
    uint64_t cap = CAPTURE_BUFFER_MAX;
    if (r->kind == READ_STRING)
        cap = string_max;
    else if (r->kind == READ_FIXED)
        cap = r->size;
    else if (r->count.src == SRC_CONST)
        cap = r->count.value;
    return cap < CAPTURE_BUFFER_MAX ? (uint32_t)cap : CAPTURE_BUFFER_MAX;
}

static void encode_ops(uint8_t *op, const struct capture_read *reads, size_t n, size_t ngprs,
                       unsigned string_max)
{
    for (size_t i = 0; i < n; i++, op += CT_OP_SIZE) {
        const struct capture_read *r = &reads[i];
        uint8_t src, shift;
        uint32_t off;
        uint64_t value;
        memset(op, 0, CT_OP_SIZE);
        encode_word(&r->ptr, ngprs, &src, &off, &value, &shift);
        put_u8(op + OP_PTR_SRC, src == CT_SRC_CONST ? CT_SRC_NONE : src);
        put_u32(op + OP_PTR_OFF, off);
        if (r->kind == READ_COUNTED) {
            encode_word(&r->count, ngprs, &src, &off, &value, &shift);
            put_u8(op + OP_COUNT_SRC, src);
            put_u8(op + OP_SHIFT, shift);
            put_u32(op + OP_COUNT_OFF, off);
            put_u64(op + OP_COUNT_CONST, value);
        } else {
            put_u8(op + OP_COUNT_SRC, CT_SRC_NONE);
        }
        put_u32(op + OP_CAP, read_cap(r, string_max));
    }
}

static uint64_t reads_bytes(const uint8_t *op, size_t n)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++, op += CT_OP_SIZE)
        sum += 8 + pad8(get_u32(op + OP_CAP));
    return sum;
}

static uint64_t entry_bytes(const uint8_t *table)
{
    uint64_t n = 8 + 6 * 8;
    if (table[CT_ENTRY_XMM])
        n += 8 * 16;
    uint32_t stack = get_u32(table + CT_STACK_BYTES);
    if (stack)
        n += 8 + pad8(stack);
    return pad32(n + reads_bytes(table + CT_HEAD, get_u16(table + CT_NREADS)));
}

static uint64_t exit_bytes(const uint8_t *table)
{
    uint64_t n = 8 + 2 * 8;
    if (table[CT_RESULT_FP])
        n += 2 * 16 + 16;
    uint32_t hidden = get_u32(table + CT_HIDDEN_SIZE);
    if (hidden)
        n += 8 + pad8(hidden);
    const uint8_t *ops = table + CT_HEAD + get_u16(table + CT_NREADS) * CT_OP_SIZE;
    return pad32(n + reads_bytes(ops, get_u16(table + CT_NRESULT_READS)));
}

/* Halves the largest cap of ops[0..n); false when every cap is 0. */
static bool cut_largest(uint8_t *ops, size_t n)
{
    uint8_t *largest = NULL;
    for (size_t i = 0; i < n; i++)
        if (!largest || get_u32(ops + i * CT_OP_SIZE + OP_CAP) > get_u32(largest + OP_CAP))
            largest = ops + i * CT_OP_SIZE;
    if (!largest || !get_u32(largest + OP_CAP))
        return false;
    put_u32(largest + OP_CAP, get_u32(largest + OP_CAP) / 2);
    return true;
}

void capture_table_encode(const struct capture_plan *plan, unsigned string_max, size_t record_max,
                          uint8_t *out)
{
    memset(out, 0, CT_HEAD);
    size_t nreads = plan->entry ? plan->nreads : 0;
    size_t nresult = plan->result ? plan->nresult_reads : 0;
    put_u8(out + CT_ENTRY_XMM, plan->entry && plan->entry_xmm);
    put_u8(out + CT_RESULT_FP, plan->result && plan->result_fp);
    put_u16(out + CT_NREADS, (uint16_t)nreads);
    put_u16(out + CT_NRESULT_READS, (uint16_t)nresult);
    put_u32(out + CT_STACK_BYTES, plan->entry ? plan->stack_bytes : 0);
    put_u32(out + CT_HIDDEN_SIZE, plan->result ? (uint32_t)plan->hidden_size : 0);
    uint8_t *entry_ops = out + CT_HEAD, *result_ops = entry_ops + nreads * CT_OP_SIZE;
    encode_ops(entry_ops, plan->reads, nreads, 6, string_max);
    encode_ops(result_ops, plan->result_reads, nresult, 2, string_max);
    while (EVENT_SIZE + entry_bytes(out) > record_max && cut_largest(entry_ops, nreads))
        ;
    while (EVENT_SIZE + exit_bytes(out) > record_max && cut_largest(result_ops, nresult))
        ;
    put_u32(out + CT_ENTRY_SIZE, (uint32_t)entry_bytes(out));
    put_u32(out + CT_EXIT_SIZE, plan->result ? (uint32_t)exit_bytes(out) : 0);
}

/* The bytes the trampoline copied, given back to values_record.c as it asks for them. */
struct replay {
    const uint8_t *stack;  /* the stack arguments' slot, or NULL */
    const uint8_t *hidden; /* the hidden result's */
    uint32_t stack_cap, hidden_cap;
    const uint8_t *ops; /* the reads' ops, and their slots from reads on */
    size_t nops;
    const uint8_t *reads;
};

static ssize_t replay_read(void *ctx, int which, uint64_t addr, void *buf, size_t len)
{
    (void)addr;
    const struct replay *r = ctx;
    const uint8_t *slot;
    uint32_t cap;
    if (which == VALUES_READ_STACK) {
        slot = r->stack, cap = r->stack_cap;
    } else if (which == VALUES_READ_HIDDEN) {
        slot = r->hidden, cap = r->hidden_cap;
    } else {
        if (which < 0 || (size_t)which >= r->nops)
            return -1;
        slot = r->reads + reads_bytes(r->ops, (size_t)which);
        cap = get_u32(r->ops + (size_t)which * CT_OP_SIZE + OP_CAP);
    }
    if (!slot)
        return -1;
    int64_t got = get_i64(slot);
    if (got <= 0)
        return -1;
    size_t n = (uint64_t)got < cap ? (size_t)got : cap;
    if (n > len)
        n = len;
    memcpy(buf, slot + 8, n);
    return (ssize_t)n;
}

int capture_decode_args(struct values_buf *b, pid_t tid, uint32_t func,
                        const struct capture_plan *plan, const uint8_t *table,
                        const uint8_t *data, size_t len, uint64_t rsp, unsigned string_max)
{
    uint32_t size = get_u32(table + CT_ENTRY_SIZE);
    if (len != size || get_i64(data) != (int64_t)size)
        return -1;
    const uint8_t *at = data + 8;
    struct values_regs regs = {(const uint64_t *)at, NULL, NULL, rsp};
    at += 6 * 8;
    if (table[CT_ENTRY_XMM]) {
        regs.xmm = at;
        at += 8 * 16;
    }
    struct replay r = {.ops = table + CT_HEAD, .nops = get_u16(table + CT_NREADS)};
    r.stack_cap = get_u32(table + CT_STACK_BYTES);
    if (r.stack_cap) {
        r.stack = at;
        at += 8 + pad8(r.stack_cap);
    }
    r.reads = at;
    values_build_args(b, tid, func, plan, &regs, replay_read, &r, string_max);
    return 0;
}

int capture_decode_retval(struct values_buf *b, pid_t tid, uint32_t func,
                          const struct capture_plan *plan, const uint8_t *table,
                          const uint8_t *data, size_t len, unsigned string_max)
{
    uint32_t size = get_u32(table + CT_EXIT_SIZE);
    if (!size || len != size || get_i64(data) != (int64_t)size)
        return -1;
    const uint8_t *at = data + 8;
    struct values_regs regs = {(const uint64_t *)at, NULL, NULL, 0};
    at += 2 * 8;
    if (table[CT_RESULT_FP]) {
        regs.xmm = at;
        regs.x87 = at + 2 * 16;
        at += 2 * 16 + 16;
    }
    size_t nreads = get_u16(table + CT_NREADS);
    struct replay r = {.ops = table + CT_HEAD + nreads * CT_OP_SIZE,
                       .nops = get_u16(table + CT_NRESULT_READS)};
    r.hidden_cap = get_u32(table + CT_HIDDEN_SIZE);
    if (r.hidden_cap) {
        r.hidden = at;
        at += 8 + pad8(r.hidden_cap);
    }
    r.reads = at;
    values_build_retval(b, tid, func, plan, &regs, replay_read, &r, string_max);
    return 0;
}
