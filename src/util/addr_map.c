#include "util/addr_map.h"

#include <stdlib.h>

static size_t hash_key(uint64_t key)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return (size_t)key;
}

int addr_map_init(struct addr_map *map, size_t capacity_hint)
{
    size_t size = 16;
    while (size < capacity_hint * 2)
        size <<= 1;
    map->slots = calloc(size, sizeof(*map->slots));
    if (!map->slots)
        return -1;
    map->mask = size - 1;
    map->count = 0;
    return 0;
}

void addr_map_free(struct addr_map *map)
{
    free(map->slots);
    map->slots = NULL;
    map->mask = 0;
    map->count = 0;
}

static struct addr_map_slot *find_slot(const struct addr_map *map, uint64_t key)
{
    size_t i = hash_key(key) & map->mask;
    while (map->slots[i].value && map->slots[i].key != key)
        i = (i + 1) & map->mask;
    return &map->slots[i];
}

void *addr_map_get(const struct addr_map *map, uint64_t key)
{
    if (!map->slots)
        return NULL;
    return find_slot(map, key)->value;
}

static int grow(struct addr_map *map)
{
    struct addr_map bigger;
    if (addr_map_init(&bigger, (map->mask + 1)) < 0)
        return -1;
    for (size_t i = 0; i <= map->mask; i++)
        if (map->slots[i].value)
            *find_slot(&bigger, map->slots[i].key) = map->slots[i];
    bigger.count = map->count;
    free(map->slots);
    *map = bigger;
    return 0;
}

int addr_map_put(struct addr_map *map, uint64_t key, void *value)
{
    if (!map->slots && addr_map_init(map, 16) < 0)
        return -1;
    if ((map->count + 1) * 2 > map->mask + 1 && grow(map) < 0)
        return -1;
    struct addr_map_slot *slot = find_slot(map, key);
    if (!slot->value)
        map->count++;
    slot->key = key;
    slot->value = value;
    return 0;
}

void addr_map_del(struct addr_map *map, uint64_t key)
{
    if (!map->slots)
        return;
    struct addr_map_slot *slot = find_slot(map, key);
    if (!slot->value)
        return;
    slot->value = NULL;
    map->count--;
    /* Re-insert the rest of the cluster so that later lookups do not stop at the hole. */
    size_t i = ((size_t)(slot - map->slots) + 1) & map->mask;
    while (map->slots[i].value) {
        struct addr_map_slot moved = map->slots[i];
        map->slots[i].value = NULL;
        *find_slot(map, moved.key) = moved;
        i = (i + 1) & map->mask;
    }
}
