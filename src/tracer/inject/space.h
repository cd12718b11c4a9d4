/* One traced process's side of the inject engine: the region shared with it (a memfd mapped in
 * both), its per-thread slots, its code region and the entries it patched. */
#ifndef CALLTRACE_TRACER_INJECT_SPACE_H
#define CALLTRACE_TRACER_INJECT_SPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracer/tracee.h"
#include "tracer/inject/inject.h"
#include "tracer/inject/ring_reader.h"
#include "tracer/inject/unwind.h"
#include "tracer/inject/leftovers.h"

/*   region:  header (4 KiB: the main thread's claim word) | slot 0 | slot 1 | ... slot N-1
 *   slot:    ctl (4 KiB, arch/ring_abi.h CTL_*) | shadow stack | ring
 * A slot's shadow stack (its indexes first) becomes private to the program when a thread takes
 * it (space_slot_own: an anonymous mapping over the memfd's, one mapping per slot used), so a
 * forked child gets its own copy; calltrace reads them through /proc/PID/mem, never through
 * its own mapping. */
#define REGION_HEADER 4096
/* In the header: a counter calltrace bumps at each pass over the rings, and as it goes through
 * a long one. A thread waiting for room in its ring waits as long as it moves: calltrace may be
 * busy for a while with other rings or stops (slowed down by valgrind, say), and only one that
 * has stopped or died is given up on. */
#define REGION_PROGRESS 64
_Static_assert(REGION_GONE == REGION_PROGRESS + 8,
               "the hook routine finds it after the progress word");
/* In a header a detach kept (leftovers.h): the mark, and how many ranges it kept, listed (struct
 * addr_range) right after the copies of the blob (REGION_COPY). */
#define REGION_KEPT 8
#define REGION_KEPT_COUNT 16
#define REGION_KEPT_MARK 0x31307470656b7463ull /* "ctkept01" */
/* CTL_CONSUMER of a control block a detach kept: no process has this pid (the kernel's limit,
 * PID_MAX_LIMIT, is 4194304), so a trampoline that still signals calltrace reaches nobody. */
#define NO_CONSUMER 0x7fffffffu
#define REGION_SLOTS 256       /* threads alive at once; more run untraced */
#define SHADOW_SIZE (8u << 20) /* 262142 nested calls */
/* The most calls a thread can have open: what its shadow stack holds (a trampoline drops the
 * calls past it). Deeper calls read from a ring were written there by the program itself, as
 * were calls on more stacks at once than a thread uses (its own and a signal stack; the
 * engine does not trace programs that switch stacks): left out, so that calltrace's memory and
 * its work per event stay bounded whatever the program writes. */
#define INJECT_DEPTH_MAX ((SHADOW_SIZE - SHADOW_HEADER) / SHADOW_ENTRY_SIZE)
#define INJECT_STACKS_MAX 16

struct inject_patch {
    uint64_t addr;
    uint8_t orig[16];
    uint8_t bytes[16]; /* what patch.c writes there */
    uint8_t len;
    /* a function's entry (its jump to the stub, or a hook's); else a hop in the padding, or a
     * loop's branch retargeted (hops.h) */
    bool entry, hop;
    bool held; /* planned while attaching, not written yet (patch_flush_held) */
};

/* The trampolines' room at the start of a code region: the blob, then a few bytes of data. */
#define BLOB_ROOM 4096

/* A copy of the blob, and the ids of the functions whose stubs enter it. */
struct blob_copy {
    uint64_t exit, exit_args;
    uint32_t first_func, end_func;
};

