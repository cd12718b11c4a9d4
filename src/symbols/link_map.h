/* The dynamic linker's list of loaded objects, read from a live process through its debugger
 * interface (<link.h>): struct r_debug at the dynamic linker's _r_debug, and the chain of
 * struct link_map it points to. Only the public heads of these structures are read: their
 * layout is the ABI debuggers rely on.
 *
 *   _r_debug: r_version, r_map ──> link_map {l_addr, l_name, l_ld, l_next, l_prev} ──> ...
 *             r_brk (called at each change), r_state, r_ldbase, [r_next: next namespace, v2]
 */
#ifndef CALLTRACE_SYMBOLS_LINK_MAP_H
#define CALLTRACE_SYMBOLS_LINK_MAP_H

#include <stddef.h>
#include <stdint.h>

/* r_state: the list is being changed (ADD, DELETE) or is whole again (CONSISTENT). */
enum { LINK_MAP_CONSISTENT = 0, LINK_MAP_ADD = 1, LINK_MAP_DELETE = 2 };

struct loaded_object {
    uint64_t map;  /* address of its struct link_map */
    uint64_t bias; /* l_addr */
    char *path;    /* l_name; "" for the executable and the vDSO */
};

struct link_map_list {
    int state;
    struct loaded_object *objects;
    size_t count;
};

/* Reads r_state and, when whole (CONSISTENT), every namespace's list. Returns 0, or -1 when the
 * memory cannot be read (the list may be incomplete). */
int link_map_read(int mem_fd, uint64_t r_debug, struct link_map_list *out);
void link_map_free(struct link_map_list *list);

#endif
