/* What calltrace changed in one address space: its breakpoints and its scratch pages.
 * Shared by processes that share memory (a vfork child until it execs), copied on fork. */
#ifndef CALLTRACE_TRACER_ADDRSPACE_H
#define CALLTRACE_TRACER_ADDRSPACE_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/ring_abi.h"
#include "symbols/elf_image.h"
#include "symbols/proc_maps.h"
#include "util/addr_map.h"

enum bp_kind {
    BP_ENTRY = 1,  /* a traced function starts here */
    BP_RETURN = 2, /* a return address of a traced call */
    BP_HOOK = 4,   /* -l: the dynamic linker's notification, or a library's first initializer */
};

struct breakpoint {
    uint64_t addr;
    uint64_t resume; /* where the thread continues: the out-of-line copy or a jump target */
    uint32_t func;   /* BP_ENTRY: the function's id */
    uint8_t kinds;   /* enum bp_kind; 0: a return site that could not be instrumented */
    uint8_t orig;    /* the byte the int3 replaced */
    bool loop_head;  /* BP_ENTRY: the function's own body jumps back to its entry */
    bool lib_call;   /* BP_ENTRY: -L, recorded only when the program calls it (caller_ranges) */
};

struct scratch_chunk {
    uint64_t base;
    uint64_t size;
    uint64_t used;
    struct scratch_chunk *next;
};

/* -l: a shared object the dynamic linker lists in this address space. */
struct traced_lib {
    uint64_t map;              /* its struct link_map in the program: its identity, with bias */
    uint64_t bias;             /* l_addr */
    uint64_t lo, hi;           /* its executable segments, runtime addresses; 0: unknown */
    uint32_t func_lo, func_hi; /* the function ids given to it */
    uint32_t image_id;
    bool traced;        /* matched by -l, or -L's (the others are only remembered as seen) */
    bool lib_calls;     /* -L: only its exported functions, recorded when the program calls */
    uint64_t init_hook; /* IFUNCs wait for relocation: resolved when this is hit, 0: none */
    struct ifunc_symbol *pending; /* those IFUNCs */
    size_t npending;
};

/* The dynamic linker's debugger interface in this address space (<link.h>). */
struct linker_watch {
    uint64_t r_debug; /* runtime address of _r_debug, 0: libraries are not watched */
    uint64_t hook;    /* _dl_debug_state, called at every change of the list */
    uint64_t ld_base; /* the dynamic linker's own bias: never traced */
    bool started;     /* the start-up libraries were seen (all later ones come by dlopen) */
    struct traced_lib *libs;
    size_t nlibs;
};

/* -L: the code whose calls into libraries are the program's: its executable and the -l
 * libraries, runtime [lo, hi); an empty one (hi 0) is free. The inject engine keeps a copy in the
 * program, which its trampolines read (arch/ring_abi.h REGION_CALLERS). */
struct caller_ranges {
    struct {
        uint64_t lo, hi;
    } r[REGION_CALLERS_MAX];
    size_t n;
};

/* Is addr in one of them? */
bool caller_ranges_has(const struct caller_ranges *c, uint64_t addr);
/* Adds [lo, hi) unless it is there already (false: no room), or empties it. */
bool caller_ranges_add(struct caller_ranges *c, uint64_t lo, uint64_t hi);
void caller_ranges_remove(struct caller_ranges *c, uint64_t lo, uint64_t hi);

struct addrspace {
    unsigned refs;
    struct addr_map breakpoints; /* addr -> struct breakpoint */
    struct scratch_chunk *chunks;
    /* detaching: a frame may still run in the chunks (tracer/stack_scan.h), they stay mapped */
    bool chunks_kept;
    uint64_t syscall_gadget;  /* "syscall; int3" in the first chunk, 0 before it exists */
    struct mapping_list maps; /* last /proc/PID/maps read, refreshed when it has no answer */
    /* -l: the shared libraries, and the hook that finds them */
    struct linker_watch linker;
    struct caller_ranges callers; /* -L */
};

struct addrspace *addrspace_new(void);
struct addrspace *addrspace_ref(struct addrspace *as);
void addrspace_unref(struct addrspace *as);
/* A deep copy for a forked child: same addresses, its own tables. */
struct addrspace *addrspace_copy(const struct addrspace *as);

/* Frees the IFUNCs a library still waits for. */
void traced_lib_clear(struct traced_lib *lib);

static inline struct breakpoint *breakpoint_at(const struct addrspace *as, uint64_t addr)
{
    return addr_map_get(&as->breakpoints, addr);
}

#endif
