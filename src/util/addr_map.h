/* An open-addressing hash map from a 64-bit key (an address, a tid) to a pointer.
 * Hand-written because it sits on the per-stop hot path: one lookup per breakpoint hit and per
 * thread, where a tree's log(n) pointer chases would cost more than the rest of the lookup. */
#ifndef CALLTRACE_UTIL_ADDR_MAP_H
#define CALLTRACE_UTIL_ADDR_MAP_H

#include <stddef.h>
#include <stdint.h>

struct addr_map_slot {
    uint64_t key;
    void *value; /* NULL: empty slot; keys are never removed one by one */
};

struct addr_map {
    struct addr_map_slot *slots;
    size_t mask;
    size_t count;
};

int addr_map_init(struct addr_map *map, size_t capacity_hint);
void addr_map_free(struct addr_map *map);
void *addr_map_get(const struct addr_map *map, uint64_t key);
/* Inserts or replaces; value must not be NULL. Returns -1 on allocation failure. */
int addr_map_put(struct addr_map *map, uint64_t key, void *value);
/* Removes by rebuilding the probe chain behind the slot. */
void addr_map_del(struct addr_map *map, uint64_t key);

#define ADDR_MAP_FOREACH(map, slot)                                                                \
    for (struct addr_map_slot *slot = (map)->slots; slot && slot <= (map)->slots + (map)->mask;    \
         slot++)                                                                                   \
        if (slot->value)

#endif
