#include "analysis/replay.h"

#include <bsd/stdlib.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

static int64_t to_ns(const struct replay *r, uint64_t ticks)
{
    return clock_ticks_to_ns(&r->start, r->complete ? &r->end : NULL, r->ns_per_tick, ticks);
}

static void saw_time(struct replay *r, int64_t ns)
{
    if (r->first_ns > ns || !r->events)
        r->first_ns = ns;
    if (r->last_ns < ns)
        r->last_ns = ns;
}

int replay_open(struct replay *r, const char *record_path)
{
    char why[256];
    memset(r, 0, sizeof(*r));
    if (rec_reader_open(&r->reader, record_path, why, sizeof(why)) < 0) {
        err_msg("%s: %s", record_path, why);
        return -1;
    }
    r->start = r->reader.header.start;
    r->end = r->reader.header.end;
    r->ns_per_tick = r->reader.header.ns_per_tick;
    r->complete = r->reader.header.flags & REC_F_COMPLETE;
    r->dropped = r->reader.header.dropped_calls;
    if (addr_map_init(&r->threads, 64) < 0 || addr_map_init(&r->open_counts, 1024) < 0 ||
        addr_map_init(&r->sym_by_hash, 1024) < 0) {
        err_msg("%s: out of memory", record_path);
        replay_close(r);
        return -1;
    }
    return 0;
}

/* Grows *arr (of elem bytes each) to hold index, zeroing the new part. */
static int grow_to(void **arr, size_t *n, size_t index, size_t elem)
{
    if (index < *n)
        return 0;
    size_t cap = *n ? *n : 64;
    while (cap <= index)
        cap *= 2;
    char *p = reallocarray(*arr, cap, elem);
    if (!p)
        return -1;
    memset(p + *n * elem, 0, (cap - *n) * elem);
    *arr = p;
    *n = cap;
    return 0;
}

static int add_image(struct replay *r, const struct rec_image *im)
{
    uint32_t len;
    const char *path = rec_name(&im->hdr, &len);
    size_t idx = 0;
    while (idx < r->nimages &&
           !(strlen(r->images[idx].path) == len && memcmp(r->images[idx].path, path, len) == 0))
        idx++;
    if (idx == r->nimages) {
        struct replay_image *images = reallocarray(r->images, r->nimages + 1, sizeof(*images));
        if (!images)
            return -1;
        r->images = images;
        images[idx] = (struct replay_image){strndup(path, len), im->bias};
        if (!images[idx].path)
            return -1;
        r->nimages++;
    }
    size_t n = r->nimage_ids;
    if (grow_to((void **)&r->image_ids, &n, im->image, sizeof(*r->image_ids)) < 0)
        return -1;
    /* new slots read as "no image" until named */
    for (size_t i = r->nimage_ids; i < n; i++)
        r->image_ids[i] = UINT32_MAX;
    r->nimage_ids = n;
    r->image_ids[im->image] = (uint32_t)idx;
    return 0;
}

static uint64_t name_hash(uint32_t image, const char *name, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ULL ^ image;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)name[i]) * 0x100000001b3ULL;
    return h;
}

/* The symbol for (image, name), created on first sight. */
static uint32_t intern_sym(struct replay *r, uint32_t image, const char *name, size_t len,
                           uint64_t link_addr)
{
    uint64_t h = name_hash(image, name, len);
    uintptr_t first = (uintptr_t)addr_map_get(&r->sym_by_hash, h);
    for (uint32_t s = first ? (uint32_t)(first - 1) : REPLAY_NO_SYM; s != REPLAY_NO_SYM;
         s = r->syms[s].next_same_hash) {
        if (r->syms[s].image == image && strlen(r->syms[s].name) == len &&
            memcmp(r->syms[s].name, name, len) == 0)
            return s;
    }
    struct replay_sym *syms = reallocarray(r->syms, r->nsyms + 1, sizeof(*syms));
    if (!syms)
        return REPLAY_NO_SYM;
    r->syms = syms;
    uint32_t s = (uint32_t)r->nsyms;
    syms[s] = (struct replay_sym){strndup(name, len), image, link_addr,
                                  first ? (uint32_t)(first - 1) : REPLAY_NO_SYM};
    if (!syms[s].name || addr_map_put(&r->sym_by_hash, h, (void *)(uintptr_t)(s + 1)) < 0)
        return REPLAY_NO_SYM;
    r->nsyms++;
    return s;
}

