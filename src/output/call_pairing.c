#include "output/call_pairing.h"

#include <stdlib.h>

#include "output/call_values.h"

struct open_calls {
    uint32_t pid; /* of the latest REC_ENTER or REC_THREAD */
    struct paired_call *calls;
    size_t depth, cap;
};

int call_pairing_init(struct call_pairing *p, const struct call_pairing_ops *ops, void *ctx)
{
    *p = (struct call_pairing){.ops = ops, .ctx = ctx};
    return addr_map_init(&p->threads, 64);
}

static struct open_calls *thread_of(struct call_pairing *p, uint32_t tid)
{
    struct open_calls *t = addr_map_get(&p->threads, tid);
    if (t)
        return t;
    t = calloc(1, sizeof(*t));
    if (!t || addr_map_put(&p->threads, tid, t) < 0) {
        free(t);
        return NULL;
    }
    return t;
}

static void end_call(struct call_pairing *p, struct open_calls *t, uint32_t tid, uint64_t ticks,
                     unsigned flags)
{
    struct paired_call call = t->calls[--t->depth];
    call.pid = t->pid;
    call.tid = tid;
    call.exit_ticks = ticks;
    call.flags = flags;
    p->ops->done(p->ctx, &call);
    free(call.args);
    free(call.ret);
}

static void end_thread(struct call_pairing *p, struct open_calls *t, uint32_t tid, uint64_t ticks)
{
    while (t->depth)
        end_call(p, t, tid, ticks, EXIT_UNFINISHED);
}

static int on_enter(struct call_pairing *p, const struct rec_call *r)
{
    struct open_calls *t = thread_of(p, r->hdr.tid);
    if (!t)
        return -1;
    t->pid = r->pid; /* exec from a thread renames it to the leader: same stack rules */
    if (t->depth == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        struct paired_call *calls = reallocarray(t->calls, cap, sizeof(*calls));
        if (!calls)
            return -1;
        t->calls = calls;
        t->cap = cap;
    }
    t->calls[t->depth++] = (struct paired_call){.func = r->func, .entry_ticks = r->ticks};
    return 0;
}

static int on_values(struct call_pairing *p, const struct rec_hdr *h)
{
    struct open_calls *t = addr_map_get(&p->threads, h->tid);
    if (!t || !t->depth || h->size < sizeof(struct rec_values))
        return 0;
    struct paired_call *call = &t->calls[t->depth - 1];
    if (call->func != ((const struct rec_values *)h)->func)
        return 0;
    int keep = p->ops->values ? p->ops->values(p->ctx, call, h) : 1;
    if (keep < 0)
        return -1;
    struct rec_values **slot = h->type == REC_ARGS ? &call->args : &call->ret;
    free(*slot);
    *slot = keep ? rec_values_copy(h) : NULL; /* NULL when damaged: shown without values */
    return 0;
}

/* A reused tid: whatever it left is over, in the process it ran in. The thread is known from
 * here on even before its first call, which fixes the order call_pairing_finish visits them. */
static void on_thread(struct call_pairing *p, const struct rec_thread *r)
{
    struct open_calls *t = thread_of(p, r->hdr.tid);
    if (!t)
        return; /* out of memory: it had no open call, and its first REC_ENTER will tell */
    end_thread(p, t, r->hdr.tid, r->ticks);
    t->pid = r->pid;
}

int call_pairing_feed(struct call_pairing *p, const struct rec_hdr *h)
{
    struct open_calls *t;
    switch (h->type) {
    case REC_ENTER:
        p->last_ticks = ((const struct rec_call *)h)->ticks;
        return on_enter(p, (const struct rec_call *)h);
    case REC_EXIT:
        p->last_ticks = ((const struct rec_call *)h)->ticks;
        t = addr_map_get(&p->threads, h->tid);
        if (t && t->depth)
            end_call(p, t, h->tid, ((const struct rec_call *)h)->ticks, h->flags);
        return 0;
    case REC_ARGS:
    case REC_RETVAL:
        return on_values(p, h);
    case REC_THREAD:
        on_thread(p, (const struct rec_thread *)h);
        return 0;
    case REC_THREAD_END:
        t = addr_map_get(&p->threads, h->tid);
        if (t)
            end_thread(p, t, h->tid, ((const struct rec_end *)h)->ticks);
        return 0;
    default:
        return 0;
    }
}

void call_pairing_finish(struct call_pairing *p)
{
    ADDR_MAP_FOREACH(&p->threads, slot)
    end_thread(p, slot->value, (uint32_t)slot->key, p->last_ticks);
}

void call_pairing_free(struct call_pairing *p)
{
    ADDR_MAP_FOREACH(&p->threads, slot)
    {
        struct open_calls *t = slot->value;
        while (t->depth--) {
            free(t->calls[t->depth].args);
            free(t->calls[t->depth].ret);
        }
        free(t->calls);
        free(t);
    }
    addr_map_free(&p->threads);
}
