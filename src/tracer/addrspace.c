#include "tracer/addrspace.h"

#include <stdlib.h>
#include <string.h>

struct addrspace *addrspace_new(void)
{
    struct addrspace *as = calloc(1, sizeof(*as));
    if (!as)
        return NULL;
    if (addr_map_init(&as->breakpoints, 1024) < 0) {
        free(as);
        return NULL;
    }
    as->refs = 1;
    return as;
}

struct addrspace *addrspace_ref(struct addrspace *as)
{
    as->refs++;
    return as;
}

void addrspace_unref(struct addrspace *as)
{
    if (!as || --as->refs)
        return;
    ADDR_MAP_FOREACH(&as->breakpoints, slot)
    free(slot->value);
    addr_map_free(&as->breakpoints);
    maps_free(&as->maps);
    for (size_t i = 0; i < as->linker.nlibs; i++)
        traced_lib_clear(&as->linker.libs[i]);
    free(as->linker.libs);
    while (as->chunks) {
        struct scratch_chunk *next = as->chunks->next;
        free(as->chunks);
        as->chunks = next;
    }
    free(as);
}

void traced_lib_clear(struct traced_lib *lib)
{
    for (size_t i = 0; i < lib->npending; i++)
        free(lib->pending[i].name);
    free(lib->pending);
    lib->pending = NULL;
    lib->npending = 0;
}

static int copy_pending(struct traced_lib *dst, const struct traced_lib *src)
{
    dst->pending = calloc(src->npending ? src->npending : 1, sizeof(*dst->pending));
    if (!dst->pending)
        return -1;
    for (size_t i = 0; i < src->npending; i++) {
        dst->pending[i].resolver = src->pending[i].resolver;
        dst->pending[i].name = strdup(src->pending[i].name);
        if (!dst->pending[i].name)
            return -1;
    }
    return 0;
}

/* A forked child has the libraries its parent had, and waits for the same notifications. */
static int copy_linker(struct linker_watch *dst, const struct linker_watch *src)
{
    *dst = *src;
    dst->libs = NULL;
    dst->nlibs = 0;
    if (!src->nlibs)
        return 0;
    dst->libs = calloc(src->nlibs, sizeof(*dst->libs));
    if (!dst->libs)
        return -1;
    for (size_t i = 0; i < src->nlibs; i++) {
        dst->libs[i] = src->libs[i];
        dst->libs[i].pending = NULL;
        dst->nlibs++;
        if (src->libs[i].npending && copy_pending(&dst->libs[i], &src->libs[i]) < 0)
            return -1;
    }
    return 0;
}

struct addrspace *addrspace_copy(const struct addrspace *as)
{
    struct addrspace *copy = addrspace_new();
    if (!copy)
        return NULL;
    copy->syscall_gadget = as->syscall_gadget;
    copy->callers = as->callers;
    if (copy_linker(&copy->linker, &as->linker) < 0) {
        addrspace_unref(copy);
        return NULL;
    }
    ADDR_MAP_FOREACH(&as->breakpoints, slot)
    {
        struct breakpoint *bp = malloc(sizeof(*bp));
        if (!bp || addr_map_put(&copy->breakpoints, slot->key, bp) < 0) {
            free(bp);
            addrspace_unref(copy);
            return NULL;
        }
        *bp = *(struct breakpoint *)slot->value;
    }
    struct scratch_chunk **tail = &copy->chunks;
    for (const struct scratch_chunk *c = as->chunks; c; c = c->next) {
        struct scratch_chunk *dup = malloc(sizeof(*dup));
        if (!dup) {
            addrspace_unref(copy);
            return NULL;
        }
        *dup = *c;
        dup->next = NULL;
        *tail = dup;
        tail = &dup->next;
    }
    return copy;
}

bool caller_ranges_has(const struct caller_ranges *c, uint64_t addr)
{
    for (size_t i = 0; i < c->n; i++)
        if (addr >= c->r[i].lo && addr < c->r[i].hi)
            return true;
    return false;
}

bool caller_ranges_add(struct caller_ranges *c, uint64_t lo, uint64_t hi)
{
    for (size_t k = 0; k < c->n; k++)
        if (c->r[k].lo == lo && c->r[k].hi == hi)
            return true;
    size_t i = 0;
    while (i < c->n && c->r[i].hi)
        i++;
    if (i == REGION_CALLERS_MAX)
        return false;
    c->r[i].lo = lo;
    c->r[i].hi = hi;
    if (i == c->n)
        c->n++;
    return true;
}

void caller_ranges_remove(struct caller_ranges *c, uint64_t lo, uint64_t hi)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->r[i].lo == lo && c->r[i].hi == hi)
            c->r[i].lo = c->r[i].hi = 0;
}
