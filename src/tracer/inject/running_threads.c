/* The inject engine on a process that ran before calltrace came (-p), and leaving it again.
 *
 * Attaching, every thread is stopped (control/attach.c) while the entries are patched (no thread
 * is left in the middle of the bytes a jump covers: patch.c skips those functions), and each
 * gets its control block: nobody claims the main thread's, so a thread calltrace never saw
 * (created after calltrace died) runs untraced.
 *
 * Detaching, with every thread stopped and moved out of the injected code (control/detach.c):
 *   1. every patched entry gets its original bytes back (a hop a thread resumes on stays);
 *   2. every return address a call hooked (the exit trampoline, in its slot) gets the real one
 *      back, from the thread's shadow stack, newest first;
 *   3. every control block is marked given up, so no trampoline still running (a signal frame
 *      may return into one) ever waits for calltrace again;
 *   4. what calltrace mapped in the program is unmapped, unless a frame may still use it
 *      (leftovers.h: then only what it uses stays, private to the program). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "arch/x86_64/inject_tramp.h"
#include "arch/x86_64/machine.h"
#include "arch/ring_abi.h"
#include "tracer/inject/hops.h"
#include "tracer/inject/leftovers.h"
#include "tracer/inject/inject.h"
#include "tracer/inject/patch.h"
#include "tracer/inject/space.h"
#include "remote/memory.h"
#include "tracer/stack_scan.h"
#include "util/log.h"

/* Is addr the exit of a copy of the blob (any calltrace's)? */
static bool blob_exit_at(const struct process *p, uint64_t addr)
{
    const size_t offs[] = {inject_blob_exit_off, inject_blob_exit_args_off};
    return inject_blob_copy_of(p, addr, offs, sizeof(offs) / sizeof(offs[0])) != 0;
}

/* The calls of a shadow stack (entries[0..depth), a copy) return to their real addresses,
 * newest first. A slot is written only while it still holds an exit of exits: an entry whose
 * call was abandoned (longjmp) may name a slot reused since. With unknown set (a shadow stack an
 * earlier calltrace left), the exit of any copy of the blob counts: a thread that kept a killed
 * calltrace's block while the next one patched (it could not be stepped out of the old code) had
 * calls hooked through the next one's copy into the old shadow stack (tests/e2e/114). */
static int unhook_shadow(struct process *p, const uint8_t *entries, size_t depth,
                         const struct exit_set *exits, bool unknown_set)
{
    int rc = 0;
    for (size_t i = depth; i-- > 0;) {
        uint64_t entry[2], held;
        memcpy(entry, entries + i * SHADOW_ENTRY_SIZE, sizeof(entry));
        if (mem_read(p->mem_fd, entry[1], &held, sizeof(held)) < 0 ||
            !(exit_set_has(exits, held) || (unknown_set && blob_exit_at(p, held))))
            continue;
        if (mem_write(p->mem_fd, entry[1], &entry[0], sizeof(entry[0])) < 0)
            rc = -1;
    }
    return rc;
}

/* The copies of the blob a region's header at header lists, in the program (an earlier
 * calltrace's): their exits in *x (x->libs to free). */
static int read_exit_set(struct process *p, uint64_t header, struct exit_set *x)
{
    uint64_t n;
    if (mem_read(p->mem_fd, header + REGION_COPIES, &n, sizeof(n)) < 0 || !n ||
        n > REGION_COPIES_MAX)
        return -1;
    struct region_copy copies[REGION_COPIES_MAX];
    struct blob_copy *libs = calloc(n, sizeof(*libs));
    if (!libs || mem_read(p->mem_fd, header + REGION_COPY, copies, n * sizeof(*copies)) < 0) {
        free(libs);
        return -1;
    }
    for (uint64_t i = 0; i < n; i++)
        libs[i] = (struct blob_copy){copies[i].base + inject_blob_exit_off,
                                     copies[i].base + inject_blob_exit_args_off,
                                     copies[i].first_func, copies[i].end_func};
    *x = (struct exit_set){libs[0].exit, libs[0].exit_args, libs, n};
    return 0;
}

/* Is ctl the control block of an earlier calltrace (its region named, its shadow stack where
 * the block puts it)? */
static bool stale_block_at(struct process *p, uint64_t ctl)
{
    uint64_t region, base;
    return mem_read(p->mem_fd, ctl + CTL_REGION, &region, sizeof(region)) == 0 && region &&
           mem_read(p->mem_fd, ctl + CTL_SHADOW_BASE, &base, sizeof(base)) == 0 &&
           base == ctl + CTL_SIZE + SHADOW_HEADER;
}

void inject_give_up_stale_blocks(struct session *s, struct process *p)
{
    ADDR_MAP_FOREACH(&s->threads, slot)
    {
        struct thread *t = slot->value;
        arch_regs regs;
        uint64_t ctl = 0;
        const uint8_t gave_up = 1;
        if (t->proc != p || ptrace(PTRACE_GETREGS, t->tid, 0, &regs) < 0 ||
            !is_glibc_tcb(p, arch_tls_base(&regs)) ||
            mem_read(p->mem_fd, arch_tls_base(&regs) + INJECT_TCB_SLOT, &ctl, sizeof(ctl)) < 0 ||
            ctl <= 1 || !stale_block_at(p, ctl))
            continue;
        if (mem_write(p->mem_fd, ctl + CTL_GAVE_UP, &gave_up, sizeof(gave_up)) < 0)
            dbg(DBG_INJECT, 1, "thread %d: cannot give an earlier block up: %s", (int)t->tid,
                strerror(errno));
    }
}

