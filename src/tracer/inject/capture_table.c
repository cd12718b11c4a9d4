#include "tracer/inject/capture_table.h"

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

#define SLOT_HEAD 16 /* a slot: the count read (or -errno), its bytes, then them */

/* The most bytes the slots of n reads take. */
static uint64_t reads_bytes(const uint8_t *op, size_t n)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++, op += CT_OP_SIZE)
        sum += SLOT_HEAD + pad8(get_u32(op + OP_CAP));
    return sum;
}

/* The bytes of entry data before the reads' slots. */
static uint64_t entry_fixed(const uint8_t *table)
{
    uint64_t n = 8 + 6 * 8;
    if (table[CT_ENTRY_XMM])
        n += 8 * 16;
    uint32_t stack = get_u32(table + CT_STACK_BYTES);
    if (stack)
        n += SLOT_HEAD + pad8(stack);
    return n;
}

static uint64_t exit_fixed(const uint8_t *table)
{
    uint64_t n = 8 + 2 * 8;
    if (table[CT_RESULT_FP])
        n += 2 * 16 + 16;
    uint32_t hidden = get_u32(table + CT_HIDDEN_SIZE);
    if (hidden)
        n += SLOT_HEAD + pad8(hidden);
    return n;
}

static const uint8_t *result_ops(const uint8_t *table)
{
    return table + CT_HEAD + get_u16(table + CT_NREADS) * CT_OP_SIZE;
}

/* The most bytes of data at the entry, at the exit. */
static uint64_t entry_bytes(const uint8_t *table)
{
    return pad32(entry_fixed(table) + reads_bytes(table + CT_HEAD, get_u16(table + CT_NREADS)));
}

static uint64_t exit_bytes(const uint8_t *table)
{
    return pad32(exit_fixed(table) +
                 reads_bytes(result_ops(table), get_u16(table + CT_NRESULT_READS)));
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
    put_u32(out + CT_ENTRY_SIZE, (uint32_t)entry_fixed(out));
    put_u32(out + CT_EXIT_SIZE, plan->result ? (uint32_t)exit_fixed(out) : 0);
}

/* The bytes the trampoline copied, given back to values_record.c as it asks for them. */
struct replay {
    const uint8_t *stack;  /* the stack arguments' slot, or NULL */
    const uint8_t *hidden; /* the hidden result's */
    const uint8_t *reads;  /* the reads' slots, up to end */
    const uint8_t *end;
    size_t nreads;
};

/* The slot at at, or NULL when it runs past end. */
static const uint8_t *slot_at(const uint8_t *at, const uint8_t *end)
{
    if (!at || end - at < SLOT_HEAD)
        return NULL;
    uint64_t bytes;
    memcpy(&bytes, at + 8, 8);
    return bytes % 8 == 0 && bytes <= (uint64_t)(end - at - SLOT_HEAD) ? at : NULL;
}

static const uint8_t *slot_next(const uint8_t *slot)
{
    uint64_t bytes;
    memcpy(&bytes, slot + 8, 8);
    return slot + SLOT_HEAD + bytes;
}

static ssize_t replay_read(void *ctx, int which, uint64_t addr, void *buf, size_t len)
{
    (void)addr;
    const struct replay *r = ctx;
    const uint8_t *slot = NULL;
    if (which == VALUES_READ_STACK) {
        slot = r->stack;
    } else if (which == VALUES_READ_HIDDEN) {
        slot = r->hidden;
    } else if (which >= 0 && (size_t)which < r->nreads) {
        slot = slot_at(r->reads, r->end);
        for (int i = 0; slot && i < which; i++)
            slot = slot_at(slot_next(slot), r->end);
    }
    if (!slot)
        return -1;
    int64_t got = get_i64(slot);
    uint64_t bytes;
    memcpy(&bytes, slot + 8, 8);
    if (got <= 0)
        return -1;
    size_t n = (uint64_t)got < bytes ? (size_t)got : (size_t)bytes;
    if (n > len)
        n = len;
    memcpy(buf, slot + SLOT_HEAD, n);
    return (ssize_t)n;
}

/* The data's length word: the length, within the most the table allows. */
static bool data_fits(const uint8_t *data, size_t len, uint64_t most)
{
    return len >= 8 && len <= most && get_i64(data) == (int64_t)len && len % 32 == 0;
}

int capture_decode_args(struct values_buf *b, pid_t tid, uint32_t func,
                        const struct capture_plan *plan, const uint8_t *table, const uint8_t *data,
                        size_t len, uint64_t entry_sp, unsigned string_max)
{
    if (!data_fits(data, len, entry_bytes(table)) || len < entry_fixed(table))
        return -1;
    const uint8_t *at = data + 8, *end = data + len;
    struct values_regs regs = {(const uint64_t *)at, NULL, NULL, entry_sp};
    at += 6 * 8;
    if (table[CT_ENTRY_XMM]) {
        regs.vec = at;
        at += 8 * 16;
    }
    struct replay r = {.end = end, .nreads = get_u16(table + CT_NREADS)};
    if (get_u32(table + CT_STACK_BYTES)) {
        r.stack = slot_at(at, end);
        at += SLOT_HEAD + pad8(get_u32(table + CT_STACK_BYTES));
    }
    r.reads = at;
    values_build_args(b, tid, func, plan, &regs, replay_read, &r, string_max);
    return 0;
}

int capture_decode_retval(struct values_buf *b, pid_t tid, uint32_t func,
                          const struct capture_plan *plan, const uint8_t *table,
                          const uint8_t *data, size_t len, unsigned string_max)
{
    if (!get_u32(table + CT_EXIT_SIZE) || !data_fits(data, len, exit_bytes(table)) ||
        len < exit_fixed(table))
        return -1;
    const uint8_t *at = data + 8, *end = data + len;
    struct values_regs regs = {(const uint64_t *)at, NULL, NULL, 0};
    at += 2 * 8;
    if (table[CT_RESULT_FP]) {
        regs.vec = at;
        regs.x87 = at + 2 * 16;
        at += 2 * 16 + 16;
    }
    struct replay r = {.end = end, .nreads = get_u16(table + CT_NRESULT_READS)};
    if (get_u32(table + CT_HIDDEN_SIZE)) {
        r.hidden = slot_at(at, end);
        at += SLOT_HEAD + pad8(get_u32(table + CT_HIDDEN_SIZE));
    }
    r.reads = at;
    values_build_retval(b, tid, func, plan, &regs, replay_read, &r, string_max);
    return 0;
}