struct inject_space {
    pid_t pid;
    int memfd;
    int mem_fd;      /* the program's memory (its struct process owns it) */
    uint8_t *local;  /* calltrace's mapping of the region */
    uint64_t remote; /* the program's */
    size_t size;
    size_t slot_size;
    size_t ring_size;
    pid_t slot_tid[REGION_SLOTS];         /* 0: free */
    bool slot_private[REGION_SLOTS];      /* its shadow stack is the program's own memory */
    uint64_t slot_fs[REGION_SLOTS];       /* the thread's fs base (lent: the TCB word), or 0 */
    pid_t slot_lender[REGION_SLOTS];      /* lent to a vfork child by this thread, or 0 */
    uint64_t slot_last[REGION_SLOTS];     /* ticks of the slot's last event */
    uint64_t slot_stuck_at[REGION_SLOTS]; /* 1 + position of an uncommitted event, or 0 */
    uint64_t slot_stuck_since[REGION_SLOTS];
    uint32_t first_func, end_func; /* the ids of its functions */
    uint64_t blob_exit;            /* where hooked calls return to, in the program */
    uint64_t blob_exit_args;       /* the same for functions whose values are captured */
    struct blob_copy *lib_blobs;   /* -l: each library's code region has a copy of the blob
                                    * (the stubs reach it with a rel32 jump) */
    size_t nlib_blobs;
    struct inject_patch *patches;
    size_t npatches, patches_cap;
    bool corrupt_reported; /* the program wrote over the region: said once */
    struct unwind_hook unwind_hooks[UNWIND_HOOKS_MAX]; /* breakpoints of tracer/inject/unwind.c */
    size_t nunwind_hooks;
    uint32_t slot_unwinding[REGION_SLOTS];    /* exceptions thrown, not caught yet (unwind.c) */
    uint64_t resume_addrs[UNWIND_RESUME_MAX]; /* _Unwind_Resume, hooked once needed */
    size_t nresume_addrs;
    bool resume_hooked;
    uint64_t linker_hook;    /* the dynamic linker's _dl_debug_state, hooked in the program, or 0 */
    struct stale_code stale; /* attached: what a killed calltrace left (stale_patches.c) */
    bool hold_jumps;         /* attaching: the jumps wait for patch_flush_held */
    struct kept_set *kept;   /* attached: what earlier detaches kept (leftovers.h) */
    size_t nkept;
};

/* Has p create the region (a memfd) and map it, through the stopped thread via, and maps it in
 * calltrace too (pidfd_getfd); name_addr: where in p the memfd's name may be written (a few
 * dozen bytes of its code region). */
struct inject_space *space_new(struct process *p, pid_t via, uint64_t name_addr, size_t ring_size);
/* Accounts its drops into the engine and frees it (the program's mapping stays). */
void space_free(struct inject_engine *e, struct inject_space *sp);

/* Detached, every thread stopped and every event drained: gives the memory of the rings back
 * (the program's mapping stays, as a late trampoline may still write there). */
void space_free_rings(const struct inject_space *sp);

/* The slot of tid, or -1. */
int space_slot_of(const struct inject_space *sp, pid_t tid);
/* A free slot for tid, reset (one already private first); -1 when all are taken. */
int space_slot_take(struct inject_space *sp, pid_t tid);
/* Makes the slot's shadow stack private to the program (once), through the stopped thread via
 * (not one inside a system call at a ptrace event). A slot left shared still works, but a child
 * forked after calltrace is gone would share it. */
void space_slot_own(struct inject_space *sp, int slot, struct process *p, pid_t via);
/* Adds the slot's drops to the engine's count and frees it. */
void space_slot_release(struct inject_engine *e, struct inject_space *sp, int slot);

static inline uint8_t *space_ctl(const struct inject_space *sp, int slot)
{
    return sp->local + REGION_HEADER + (size_t)slot * sp->slot_size;
}
static inline uint64_t space_ctl_remote(const struct inject_space *sp, int slot)
{
    return sp->remote + REGION_HEADER + (uint64_t)slot * sp->slot_size;
}

/* The ring of the slot whose control block is ctl, as calltrace maps it. */
static inline struct ring_view space_ring_view(const struct inject_space *sp, uint8_t *ctl)
{
    return (struct ring_view){ctl, ctl + CTL_SIZE + SHADOW_SIZE, sp->ring_size};
}

static inline void space_progress(const struct inject_space *sp)
{
    __atomic_fetch_add((uint64_t *)(sp->local + REGION_PROGRESS), 1, __ATOMIC_RELEASE);
}

/* Where hooked calls return to: the exits of every copy of the blob in a process. */
struct exit_set {
    uint64_t exit, exit_args; /* the executable's blob */
    const struct blob_copy *libs;
    size_t nlibs;
};

static inline struct exit_set space_exit_set(const struct inject_space *sp)
{
    return (struct exit_set){sp->blob_exit, sp->blob_exit_args, sp->lib_blobs, sp->nlib_blobs};
}

static inline bool exit_set_has(const struct exit_set *x, uint64_t addr)
{
    if (addr == x->exit || addr == x->exit_args)
        return true;
    for (size_t i = 0; i < x->nlibs; i++)
        if (addr == x->libs[i].exit || addr == x->libs[i].exit_args)
            return true;
    return false;
}