/* Functions of an image the record never named go to one image called "?". */
static uint32_t unknown_image(struct replay *r)
{
    for (size_t i = 0; i < r->nimages; i++)
        if (strcmp(r->images[i].path, "?") == 0)
            return (uint32_t)i;
    struct replay_image *images = reallocarray(r->images, r->nimages + 1, sizeof(*images));
    if (!images)
        return UINT32_MAX;
    r->images = images;
    images[r->nimages] = (struct replay_image){strdup("?"), 0};
    return images[r->nimages].path ? (uint32_t)r->nimages++ : UINT32_MAX;
}

static int add_func(struct replay *r, const struct rec_func *f)
{
    uint32_t len;
    const char *name = rec_name(&f->hdr, &len);
    uint32_t image = f->image < r->nimage_ids ? r->image_ids[f->image] : UINT32_MAX;
    if (image == UINT32_MAX && (image = unknown_image(r)) == UINT32_MAX)
        return -1;
    uint64_t link = f->addr - r->images[image].bias;
    uint32_t s = intern_sym(r, image, name, len, link);
    size_t n = r->nfunc_ids;
    if (s == REPLAY_NO_SYM || grow_to((void **)&r->func_sym, &n, f->func, sizeof(uint32_t)) < 0)
        return -1;
    for (size_t i = r->nfunc_ids; i < n; i++)
        r->func_sym[i] = REPLAY_NO_SYM;
    r->nfunc_ids = n;
    r->func_sym[f->func] = s;
    return 0;
}

static uint32_t sym_of(struct replay *r, uint32_t func)
{
    if (func < r->nfunc_ids && r->func_sym[func] != REPLAY_NO_SYM)
        return r->func_sym[func];
    /* an entry of a function the record never described: keep the call, name it by its id */
    char name[32];
    int len = snprintf(name, sizeof(name), "func#%u", func);
    uint32_t image = unknown_image(r);
    return image == UINT32_MAX ? REPLAY_NO_SYM : intern_sym(r, image, name, (size_t)len, 0);
}

static struct replay_thread *thread_of(struct replay *r, uint32_t pid, uint32_t tid, int *rc)
{
    struct replay_thread *t = r->last_thread;
    if (t && t->tid == tid)
        goto found;
    t = addr_map_get(&r->threads, tid);
    if (t)
        goto found;
    t = calloc(1, sizeof(*t));
    if (!t || addr_map_put(&r->threads, tid, t) < 0) {
        free(t);
        *rc = -1;
        return NULL;
    }
    t->pid = pid;
    t->tid = tid;
    t->order = r->nthreads++;
    if (r->ops->thread && (*rc = r->ops->thread(r->ctx, r, t)))
        return NULL;
found:
    t->pid = pid; /* exec from a thread renames it to the leader */
    r->last_thread = t;
    return t;
}

static uint64_t open_key(const struct replay_thread *t, uint32_t sym)
{
    return (uint64_t)t->tid << 32 | sym;
}

static int push_frame(struct replay *r, struct replay_thread *t, uint32_t sym, int64_t ns)
{
    if (t->depth == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        struct replay_frame *stack = reallocarray(t->stack, cap, sizeof(*stack));
        if (!stack)
            return -1;
        t->stack = stack;
        t->cap = cap;
    }
    uint64_t key = open_key(t, sym);
    uintptr_t open = (uintptr_t)addr_map_get(&r->open_counts, key);
    if (addr_map_put(&r->open_counts, key, (void *)(open ? open + 1 : 2)) < 0)
        return -1;
    struct replay_frame *f = &t->stack[t->depth++];
    *f = (struct replay_frame){.sym = sym, .recursive = open > 1, .start_ns = ns};
    return r->ops->enter ? r->ops->enter(r->ctx, r, t, f) : 0;
}

