#include "analysis/replay.h"

#include <fcntl.h>
#include <bsd/stdlib.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

static const struct call_reader_ops replay_call_ops;

int replay_open(struct replay *r, const char *record_path)
{
    char why[256];
    memset(r, 0, sizeof(*r));
    if (call_reader_open(&r->calls, AT_FDCWD, record_path, &replay_call_ops, r, why, sizeof(why)) <
        0) {
        err_msg("%s: %s", record_path, why);
        return -1;
    }
    r->complete = r->calls.file.header.flags & REC_F_COMPLETE;
    r->dropped = r->calls.file.header.dropped_calls;
    if (addr_map_init(&r->open_counts, 1024) < 0 || addr_map_init(&r->sym_by_hash, 1024) < 0) {
        err_msg("%s: out of memory", record_path);
        replay_close(r);
        return -1;
    }
    return 0;
}

static uint32_t ids_get(const struct replay_ids *ids, uint32_t id)
{
    if (id < ids->ndense)
        return ids->dense[id];
    uintptr_t v = ids->sparse.slots ? (uintptr_t)addr_map_get(&ids->sparse, id) : 0;
    return v ? (uint32_t)(v - 1) : UINT32_MAX;
}

/* Dense up to a few times the ids named so far: the engine's ids count from 0. */
static bool ids_dense_enough(const struct replay_ids *ids, uint32_t id)
{
    return id < ids->ndense || id / 4 <= ids->named + 1024;
}

static int ids_put(struct replay_ids *ids, uint32_t id, uint32_t index)
{
    ids->named++;
    if (!ids_dense_enough(ids, id)) {
        if (!ids->sparse.slots && addr_map_init(&ids->sparse, 64) < 0)
            return -1;
        return addr_map_put(&ids->sparse, id, (void *)((uintptr_t)index + 1));
    }
    if (id >= ids->ndense) {
        size_t cap = ids->ndense ? ids->ndense : 64;
        while (cap <= id)
            cap *= 2;
        uint32_t *dense = reallocarray(ids->dense, cap, sizeof(*dense));
        if (!dense)
            return -1;
        for (size_t i = ids->ndense; i < cap; i++)
            dense[i] = UINT32_MAX;
        ids->dense = dense;
        ids->ndense = cap;
    }
    ids->dense[id] = index;
    return 0;
}

static void ids_free(struct replay_ids *ids)
{
    free(ids->dense);
    addr_map_free(&ids->sparse);
}

/* Where process pid loaded image idx, once per pair: processes load an image or two each. */
static int add_load(struct replay *r, uint32_t pid, uint32_t idx, uint64_t bias)
{
    for (size_t i = 0; i < r->nloads; i++)
        if (r->loads[i].pid == pid && r->loads[i].image == idx) {
            r->loads[i].bias = bias; /* loaded again (dlopen after dlclose): the latest */
            return 0;
        }
    struct replay_load *loads = reallocarray(r->loads, r->nloads + 1, sizeof(*loads));
    if (!loads)
        return -1;
    r->loads = loads;
    loads[r->nloads++] = (struct replay_load){pid, idx, bias};
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
    return add_load(r, im->hdr.tid, (uint32_t)idx, im->bias) < 0
               ? -1
               : ids_put(&r->image_ids, im->image, (uint32_t)idx);
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
    syms[s] = (struct replay_sym){.name = strndup(name, len),
                                  .image = image,
                                  .link_addr = link_addr,
                                  .next_same_hash = first ? (uint32_t)(first - 1) : REPLAY_NO_SYM};
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
    uint32_t image = ids_get(&r->image_ids, f->image);
    if (image == UINT32_MAX && (image = unknown_image(r)) == UINT32_MAX)
        return -1;
    uint64_t link = f->addr - r->images[image].bias;
    uint32_t s = intern_sym(r, image, name, len, link);
    if (s == REPLAY_NO_SYM)
        return -1;
    if (f->hdr.flags & FUNC_BREAKPOINT)
        r->syms[s].breakpoint = true;
    return ids_put(&r->func_sym, f->func, s);
}

