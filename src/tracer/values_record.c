#include "tracer/values_record.h"

#include <string.h>

static void values_begin(struct values_buf *b, enum rec_type type, pid_t tid, uint32_t func)
{
    b->u.head = (struct rec_values){{(uint8_t)type, 0, 0, (uint32_t)tid}, func, 0};
    b->used = sizeof(b->u.head);
}

static void values_end(struct values_buf *b)
{
    b->u.head.hdr.size = (uint16_t)b->used;
}

/* Room for a chunk of up to len bytes: where its bytes go, with *len cut to what fits. */
static uint8_t *chunk_add(struct values_buf *b, uint8_t kind, uint16_t param, uint64_t addr,
                          size_t *len)
{
    size_t room = REC_MAX_SIZE - b->used;
    if (room < sizeof(struct rec_chunk))
        return NULL;
    room -= sizeof(struct rec_chunk);
    if (*len > room)
        *len = room & ~(size_t)7;
    struct rec_chunk ch = {kind, 0, param, (uint32_t)*len, addr};
    memcpy(b->u.bytes + b->used, &ch, sizeof(ch));
    b->u.head.nchunks++;
    return b->u.bytes + b->used + sizeof(ch);
}

/* Sets the final length and flags of the chunk chunk_add just returned data for. */
static void chunk_end(struct values_buf *b, uint8_t *data, size_t len, uint8_t flags)
{
    struct rec_chunk *ch = (struct rec_chunk *)(data - sizeof(struct rec_chunk));
    ch->len = (uint32_t)len;
    ch->flags = flags;
    size_t padded = (len + 7) & ~(size_t)7;
    memset(data + len, 0, padded - len);
    b->used += sizeof(*ch) + padded;
}

static void put_bytes(struct values_buf *b, uint8_t kind, const void *src, size_t len)
{
    uint8_t *data = chunk_add(b, kind, 0, 0, &len);
    if (!data)
        return;
    memcpy(data, src, len);
    chunk_end(b, data, len, 0);
}

struct reader {
    values_read_fn fn;
    void *ctx;
};

static void put_memory(struct values_buf *b, const struct reader *r, int which, uint8_t kind,
                       uint16_t param, uint64_t addr, size_t len, bool string)
{
    size_t want = len;
    uint8_t *data = chunk_add(b, kind, param, addr, &len);
    if (!data)
        return;
    ssize_t n = len ? r->fn(r->ctx, which, addr, data, len) : 0;
    if (n <= 0) {
        chunk_end(b, data, 0, len ? CHUNK_UNREADABLE : CHUNK_CUT);
        return;
    }
    if ((size_t)n > len)
        n = (ssize_t)len;
    uint8_t flags = (size_t)n < want ? CHUNK_CUT : 0;
    if (string) {
        uint8_t *nul = memchr(data, 0, (size_t)n);
        flags = nul ? 0 : CHUNK_CUT;
        if (nul)
            n = nul - data + 1;
    }
    chunk_end(b, data, (size_t)n, flags);
}

/* The value of w at the stop: from the registers copied, or the stack bytes. */
static bool word_value(const struct capture_word *w, const uint64_t *gprs, size_t ngprs,
                       const uint8_t *stack, size_t stack_len, uint64_t *out)
{
    uint64_t v = 0;
    if (w->src == SRC_CONST) {
        *out = w->value;
        return true;
    }
    if (w->src == SRC_GPR) {
        if (w->offset >= ngprs)
            return false;
        v = gprs[w->offset];
    } else if (stack && w->offset + 8 <= stack_len) {
        memcpy(&v, stack + w->offset, 8);
    } else {
        return false;
    }
    if (w->size && w->size < 8)
        v &= (1ull << (w->size * 8)) - 1;
    *out = v;
    return true;
}

static void put_reads(struct values_buf *b, const struct reader *rd,
                      const struct capture_read *reads, size_t n, const uint64_t *gprs,
                      size_t ngprs, const uint8_t *stack, size_t stack_len, unsigned string_max)
{
    for (size_t i = 0; i < n; i++) {
        const struct capture_read *r = &reads[i];
        uint64_t ptr, len = r->size;
        if (!word_value(&r->ptr, gprs, ngprs, stack, stack_len, &ptr) || !ptr)
            continue;
        if (r->kind == READ_COUNTED && !word_value(&r->count, gprs, ngprs, stack, stack_len, &len))
            continue;
        if (r->kind == READ_STRING)
            len = string_max;
        if (len > CAPTURE_BUFFER_MAX)
            len = CAPTURE_BUFFER_MAX;
        put_memory(b, rd, (int)i, CHUNK_MEM, r->param, ptr, (size_t)len, r->kind == READ_STRING);
    }
}

void values_build_args(struct values_buf *b, pid_t tid, uint32_t func,
                       const struct capture_plan *plan, const struct values_regs *regs,
                       values_read_fn read, void *ctx, unsigned string_max)
{
    values_begin(b, REC_ARGS, tid, func);
    if (plan->entry) {
        struct reader rd = {read, ctx};
        put_bytes(b, CHUNK_GPR, regs->gprs, 6 * 8);
        if (plan->entry_xmm && regs->vec)
            put_bytes(b, CHUNK_XMM, regs->vec, 8 * 16);
        const uint8_t *stack = NULL;
        size_t stack_len = 0;
        if (plan->stack_bytes) {
            size_t at = b->used + sizeof(struct rec_chunk);
            put_memory(b, &rd, VALUES_READ_STACK, CHUNK_STACK, 0, regs->sp + 8, plan->stack_bytes,
                       false);
            stack = b->u.bytes + at;
            stack_len = ((const struct rec_chunk *)(stack - sizeof(struct rec_chunk)))->len;
        }
        put_reads(b, &rd, plan->reads, plan->nreads, regs->gprs, 6, stack, stack_len, string_max);
    }
    values_end(b);
}

void values_build_retval(struct values_buf *b, pid_t tid, uint32_t func,
                         const struct capture_plan *plan, const struct values_regs *regs,
                         values_read_fn read, void *ctx, unsigned string_max)
{
    struct reader rd = {read, ctx};
    values_begin(b, REC_RETVAL, tid, func);
    put_bytes(b, CHUNK_GPR, regs->gprs, 2 * 8);
    if (plan->result_fp && regs->vec && regs->x87) {
        put_bytes(b, CHUNK_XMM, regs->vec, 2 * 16);
        put_bytes(b, CHUNK_X87, regs->x87, 16);
    }
    if (plan->hidden_size && regs->gprs[0])
        put_memory(b, &rd, VALUES_READ_HIDDEN, CHUNK_MEM, CHUNK_RESULT, regs->gprs[0],
                   plan->hidden_size, false);
    put_reads(b, &rd, plan->result_reads, plan->nresult_reads, regs->gprs, 2, NULL, 0, string_max);
    values_end(b);
}
