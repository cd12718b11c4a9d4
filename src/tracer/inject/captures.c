#include "tracer/inject/captures.h"

#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/inject_tramp.h"
#include "tracer/arg_capture.h"
#include "tracer/inject/capture_table.h"
#include "tracer/inject/inject.h"
#include "remote/memory.h"
#include "tracer/scratch.h"
#include "util/log.h"

/* A record may take at most this much of a ring: a thread waiting for room waits for half. */
static size_t record_max(const struct session *s)
{
    size_t half = s->inject->ring_size / 2;
    return half < INJECT_RECORD_MAX ? half : INJECT_RECORD_MAX;
}

static void clear(uint64_t *tables, size_t n)
{
    memset(tables, 0, n * sizeof(*tables));
}

int captures_place(struct session *s, struct process *p, pid_t via, uint64_t code,
                   const uint32_t *ids, size_t n, uint64_t *tables)
{
    clear(tables, n);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        const struct capture_plan *plan = capture_plan_of(s, ids[i]);
        if (plan)
            total += (capture_table_size(plan) + 15) & ~(size_t)15;
    }
    if (!total)
        return 0;
    uint8_t *buf = calloc(1, total);
    uint64_t at = buf ? scratch_alloc(p, via, code, total, total) : 0;
    if (!at) {
        free(buf);
        err_msg("inject engine: process %d: no room for the tables of -A/-R; values are not "
                "recorded",
                (int)p->pid);
        return -1;
    }
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        const struct capture_plan *plan = capture_plan_of(s, ids[i]);
        if (!plan)
            continue;
        size_t size = capture_table_size(plan);
        capture_table_encode(plan, s->opts->capture.string_max, record_max(s), buf + used);
        uint8_t *copy = malloc(size);
        if (!copy || addr_map_put(&s->inject->capture_tables, (uint64_t)ids[i] + 1, copy) < 0) {
            free(copy);
            continue; /* out of memory: traced without its values */
        }
        memcpy(copy, buf + used, size);
        tables[i] = at + used;
        used += (size + 15) & ~(size_t)15;
    }
    int rc = mem_write(p->mem_fd, at, buf, total);
    free(buf);
    if (rc < 0) {
        clear(tables, n);
        return -1;
    }
    return 0;
}

static struct values_buf *values_of(struct session *s)
{
    if (!s->inject->values)
        s->inject->values = malloc(sizeof(struct values_buf));
    return s->inject->values;
}

void captures_entered(struct session *s, struct thread *t, uint32_t func, const uint8_t *data,
                      size_t len, uint64_t slot)
{
    const struct capture_plan *plan = capture_plan_of(s, func);
    const uint8_t *table = addr_map_get(&s->inject->capture_tables, (uint64_t)func + 1);
    struct values_buf *b = values_of(s);
    if (!plan || !table || !b)
        return;
    if (!data || capture_decode_args(b, t->tid, func, plan, table, data, len, slot,
                                     s->opts->capture.string_max) < 0) {
        /* no values (a ring overwritten): the record still numbers the call */
        static const struct capture_plan none = {0};
        values_build_args(b, t->tid, func, &none, NULL, NULL, NULL, 0);
    }
    rec_frame_data(s->rec, t->tid, b, b->used);
}

bool captures_returned(struct session *s, struct thread *t, uint32_t func, const uint8_t *data,
                       size_t len)
{
    const struct capture_plan *plan = capture_plan_of(s, func);
    const uint8_t *table = addr_map_get(&s->inject->capture_tables, (uint64_t)func + 1);
    struct values_buf *b = values_of(s);
    return plan && plan->result && table && b && data &&
           capture_decode_retval(b, t->tid, func, plan, table, data, len,
                                 s->opts->capture.string_max) == 0;
}

void captures_write_retval(struct session *s, struct thread *t)
{
    struct values_buf *b = s->inject->values;
    rec_frame_data(s->rec, t->tid, b, b->used);
}

/* The most bytes of return values a chain of tail calls keeps: a chain has at most a shadow
 * stack of calls, and a ring's events can make one of any length; past this (dozens of calls
 * with large values), the chain's outer calls end without theirs. */
#define TAIL_VALUES_MAX (1u << 20)

void captures_keep_for_chain(struct session *s, struct thread *t)
{
    struct inject_engine *e = s->inject;
    struct values_buf *b = e->values;
    if (e->tail_values_tid != t->tid)
        e->tail_values_len = 0; /* another thread's chain, cut short (a pending event) */
    e->tail_values_tid = t->tid;
    if (e->tail_values_len + b->used > TAIL_VALUES_MAX) {
        dbg(DBG_INJECT, 1, "thread %d: a chain of tail calls keeps too many return values",
            (int)t->tid);
        return;
    }
    if (e->tail_values_len + b->used > e->tail_values_cap) {
        size_t cap = (e->tail_values_len + b->used) * 2;
        uint8_t *grown = realloc(e->tail_values, cap);
        if (!grown)
            return; /* out of memory: that value is not recorded */
        e->tail_values = grown;
        e->tail_values_cap = cap;
    }
    memcpy(e->tail_values + e->tail_values_len, b->u.bytes, b->used);
    e->tail_values_len += b->used;
}

bool captures_write_kept(struct session *s, struct thread *t, uint32_t func)
{
    struct inject_engine *e = s->inject;
    if (e->tail_values_tid != t->tid)
        return false;
    for (size_t at = 0; at < e->tail_values_len;) {
        struct rec_values *v = (struct rec_values *)(e->tail_values + at);
        size_t size = v->hdr.size;
        if (v->func == func && v->hdr.type == REC_RETVAL) {
            rec_frame_data(s->rec, t->tid, v, size);
            v->hdr.type = 0; /* written */
            return true;
        }
        at += size;
    }
    return false;
}

void captures_forget_kept(struct session *s)
{
    s->inject->tail_values_len = 0;
}

void captures_free(struct inject_engine *e)
{
    free(e->tail_values);
    ADDR_MAP_FOREACH(&e->capture_tables, slot)
    free(slot->value);
    addr_map_free(&e->capture_tables);
    free(e->values);
    free(e->record);
}