static uint32_t sym_of(struct replay *r, uint32_t func)
{
    uint32_t known = ids_get(&r->func_sym, func);
    if (known != REPLAY_NO_SYM)
        return known;
    /* an entry of a function the record never described: keep the call, name it by its id */
    char name[32];
    int len = snprintf(name, sizeof(name), "func#%u", func);
    uint32_t image = unknown_image(r);
    return image == UINT32_MAX ? REPLAY_NO_SYM : intern_sym(r, image, name, (size_t)len, 0);
}

static uint64_t open_key(const struct call_thread *t, uint32_t sym)
{
    return (uint64_t)t->tid << 32 | sym;
}

/* Names the call and counts it open, for the recursion test. */
static int on_enter(void *ctx, struct call_reader *cr, struct call_thread *t, struct call_frame *f)
{
    struct replay *r = ctx;
    (void)cr;
    f->sym = sym_of(r, f->func);
    if (f->sym == REPLAY_NO_SYM)
        return -1;
    uint64_t key = open_key(t, f->sym);
    uintptr_t open = (uintptr_t)addr_map_get(&r->open_counts, key);
    if (addr_map_put(&r->open_counts, key, (void *)(open ? open + 1 : 2)) < 0)
        return -1;
    f->recursive = open > 1;
    return r->ops->enter ? r->ops->enter(r->ctx, r, t, f) : 0;
}

static int on_exit_call(void *ctx, struct call_reader *cr, const struct call_done *c)
{
    struct replay *r = ctx;
    (void)cr;
    uint64_t key = open_key(c->thread, c->frame->sym);
    uintptr_t open = (uintptr_t)addr_map_get(&r->open_counts, key);
    if (open > 2)
        addr_map_put(&r->open_counts, key, (void *)(open - 1)); /* replaces: cannot fail */
    else
        addr_map_del(&r->open_counts, key);
    return r->ops->exit ? r->ops->exit(r->ctx, r, c) : 0;
}

static int on_values(void *ctx, struct call_reader *cr, struct call_thread *t, struct call_frame *f,
                     const struct rec_hdr *h)
{
    struct replay *r = ctx;
    (void)cr;
    return r->ops->values ? r->ops->values(r->ctx, r, t, f, h) : 0;
}

static int pass_on(struct replay *r, const struct rec_hdr *h)
{
    return r->ops->record ? r->ops->record(r->ctx, r, h) : 0;
}

static int on_record(void *ctx, struct call_reader *cr, const struct rec_hdr *h)
{
    struct replay *r = ctx;
    int rc;
    (void)cr;
    switch (h->type) {
    case REC_FUNC:
        rc = add_func(r, (const struct rec_func *)h);
        return rc ? rc : pass_on(r, h);
    case REC_IMAGE:
        rc = add_image(r, (const struct rec_image *)h);
        return rc ? rc : pass_on(r, h);
    default:
        return 0;
    }
}

static const struct call_reader_ops replay_call_ops = {
    .record = on_record, .enter = on_enter, .values = on_values, .exit = on_exit_call};

int replay_run(struct replay *r, const struct replay_ops *ops, void *ctx)
{
    static const struct replay_ops none;
    r->ops = ops ? ops : &none;
    r->ctx = ctx;
    int rc = call_reader_run(&r->calls);
    r->events = r->calls.events;
    r->damaged = r->calls.damaged;
    if (rc < 0)
        err_msg("out of memory while reading the record");
    return rc;
}

void replay_close(struct replay *r)
{
    call_reader_close(&r->calls);
    addr_map_free(&r->open_counts);
    addr_map_free(&r->sym_by_hash);
    for (size_t i = 0; i < r->nsyms; i++)
        free(r->syms[i].name);
    for (size_t i = 0; i < r->nimages; i++)
        free(r->images[i].path);
    free(r->syms);
    free(r->images);
    free(r->loads);
    ids_free(&r->func_sym);
    ids_free(&r->image_ids);
    memset(r, 0, sizeof(*r));
    r->calls.file.fd = -1;
}