/* Where a hooked call of function func returns to: the exit of the blob its stub enters (args:
 * the -A/-R path's). */
static inline uint64_t exit_set_exit_of(const struct exit_set *x, uint32_t func, bool args)
{
    for (size_t i = 0; i < x->nlibs; i++)
        if (func >= x->libs[i].first_func && func < x->libs[i].end_func)
            return args ? x->libs[i].exit_args : x->libs[i].exit;
    return args ? x->exit_args : x->exit;
}

/* Is addr where a hooked call returns to, in one of sp's code regions? */
static inline bool space_is_blob_exit(const struct inject_space *sp, uint64_t addr)
{
    struct exit_set x = space_exit_set(sp);
    return exit_set_has(&x, addr);
}

/* Writes the original bytes of patches[0..n) back into the memory behind mem_fd: the entries
 * first, newest first (a traced entry patched over an in-process hook, -l, holds the hook's jump
 * as its original bytes, entry_hook.c), then the hops and loops they led to (hops.h), so that a
 * calltrace killed halfway leaves no entry leading to a hop that is gone; a hop one of the pcs
 * (threads') is on stays. -1 when one failed. */
int space_restore_patches(int mem_fd, const struct inject_patch *patches, size_t n,
                          const uint64_t *pcs, size_t npcs);

/* Lists the copy of the blob at code, entered by the stubs of functions [first_func, end_func),
 * in the region's header, for the in-process unwinder hooks (arch/ring_abi.h REGION_COPIES):
 * the executable's with [0, UINT32_MAX), first. -1 when the list is full. */
int space_list_copy(struct inject_space *sp, uint64_t code, uint32_t first_func, uint32_t end_func);
/* Adds the copy of the blob at code, entered by the stubs of functions [first_func, end_func),
 * and lists it. */
int space_add_blob(struct inject_space *sp, uint64_t code, uint32_t first_func, uint32_t end_func);

/* Writes the blob at code in p, with the address of sp's main thread claim word filled in. */
int inject_write_blob(struct process *p, uint64_t code, const struct inject_space *sp);

/* glibc's thread control block starts with two pointers to itself (tcb, at 0, and self, at
 * 0x10): anything else is not a layout the trampolines may write into (threads.c). */
bool is_glibc_tcb(struct process *p, uint64_t tls_base);

/* Gives the stopped thread t the control block of slot (-1: none free, it runs untraced): its
 * shadow stack made private (through thread via), fs:[INJECT_TCB_SLOT] pointed at it. */
void inject_bind_slot(struct session *s, struct inject_space *sp, struct thread *t, int slot,
                      uint64_t tls_base, pid_t via);

/* A thread's shadow stack, copied out of the program (it is the program's private memory). */
struct shadow_copy {
    uint64_t remote;  /* its address in the program: the indexes (CTL_SHADOW_*), then entries */
    uint64_t base;    /* where its entries start, in the program */
    size_t depth;     /* entries */
    uint8_t *entries; /* depth * SHADOW_ENTRY_SIZE bytes, to free */
};
/* Reads the shadow stack of slot (its thread stopped). -1 when unreadable, or when its indexes
 * make no sense (the program wrote over them): then it is best left alone. */
int space_shadow_read(const struct inject_space *sp, int slot, struct shadow_copy *out);

/* Reads and writes a word of the region the program changes concurrently. */
static inline uint64_t space_load(const uint8_t *ctl, size_t off)
{
    return __atomic_load_n((const uint64_t *)(ctl + off), __ATOMIC_ACQUIRE);
}
static inline void space_store(uint8_t *ctl, size_t off, uint64_t v)
{
    __atomic_store_n((uint64_t *)(ctl + off), v, __ATOMIC_RELEASE);
}

/* A count the trampolines keep in a control block (CTL_DROPS, CTL_LOST_RETURNS), or 0 when the
 * program wrote one no thread can reach (2^48 calls, days of nothing else) over it: the
 * closing line's sums stay true to what the threads could have done, and never wrap. */
#define SLOT_COUNT_MAX (1ull << 48)
static inline uint64_t space_count(const uint8_t *ctl, size_t off)
{
    uint64_t n = space_load(ctl, off);
    return n <= SLOT_COUNT_MAX ? n : 0;
}

#endif