static int pop_frame(struct replay *r, struct replay_thread *t, int64_t end_ns, unsigned flags)
{
    struct replay_frame *f = &t->stack[t->depth - 1];
    uint64_t key = open_key(t, f->sym);
    uintptr_t open = (uintptr_t)addr_map_get(&r->open_counts, key);
    if (open > 2)
        addr_map_put(&r->open_counts, key, (void *)(open - 1)); /* replaces: cannot fail */
    else
        addr_map_del(&r->open_counts, key);
    int64_t total = end_ns > f->start_ns ? end_ns - f->start_ns : 0;
    struct replay_call c = {
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
        f[-1].child_ns += total;
    r->calls++;
    int rc = r->ops->exit ? r->ops->exit(r->ctx, r, &c) : 0;
    t->depth--;
    return rc;
}

static int close_thread(struct replay *r, struct replay_thread *t, int64_t ns)
{
    int rc = 0;
    while (t->depth && !rc)
        rc = pop_frame(r, t, ns, EXIT_UNFINISHED);
    return rc;
}

static int on_call(struct replay *r, const struct rec_call *c)
{
    int rc = 0;
    struct replay_thread *t = thread_of(r, c->pid, c->hdr.tid, &rc);
    if (!t)
        return rc;
    int64_t ns = to_ns(r, c->ticks);
    saw_time(r, ns);
    if (c->hdr.type == REC_EXIT)
        return t->depth ? pop_frame(r, t, ns, c->hdr.flags) : 0;
    uint32_t sym = sym_of(r, c->func);
    return sym == REPLAY_NO_SYM ? -1 : push_frame(r, t, sym, ns);
}

static int pass_on(struct replay *r, const struct rec_hdr *h)
{
    return r->ops->record ? r->ops->record(r->ctx, r, h) : 0;
}

static int handle(struct replay *r, const struct rec_hdr *h)
{
    int rc = 0;
    switch (h->type) {
    case REC_ENTER:
    case REC_EXIT:
        return on_call(r, (const struct rec_call *)h);
    case REC_FUNC:
        rc = add_func(r, (const struct rec_func *)h);
        return rc ? rc : pass_on(r, h);
    case REC_IMAGE:
        rc = add_image(r, (const struct rec_image *)h);
        return rc ? rc : pass_on(r, h);
    case REC_ARGS:
    case REC_RETVAL:
        return pass_on(r, h);
    case REC_THREAD: {
        const struct rec_thread *th = (const struct rec_thread *)h;
        struct replay_thread *t = thread_of(r, th->pid, h->tid, &rc);
        int64_t ns = to_ns(r, th->ticks);
        saw_time(r, ns);
        return t ? close_thread(r, t, ns) : rc; /* a reused tid: whatever it left is over */
    }
    case REC_THREAD_END: {
        const struct rec_end *e = (const struct rec_end *)h;
        struct replay_thread *t = addr_map_get(&r->threads, h->tid);
        int64_t ns = to_ns(r, e->ticks);
        saw_time(r, ns);
        return t ? close_thread(r, t, ns) : 0;
    }
    default:
        return 0;
    }
}

/* Threads left open (the record ends early) close in order of appearance, so that consumers
 * see the same order on every replay. */
static int close_all(struct replay *r)
{
    struct replay_thread **order = calloc(r->nthreads ? r->nthreads : 1, sizeof(*order));
    if (!order)
        return -1;
    ADDR_MAP_FOREACH(&r->threads, slot)
    {
        struct replay_thread *t = slot->value;
        order[t->order] = t;
    }
    int rc = 0;
    for (uint32_t i = 0; i < r->nthreads && !rc; i++)
        if (order[i])
            rc = close_thread(r, order[i], r->last_ns);
    free(order);
    return rc;
}

int replay_run(struct replay *r, const struct replay_ops *ops, void *ctx)
{
    r->ops = ops;
    r->ctx = ctx;
    int rc = 0;
    for (const struct rec_hdr *h; !rc && (h = rec_reader_next(&r->reader));) {
        rc = handle(r, h);
        r->events++;
    }
    if (!rc)
        rc = close_all(r);
    r->damaged = r->reader.corrupt ? 2 : r->reader.truncated ? 1 : 0;
    if (rc < 0)
        err_msg("out of memory while reading the record");
    return rc;
}

void replay_close(struct replay *r)
{
    ADDR_MAP_FOREACH(&r->threads, slot)
    {
        struct replay_thread *t = slot->value;
        free(t->stack);
        free(t);
    }
    addr_map_free(&r->threads);
    addr_map_free(&r->open_counts);
    addr_map_free(&r->sym_by_hash);
    for (size_t i = 0; i < r->nsyms; i++)
        free(r->syms[i].name);
    for (size_t i = 0; i < r->nimages; i++)
        free(r->images[i].path);
    free(r->syms);
    free(r->images);
    free(r->func_sym);
    free(r->image_ids);
    rec_reader_close(&r->reader);
    memset(r, 0, sizeof(*r));
}