/* A thread whose thread control block still names the control block ctl of an earlier calltrace
 * (killed while attached: it could not put anything back) has calls hooked then, still open,
 * which return through that calltrace's code and shadow stack: once the thread's block is ours,
 * they would find our shadow stack, without their entries. Their real return addresses go back
 * first, from the old shadow stack, whose entries are then forgotten (a cleanly detached
 * calltrace left none hooked: nothing is written). */
static void unhook_stale(struct process *p, pid_t tid, uint64_t ctl)
{
    uint64_t region, idx[3]; /* top, end, base */
    struct exit_set exits;
    if (mem_read(p->mem_fd, ctl + CTL_REGION, &region, sizeof(region)) < 0 || !region ||
        mem_read(p->mem_fd, ctl + CTL_SHADOW_TOP, idx, sizeof(idx)) < 0 ||
        idx[2] != ctl + CTL_SIZE + SHADOW_HEADER || idx[0] < idx[2] ||
        idx[0] > idx[2] + SHADOW_SIZE || (idx[0] - idx[2]) % SHADOW_ENTRY_SIZE ||
        read_exit_set(p, region, &exits) < 0)
        return;
    size_t len = idx[0] - idx[2];
    uint8_t *entries = malloc(len ? len : 1);
    if (entries && mem_read(p->mem_fd, idx[2], entries, len) == 0) {
        unhook_shadow(p, entries, len / SHADOW_ENTRY_SIZE, &exits, true);
        if (mem_write(p->mem_fd, ctl + CTL_SHADOW_TOP, &idx[2], sizeof(idx[2])) < 0)
            dbg(DBG_INJECT, 1, "thread %d: cannot empty an earlier shadow stack: %s", (int)tid,
                strerror(errno));
        dbg(DBG_INJECT, 1, "thread %d: %zu calls hooked by an earlier calltrace put back", (int)tid,
            len / SHADOW_ENTRY_SIZE);
    }
    free(entries);
    free((void *)exits.libs);
}

bool inject_in_stale_code(const struct session *s, const struct process *p, uint64_t pc)
{
    const struct inject_space *sp = addr_map_get(&s->inject->spaces, (uint64_t)p->pid);
    return sp && stale_code_has(&sp->stale, pc);
}

/* Does a frame of the stopped thread t still use a set an earlier detach kept (leftovers.h)? */
static bool in_kept_code(const struct inject_space *sp, const struct thread *t)
{
    if (!sp->nkept)
        return false;
    struct thread_stack st;
    thread_stack_read(t->proc->pid, t->tid, t->proc->mem_fd, &st);
    bool uses = false;
    for (size_t i = 0; i < sp->nkept && !uses; i++) {
        const struct kept_set *k = &sp->kept[i];
        struct code_set set = {k->ranges, k->nranges, k->returns, k->nreturns};
        uses = thread_stack_uses(&st, t->proc->mem_fd, &set);
    }
    thread_stack_free(&st);
    return uses;
}

/* Gives the stopped thread t its control block (the main thread the one set up for it). */
static void give_block(struct session *s, struct inject_space *sp, struct thread *t, pid_t via)
{
    arch_regs regs;
    bool is_main = t->tid == sp->pid;
    int slot = is_main ? space_slot_of(sp, t->tid) : -1;
    if (ptrace(PTRACE_GETREGS, t->tid, 0, &regs) < 0)
        return;
    if (stale_code_has(&sp->stale, arch_pc(&regs))) {
        /* Still inside a killed calltrace's entry or exit (control/attach.c could not step it
         * out): taking its thread over would lose that call's return. It keeps that calltrace's
         * block, whose code and memory stay, and goes on untraced (an exception it throws
         * through this calltrace's frames may then fail: rare, and said). */
        dbg(DBG_INJECT, 1, "thread %d: inside an earlier calltrace's code: not traced",
            (int)t->tid);
        if (slot >= 0)
            space_slot_release(s->inject, sp, slot);
        return;
    }
    if (!is_glibc_tcb(t->proc, arch_tls_base(&regs))) {
        dbg(DBG_INJECT, 1, "thread %d: no glibc thread control block: its calls are not recorded",
            (int)t->tid);
        if (slot >= 0)
            space_slot_release(s->inject, sp, slot);
        return;
    }
    uint64_t old = 0, region = 0;
    bool earlier =
        mem_read(t->proc->mem_fd, arch_tls_base(&regs) + INJECT_TCB_SLOT, &old, sizeof(old)) == 0 &&
        old > 1 && (old < sp->remote || old >= sp->remote + sp->size);
    if (earlier && mem_read(t->proc->mem_fd, old + CTL_REGION, &region, sizeof(region)) == 0)
        leftovers_note(t->proc, sp, region);
    if (in_kept_code(sp, t)) {
        /* A frame of it still runs in what an earlier detach kept for it (a signal handler
         * that interrupted a trampoline): it keeps that block, untraced, as above. */
        dbg(DBG_INJECT, 1, "thread %d: still in code an earlier calltrace kept: not traced",
            (int)t->tid);
        if (slot >= 0)
            space_slot_release(s->inject, sp, slot);
        return;
    }
    if (earlier)
        unhook_stale(t->proc, t->tid, old);
    if (!is_main)
        slot = space_slot_take(sp, t->tid);
    inject_bind_slot(s, sp, t, slot, arch_tls_base(&regs), via);
}

