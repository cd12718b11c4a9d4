/* One traced process's side of the inject engine: the region shared with it (a memfd mapped in
 * both), its per-thread slots, its code region and the entries it patched. */
#ifndef CALLTRACE_INJECT_SPACE_H
#define CALLTRACE_INJECT_SPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine/session.h"
#include "inject/inject.h"

/*   region:  header (4 KiB: the main thread's claim word) | slot 0 | slot 1 | ... slot N-1
 *   slot:    ctl (4 KiB, arch/x86_64/inject_tramp.h CTL_*) | shadow stack | ring
 * A slot's shadow stack (its indexes first) becomes private to the program when a thread takes
 * it (space_slot_own: an anonymous mapping over the memfd's, one mapping per slot used), so a
 * forked child gets its own copy; calltrace reads them through /proc/PID/mem, never through
 * its own mapping. */
#define REGION_HEADER 4096
#define REGION_SLOTS 256       /* threads alive at once; more run untraced */
#define SHADOW_SIZE (8u << 20) /* 262144 nested calls */

struct inject_patch {
    uint64_t addr;
    uint8_t orig[16];
    uint8_t len;
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
    struct inject_patch *patches;
    size_t npatches;
    bool corrupt_reported;
};

/* Creates the region and maps it into p through the stopped thread via; path_addr: where in p
 * the path of calltrace's memfd may be written (a few dozen bytes of its code region). */
struct inject_space *space_new(struct process *p, pid_t via, uint64_t path_addr, size_t ring_size);
/* Accounts its drops into the engine and frees it (the program's mapping stays). */
void space_free(struct inject_engine *e, struct inject_space *sp);

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

/* glibc's thread control block starts with two pointers to itself (tcb, at 0, and self, at
 * 0x10): anything else is not a layout the trampolines may write into (threads.c). */
bool is_glibc_tcb(struct process *p, uint64_t fs);

/* Reads and writes a word of the region the program changes concurrently. */
static inline uint64_t space_load(const uint8_t *ctl, size_t off)
{
    return __atomic_load_n((const uint64_t *)(ctl + off), __ATOMIC_ACQUIRE);
}
static inline void space_store(uint8_t *ctl, size_t off, uint64_t v)
{
    __atomic_store_n((uint64_t *)(ctl + off), v, __ATOMIC_RELEASE);
}

#endif
