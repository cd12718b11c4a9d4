#include "record/call_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int rec_time_of(struct rec_time *t, int dir, const char *name, const struct rec_header *h)
{
    *t = (struct rec_time){h->start, h->end, h->ns_per_tick};
    if (h->flags & REC_F_COMPLETE)
        return 0;
    char why[256];
    struct rec_reader scan;
    if (rec_reader_open(&scan, dir, name, why, sizeof(why)) < 0)
        return -1;
    while (rec_reader_next(&scan))
        ;
    t->end = scan.last_anchor; /* the start anchor when there is none: the nominal rate */
    rec_reader_close(&scan);
    return 0;
}

int64_t rec_time_ns(const struct rec_time *t, uint64_t ticks)
{
    return clock_ticks_to_ns(&t->start, &t->end, t->ns_per_tick, ticks);
}

int call_reader_init(struct call_reader *cr, const struct rec_time *time,
                     const struct call_reader_ops *ops, void *ctx)
{
    static const struct call_reader_ops none;
    *cr = (struct call_reader){.time = *time, .ops = ops ? ops : &none, .ctx = ctx};
    clock_mapping_init(&cr->clock, &time->start, &time->end, time->ns_per_tick);
    cr->file.fd = -1;
    return addr_map_init(&cr->threads, 64);
}

int call_reader_open(struct call_reader *cr, int dir, const char *name,
                     const struct call_reader_ops *ops, void *ctx, char *why, size_t whylen)
{
    struct rec_reader file;
    if (rec_reader_open(&file, dir, name, why, whylen) < 0) {
        memset(cr, 0, sizeof(*cr));
        cr->file.fd = -1;
        return -1;
    }
    struct rec_time time;
    rec_time_of(&time, dir, name, &file.header); /* unreadable now: the header's anchors */
    if (call_reader_init(cr, &time, ops, ctx) < 0) {
        snprintf(why, whylen, "out of memory");
        rec_reader_close(&file);
        return -1;
    }
    cr->file = file;
    return 0;
}

struct rec_values *rec_values_copy(const struct rec_hdr *h)
{
    if (h->size < sizeof(struct rec_values))
        return NULL;
    const struct rec_values *v = (const struct rec_values *)h;
    size_t pos = sizeof(*v);
    for (uint32_t i = 0; i < v->nchunks; i++) { /* every chunk inside the record */
        struct rec_chunk ch;
        if (pos + sizeof(ch) > h->size)
            return NULL;
        memcpy(&ch, (const uint8_t *)h + pos, sizeof(ch));
        pos += sizeof(ch) + (((size_t)ch.len + 7) & ~(size_t)7);
        if (pos > h->size)
            return NULL;
    }
    struct rec_values *copy = malloc(h->size);
    if (copy)
        memcpy(copy, h, h->size);
    return copy;
}

static int64_t saw_ticks(struct call_reader *cr, uint64_t ticks)
{
    int64_t ns = clock_map(&cr->clock, ticks);
    if (!cr->saw_time || cr->last_ns < ns)
        cr->last_ns = ns;
    cr->saw_time = true;
    return ns;
}

static struct call_thread *known_thread(struct call_reader *cr, uint32_t tid)
{
    if (cr->last_thread && cr->last_thread->tid == tid)
        return cr->last_thread;
    struct call_thread *t = addr_map_get(&cr->threads, tid);
    if (t)
        cr->last_thread = t;
    return t;
}

/* The thread of tid, created on first sight. NULL with *rc set: out of memory (-1) or the
 * thread callback's answer. */
static struct call_thread *thread_of(struct call_reader *cr, uint32_t pid, uint32_t tid, int *rc)
{
    struct call_thread *t = known_thread(cr, tid);
    if (t)
        return t;
    t = calloc(1, sizeof(*t));
    if (!t || addr_map_put(&cr->threads, tid, t) < 0) {
        free(t);
        *rc = -1;
        return NULL;
    }
    *t = (struct call_thread){.pid = pid, .tid = tid, .order = cr->nthreads++};
    cr->last_thread = t;
    if (cr->ops->thread && (*rc = cr->ops->thread(cr->ctx, cr, t)))
        return NULL;
    return t;
}

static void free_values(struct call_frame *f)
{
    free(f->args);
    free(f->ret);
}

static int pop_call(struct call_reader *cr, struct call_thread *t, int64_t end_ns, unsigned flags)
{
    struct call_frame *f = &t->stack[t->depth - 1];
    int64_t total = end_ns > f->start_ns ? end_ns - f->start_ns : 0;
    struct call_done c = {
        .thread = t,
        .frame = f,
        .parent = t->depth > 1 ? f - 1 : NULL,
        .depth = (uint32_t)t->depth,
        .end_ns = end_ns,
        .total_ns = total,
        .self_ns = total > f->child_ns ? total - f->child_ns : 0,
        .flags = flags,
    };
    if (c.parent)
        f[-1].child_ns = call_ns_add(f[-1].child_ns, total);
    cr->calls++;
    int rc = cr->ops->exit ? cr->ops->exit(cr->ctx, cr, &c) : 0;
    if (f->args || f->ret) /* most calls have none: no call to free() */
        free_values(f);
    t->depth--;
    return rc;
}

static int end_thread(struct call_reader *cr, struct call_thread *t, int64_t ns)
{
    int rc = 0;
    while (t->depth && !rc)
        rc = pop_call(cr, t, ns, EXIT_UNFINISHED);
    return rc;
}