void inject_attach_threads(struct session *s, struct process *p, pid_t via)
{
    struct inject_space *sp = addr_map_get(&s->inject->spaces, (uint64_t)p->pid);
    if (!sp)
        return;
    if (patch_flush_held(sp) < 0)
        err_msg("process %d: cannot patch its code: %s", (int)p->pid, strerror(errno));
    space_store(sp->local, 0, 1); /* the main thread's block is given, not claimed */
    if (!thread_find(s, p->pid) && space_slot_of(sp, p->pid) >= 0)
        space_slot_release(s->inject, sp, space_slot_of(sp, p->pid)); /* the leader is gone */
    ADDR_MAP_FOREACH(&s->threads, slot)
    {
        struct thread *t = slot->value;
        if (t->proc == p)
            give_block(s, sp, t, via);
    }
}

/* Step 1. A hop a thread resumes on (hops.h), now or when a signal handler returns, stays, in
 * the padding, where nothing leads once the entries are back. */
static int restore_entries(struct process *p, const struct inject_space *sp,
                           const struct held_stacks *hs)
{
    size_t n = 0;
    for (size_t i = 0; i < hs->n; i++)
        n += 1 + hs->v[i].nrips;
    uint64_t *pcs = calloc(n ? n : 1, sizeof(*pcs));
    if (!pcs)
        return -1;
    n = 0;
    for (size_t i = 0; i < hs->n; i++) {
        pcs[n++] = hs->v[i].pc;
        for (size_t r = 0; r < hs->v[i].nrips; r++)
            pcs[n++] = hs->v[i].rips[r];
    }
    int rc = space_restore_patches(p->mem_fd, sp->patches, sp->npatches, pcs, n);
    free(pcs);
    return rc;
}

/* Step 2 for one thread's shadow stack. */
static int unhook_returns(struct process *p, const struct inject_space *sp, int slot)
{
    struct shadow_copy shadow;
    if (space_shadow_read(sp, slot, &shadow) < 0)
        return -1;
    struct exit_set exits = space_exit_set(sp);
    int rc = unhook_shadow(p, shadow.entries, shadow.depth, &exits, false);
    free(shadow.entries);
    return rc;
}

/* One process left: its space, and the stacks of the threads that run in its memory. */
struct leaving {
    struct inject_space *sp;
    struct process *p;
    struct held_stacks stacks;
};

int inject_detach(struct session *s, struct thread *const *held, size_t nheld)
{
    int rc = 0;
    size_t n = 0;
    struct leaving *v = calloc(s->inject->spaces.count + 1, sizeof(*v));
    if (!v)
        return -1;
    ADDR_MAP_FOREACH(&s->inject->spaces, slot)
    {
        struct inject_space *sp = slot->value;
        struct process *p = addr_map_get(&s->processes, (uint64_t)sp->pid);
        struct leaving *l = &v[n++];
        *l = (struct leaving){sp, p, {0}};
        if (!p)
            continue;
        held_stacks_read(s, p->as, held, nheld, &l->stacks); /* before anything changes */
        if (restore_entries(p, sp, &l->stacks) < 0) {
            err_msg("process %d: cannot restore its code: %s", (int)p->pid, strerror(errno));
            rc = -1;
        }
    }
    inject_drain(s, false); /* the calls the threads made on their way out */
    for (size_t k = 0; k < n; k++) {
        struct inject_space *sp = v[k].sp;
        struct process *p = v[k].p;
        for (int i = 0; p && i < REGION_SLOTS; i++) {
            if (!sp->slot_tid[i])
                continue;
            if (!sp->slot_lender[i] && unhook_returns(p, sp, i) < 0) {
                err_msg("thread %d: cannot restore its return addresses", (int)sp->slot_tid[i]);
                rc = -1;
            }
            space_ctl(sp, i)[CTL_GAVE_UP] = 1;
            space_slot_release(s->inject, sp, i); /* no later drain may clear the mark */
        }
        space_store(sp->local, REGION_GONE, 1); /* no hook of the program waits for us again */
        space_free_rings(sp);
        if (p && leftovers_release(sp, p, &v[k].stacks) < 0)
            dbg(DBG_INJECT, 1, "process %d: some of what calltrace mapped stays mapped",
                (int)p->pid);
        held_stacks_free(&v[k].stacks);
    }
    free(v);
    return rc;
}
