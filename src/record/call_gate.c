#include "record/call_gate.h"

#include <stdlib.h>
#include <string.h>

struct gate_frame {
    uint64_t ticks;     /* entry time */
    size_t held_offset; /* where its records start in the held bytes */
    bool too_deep;      /* --max-depth: never written */
    bool held;          /* its entry waits in the held bytes */
};

struct gate_thread {
    struct gate_frame *frames;
    size_t depth, cap;
    unsigned char *held;
    size_t held_len, held_cap;
};

int call_gate_init(struct call_gate *g, uint32_t max_depth, uint64_t min_ticks)
{
    memset(g, 0, sizeof(*g));
    g->max_depth = max_depth;
    g->min_ticks = min_ticks;
    return addr_map_init(&g->threads, 64);
}

static void thread_free(struct gate_thread *t)
{
    free(t->frames);
    free(t->held);
    free(t);
}

void call_gate_free(struct call_gate *g)
{
    ADDR_MAP_FOREACH(&g->threads, slot)
    thread_free(slot->value);
    addr_map_free(&g->threads);
}

static struct gate_thread *thread_of(struct call_gate *g, uint32_t tid)
{
    struct gate_thread *t = addr_map_get(&g->threads, tid);
    if (t)
        return t;
    t = calloc(1, sizeof(*t));
    if (t && addr_map_put(&g->threads, tid, t) < 0) {
        free(t);
        return NULL;
    }
    return t;
}

static bool hold(struct gate_thread *t, const void *record, size_t size)
{
    if (t->held_len + size > t->held_cap) {
        size_t cap = t->held_cap ? t->held_cap * 2 : 4096;
        while (cap < t->held_len + size)
            cap *= 2;
        unsigned char *p = realloc(t->held, cap);
        if (!p)
            return false;
        t->held = p;
        t->held_cap = cap;
    }
    memcpy(t->held + t->held_len, record, size);
    t->held_len += size;
    return true;
}

static struct gate_frame *push_frame(struct gate_thread *t)
{
    if (t->depth == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        struct gate_frame *f = reallocarray(t->frames, cap, sizeof(*f));
        if (!f)
            return NULL;
        t->frames = f;
        t->cap = cap;
    }
    return &t->frames[t->depth++];
}

/* Out of memory, the gate lets records through: a fuller record beats a lost one. */
enum gate_verdict call_gate_enter(struct call_gate *g, uint32_t tid, uint64_t ticks,
                                  const void *record, size_t size)
{
    struct gate_thread *t = thread_of(g, tid);
    struct gate_frame *f = t ? push_frame(t) : NULL;
    if (!f)
        return GATE_WRITE;
    *f = (struct gate_frame){.ticks = ticks, .held_offset = t->held_len};
    if (g->max_depth && t->depth > g->max_depth) {
        f->too_deep = true;
        return GATE_DROP;
    }
    if (!g->min_ticks)
        return GATE_WRITE;
    f->held = hold(t, record, size);
    return f->held ? GATE_HOLD : GATE_WRITE;
}

enum gate_verdict call_gate_data(struct call_gate *g, uint32_t tid, const void *record, size_t size)
{
    struct gate_thread *t = addr_map_get(&g->threads, tid);
    if (!t || !t->depth)
        return GATE_WRITE;
    struct gate_frame *f = &t->frames[t->depth - 1];
    if (f->too_deep)
        return GATE_DROP;
    if (!f->held)
        return GATE_WRITE;
    return hold(t, record, size) ? GATE_HOLD : GATE_WRITE;
}

enum gate_verdict call_gate_exit(struct call_gate *g, uint32_t tid, uint64_t ticks)
{
    struct gate_thread *t = addr_map_get(&g->threads, tid);
    if (!t || !t->depth)
        return GATE_WRITE;
    struct gate_frame f = t->frames[--t->depth];
    if (f.too_deep) {
        g->dropped_deep++;
        return GATE_DROP;
    }
    if (!f.held)
        return GATE_WRITE;
    if (ticks - f.ticks < g->min_ticks) {
        t->held_len = f.held_offset;
        g->dropped_short++;
        return GATE_DROP;
    }
    /* Kept: every waiting ancestor is written with it, so none of them waits any more. */
    for (size_t i = 0; i < t->depth; i++)
        t->frames[i].held = false;
    return GATE_WRITE;
}

const void *call_gate_flush(struct call_gate *g, uint32_t tid, size_t *size)
{
    struct gate_thread *t = addr_map_get(&g->threads, tid);
    *size = t ? t->held_len : 0;
    if (!*size)
        return NULL;
    t->held_len = 0;
    return t->held;
}

void call_gate_thread_end(struct call_gate *g, uint32_t tid)
{
    struct gate_thread *t = addr_map_get(&g->threads, tid);
    if (!t)
        return;
    addr_map_del(&g->threads, tid);
    thread_free(t);
}
