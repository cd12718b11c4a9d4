#include "probe/addrspace.h"

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
    while (as->chunks) {
        struct scratch_chunk *next = as->chunks->next;
        free(as->chunks);
        as->chunks = next;
    }
    free(as);
}

struct addrspace *addrspace_copy(const struct addrspace *as)
{
    struct addrspace *copy = addrspace_new();
    if (!copy)
        return NULL;
    copy->syscall_gadget = as->syscall_gadget;
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
