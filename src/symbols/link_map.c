#include "symbols/link_map.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "remote/memory.h"

/* Bounds against a corrupt or cyclic list: a program with more is not traced further. */
#define MAX_OBJECTS 4096
#define MAX_NAMESPACES 16

struct r_debug_head {
    int32_t version;
    int32_t pad;
    uint64_t map;
    uint64_t brk;
    int32_t state;
    int32_t pad2;
    uint64_t ldbase;
    uint64_t next; /* r_debug_extended (version 2): the next namespace's r_debug */
};

struct link_map_head {
    uint64_t addr;
    uint64_t name;
    uint64_t ld;
    uint64_t next;
    uint64_t prev;
};

/* A NUL-terminated string, read page by page (the end of its mapping may follow it closely). */
static char *read_string(int fd, uint64_t addr)
{
    char buf[PATH_MAX];
    size_t have = 0;
    while (have < sizeof(buf) - 1) {
        size_t chunk = 4096 - ((addr + have) & 4095);
        if (chunk > sizeof(buf) - 1 - have)
            chunk = sizeof(buf) - 1 - have;
        if (mem_read(fd, addr + have, buf + have, chunk) < 0)
            return NULL;
        char *nul = memchr(buf + have, '\0', chunk);
        if (nul)
            return strdup(buf);
        have += chunk;
    }
    buf[have] = '\0';
    return strdup(buf);
}

static int add_object(struct link_map_list *list, const struct link_map_head *lm, uint64_t at,
                      int fd)
{
    struct loaded_object *more =
        reallocarray(list->objects, list->count + 1, sizeof(*list->objects));
    if (!more)
        return -1;
    list->objects = more;
    char *path = lm->name ? read_string(fd, lm->name) : strdup("");
    if (!path)
        return -1;
    list->objects[list->count++] = (struct loaded_object){at, lm->addr, path};
    return 0;
}

int link_map_read(int mem_fd, uint64_t r_debug, struct link_map_list *out)
{
    memset(out, 0, sizeof(*out));
    struct r_debug_head rd = {0};
    if (mem_read(mem_fd, r_debug, &rd, sizeof(rd)) < 0 &&
        mem_read(mem_fd, r_debug, &rd, offsetof(struct r_debug_head, next)) < 0)
        return -1;
    out->state = rd.state;
    if (rd.state != LINK_MAP_CONSISTENT)
        return 0;
    for (int ns = 0; ns < MAX_NAMESPACES; ns++) {
        uint64_t at = rd.map;
        while (at && out->count < MAX_OBJECTS) {
            struct link_map_head lm;
            if (mem_read(mem_fd, at, &lm, sizeof(lm)) < 0 || add_object(out, &lm, at, mem_fd) < 0)
                return -1;
            at = lm.next;
        }
        if (rd.version < 2 || !rd.next || mem_read(mem_fd, rd.next, &rd, sizeof(rd)) < 0)
            break;
    }
    return 0;
}

void link_map_free(struct link_map_list *list)
{
    for (size_t i = 0; i < list->count; i++)
        free(list->objects[i].path);
    free(list->objects);
    memset(list, 0, sizeof(*list));
}