static int push_call(struct call_reader *cr, const struct rec_call *r)
{
    int rc = 0;
    struct call_thread *t = thread_of(cr, r->pid, r->hdr.tid, &rc);
    if (!t)
        return rc;
    int64_t ns = saw_ticks(cr, r->ticks);
    t->pid = r->pid; /* exec from a thread renames it to the leader: same stack rules */
    if (t->depth == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        struct call_frame *stack = reallocarray(t->stack, cap, sizeof(*stack));
        if (!stack)
            return -1;
        t->stack = stack;
        t->cap = cap;
    }
    struct call_frame *f = &t->stack[t->depth++];
    *f = (struct call_frame){.func = r->func, .sym = r->func, .start_ns = ns};
    if (r->hdr.size >= sizeof(struct rec_call_from))
        f->ret_addr = ((const struct rec_call_from *)r)->ret_addr;
    return cr->ops->enter ? cr->ops->enter(cr->ctx, cr, t, f) : 0;
}

static int pop_exit(struct call_reader *cr, const struct rec_call *r)
{
    int64_t ns = saw_ticks(cr, r->ticks);
    struct call_thread *t = known_thread(cr, r->hdr.tid);
    return t && t->depth ? pop_call(cr, t, ns, r->hdr.flags) : 0;
}

static int take_values(struct call_reader *cr, const struct rec_hdr *h)
{
    struct call_thread *t = known_thread(cr, h->tid);
    if (!t || !t->depth || h->size < sizeof(struct rec_values) || !cr->ops->values)
        return 0;
    struct call_frame *f = &t->stack[t->depth - 1];
    if (f->func != ((const struct rec_values *)h)->func)
        return 0;
    int keep = cr->ops->values(cr->ctx, cr, t, f, h);
    if (keep < 0)
        return keep;
    struct rec_values **slot = h->type == REC_ARGS ? &f->args : &f->ret;
    free(*slot);
    *slot = keep ? rec_values_copy(h) : NULL; /* NULL when damaged: shown without values */
    return 0;
}

/* A reused tid: whatever it left is over, in the process it ran in. The thread is known from
 * here on even before its first call, which fixes the order call_reader_finish visits it. */
static int start_thread(struct call_reader *cr, const struct rec_thread *r)
{
    int rc = 0;
    struct call_thread *t = thread_of(cr, r->pid, r->hdr.tid, &rc);
    if (!t)
        return rc;
    rc = end_thread(cr, t, saw_ticks(cr, r->ticks));
    t->pid = r->pid;
    t->calls_shown = 0;
    return rc;
}

static int stop_thread(struct call_reader *cr, const struct rec_end *r)
{
    int64_t ns = saw_ticks(cr, r->ticks);
    struct call_thread *t = known_thread(cr, r->hdr.tid);
    return t ? end_thread(cr, t, ns) : 0;
}

int call_reader_feed(struct call_reader *cr, const struct rec_hdr *h)
{
    cr->events++;
    if (h->type == REC_ENTER)
        return push_call(cr, (const struct rec_call *)h);
    if (h->type == REC_EXIT)
        return pop_exit(cr, (const struct rec_call *)h);
    int rc = cr->ops->record ? cr->ops->record(cr->ctx, cr, h) : 0;
    if (rc)
        return rc;
    switch (h->type) {
    case REC_ARGS:
    case REC_RETVAL:
        return take_values(cr, h);
    case REC_THREAD:
        return start_thread(cr, (const struct rec_thread *)h);
    case REC_THREAD_END:
        return stop_thread(cr, (const struct rec_end *)h);
    default:
        return 0;
    }
}

int call_reader_finish(struct call_reader *cr)
{
    struct call_thread **order = calloc(cr->nthreads ? cr->nthreads : 1, sizeof(*order));
    if (!order)
        return -1;
    ADDR_MAP_FOREACH(&cr->threads, slot)
    {
        struct call_thread *t = slot->value;
        order[t->order] = t;
    }
    int rc = 0;
    for (uint32_t i = 0; i < cr->nthreads && !rc; i++)
        rc = end_thread(cr, order[i], cr->last_ns);
    free(order);
    return rc;
}

/* Every 2^20 records: a glance at the clock costs nothing there. */
#define PROGRESS_EVERY_RECORDS ((1u << 20) - 1)

static void show_progress(struct call_reader *cr)
{
    struct stat st;
    if (!progress_due(cr->progress) || fstat(cr->file.fd, &st) < 0 || st.st_size <= 0)
        return;
    uint64_t at = cr->file.offset + cr->file.pos;
    progress_show(cr->progress, "%s: %.0f%% of the record, %llu calls", cr->progress_what,
                  100.0 * (double)at / (double)st.st_size, (unsigned long long)cr->calls);
}

int call_reader_run(struct call_reader *cr)
{
    int rc = 0;
    for (const struct rec_hdr *h; !rc && (h = rec_reader_next(&cr->file));) {
        rc = call_reader_feed(cr, h);
        if (cr->progress && !(cr->events & PROGRESS_EVERY_RECORDS))
            show_progress(cr);
    }
    progress_end(cr->progress);
    if (!rc)
        rc = call_reader_finish(cr);
    cr->damaged = cr->file.corrupt ? 2 : cr->file.truncated ? 1 : 0;
    return rc;
}

void call_reader_close(struct call_reader *cr)
{
    ADDR_MAP_FOREACH(&cr->threads, slot)
    {
        struct call_thread *t = slot->value;
        while (t->depth)
            free_values(&t->stack[--t->depth]);
        free(t->stack);
        free(t);
    }
    addr_map_free(&cr->threads);
    rec_reader_close(&cr->file);
    memset(cr, 0, sizeof(*cr));
    cr->file.fd = -1;
}
