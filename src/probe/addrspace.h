/* What calltrace changed in one address space: its breakpoints and its scratch pages.
 * Shared by processes that share memory (a vfork child until it execs), copied on fork. */
#ifndef CALLTRACE_PROBE_ADDRSPACE_H
#define CALLTRACE_PROBE_ADDRSPACE_H

#include <stdbool.h>
#include <stdint.h>

#include "symbols/proc_maps.h"
#include "util/addr_map.h"

enum bp_kind {
    BP_ENTRY = 1,  /* a traced function starts here */
    BP_RETURN = 2, /* a return address of a traced call */
};

struct breakpoint {
    uint64_t addr;
    uint64_t resume; /* where the thread continues: the out-of-line copy or a jump target */
    uint32_t func;   /* BP_ENTRY: the function's id */
    uint8_t kinds;   /* enum bp_kind; 0: a return site that could not be instrumented */
    uint8_t orig;    /* the byte the int3 replaced */
    bool loop_head;  /* BP_ENTRY: the function's own body jumps back to its entry */
};

struct scratch_chunk {
    uint64_t base;
    uint64_t size;
    uint64_t used;
    struct scratch_chunk *next;
};

struct addrspace {
    unsigned refs;
    struct addr_map breakpoints; /* addr -> struct breakpoint */
    struct scratch_chunk *chunks;
    uint64_t syscall_gadget;     /* "syscall; int3" in the first chunk, 0 before it exists */
    struct mapping_list maps;    /* last /proc/PID/maps read, refreshed when it has no answer */
};

struct addrspace *addrspace_new(void);
struct addrspace *addrspace_ref(struct addrspace *as);
void addrspace_unref(struct addrspace *as);
/* A deep copy for a forked child: same addresses, its own tables. */
struct addrspace *addrspace_copy(const struct addrspace *as);

static inline struct breakpoint *breakpoint_at(const struct addrspace *as, uint64_t addr)
{
    return addr_map_get(&as->breakpoints, addr);
}

#endif
