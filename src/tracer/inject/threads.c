/* Threads and child processes under the inject backend: every thread gets its own control
 * block before it runs; a forked child gets its patches taken out and its rings made its own,
 * then the breakpoints trace it until it execs (said once). */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include "arch/x86_64/inject_tramp.h"
#include "arch/x86_64/machine.h"
#include "tracer/inject/inject.h"
#include "tracer/inject/space.h"
#include "tracer/inject/unwind.h"
#include "remote/memory.h"
#include "remote/syscall.h"
#include "tracer/scratch.h"
#include "tracer/stack_scan.h"
#include "util/log.h"

/* What a forked child needs from its parent's region, copied at the fork (the parent runs on). */
struct inject_fork_copy {
    uint64_t remote, size;
    uint64_t ctl_remote;   /* 0: the forking thread had no control block */
    struct exit_set exits; /* exits.libs: a copy, freed with it */
    struct inject_patch *patches;
    size_t npatches;
    size_t shadow_len;
    uint8_t ctl[CTL_SIZE];
    uint8_t shadow[];
};

void inject_fork_copy_free(struct inject_fork_copy *c)
{
    if (!c)
        return;
    free(c->patches);
    free((void *)c->exits.libs);
    free(c);
}

static struct inject_space *space_of(struct session *s, pid_t pid)
{
    return s->inject ? addr_map_get(&s->inject->spaces, (uint64_t)pid) : NULL;
}

bool is_glibc_tcb(struct process *p, uint64_t tls_base)
{
    uint64_t head[3];
    return tls_base && mem_read(p->mem_fd, tls_base, head, sizeof(head)) == 0 &&
           head[0] == tls_base && head[2] == tls_base;
}

/* The slot whose control block ctl_remote is, or -1. */
static int slot_at(const struct inject_space *sp, uint64_t ctl_remote)
{
    if (ctl_remote < sp->remote + REGION_HEADER)
        return -1;
    uint64_t off = ctl_remote - sp->remote - REGION_HEADER;
    if (off % sp->slot_size || off / sp->slot_size >= REGION_SLOTS)
        return -1;
    return (int)(off / sp->slot_size);
}

static int detach_child_region(struct process *p, pid_t tid, const struct inject_fork_copy *c);
static bool returns_into(struct process *p, pid_t tid, const struct exit_set *exits);

static void note_children(struct session *s, pid_t child)
{
    if (s->inject->children_noted)
        return;
    s->inject->children_noted = true;
    inject_note(s,
                "inject engine: forked processes are traced by the ptrace engine (process %d), "
                "until they exec",
                (int)child);
}

void inject_on_handover(struct session *s, struct process *p)
{
    note_children(s, p->pid);
}

/* A forked child (stopped thread tid, its only one, which has not run yet) is left with nothing of
 * its parent's tracing in use: its copy of the patches and rings goes, and the calls it inherited,
 * hooked in its parent, get their real return addresses back (an exception in the child unwinds
 * through them, and its unwinder hooks went with the patches), unseen: they end when the child
 * does, as inherited calls do. Its private copy of the region stays (its thread control block
 * names a block in it). When a return address into calltrace's code is still on its stack (one
 * that could not be put back), the code it inherited stays mapped for good (chunks_kept). */
static int release_fork(struct session *s, struct process *p, pid_t tid, struct inject_fork_copy *c)
{
    addr_map_del(&s->inject->forks, (uint64_t)p->pid);
    int rc = detach_child_region(p, tid, c);
    if (rc == 0 && c->ctl_remote && c->shadow_len >= SHADOW_HEADER)
        inject_unhook_inherited(p, tid, &c->exits, c->shadow + SHADOW_HEADER,
                                c->shadow_len - SHADOW_HEADER);
    if (rc < 0 || returns_into(p, tid, &c->exits))
        p->as->chunks_kept = true;
    inject_fork_copy_free(c);
    if (rc < 0)
        err_msg("inject engine: process %d: cannot take calltrace out of it: %s", (int)p->pid,
                strerror(errno));
    return rc;
}

/* A forked child, at its first stop: released, then traced by the breakpoints (until it execs:
 * its new image gets rings). */
static enum start_verdict fork_child_out(struct session *s, struct thread *t,
                                         struct inject_fork_copy *c)
{
    if (release_fork(s, t->proc, t->tid, c) < 0)
        return START_TRACED;
    return START_TO_BREAKPOINTS; /* its libraries' patches went too: breakpoints now */
}

enum start_verdict inject_thread_start(struct session *s, struct thread *t)
{
    struct inject_fork_copy *c = addr_map_get(&s->inject->forks, (uint64_t)t->proc->pid);
    if (c && t->tid == t->proc->pid)
        return fork_child_out(s, t, c);
    struct inject_space *sp = space_of(s, t->proc->pid);
    if (!sp || t->tid == sp->pid)
        return START_TRACED;
    arch_regs regs;
    if (ptrace(PTRACE_GETREGS, t->tid, 0, &regs) < 0 ||
        !is_glibc_tcb(t->proc, arch_tls_base(&regs))) {
        dbg(DBG_INJECT, 1, "thread %d: no glibc thread control block: its calls are not recorded",
            (int)t->tid);
        return START_TRACED;
    }
    if (addr_map_get(&s->inject->shared_tls, (uint64_t)t->tid)) {
        addr_map_del(&s->inject->shared_tls, (uint64_t)t->tid);
        err_msg("inject engine: thread %d was created without a thread control block of its "
                "own (clone without CLONE_SETTLS): its calls may be mixed up with its creator's; "
                "use --engine=ptrace",
                (int)t->tid);
        return START_TRACED;
    }
    inject_bind_slot(s, sp, t, space_slot_take(sp, t->tid), arch_tls_base(&regs), t->tid);
    return START_TRACED;
}

void inject_bind_slot(struct session *s, struct inject_space *sp, struct thread *t, int slot,
                      uint64_t tls_base, pid_t via)
{
    space_slot_own(sp, slot, t->proc, via);
    if (slot < 0)
        err_msg("inject engine: more than %d threads at once: thread %d runs untraced",
                REGION_SLOTS, (int)t->tid);
    uint64_t ctl = slot < 0 ? 1 : space_ctl_remote(sp, slot);
    if (mem_write(t->proc->mem_fd, tls_base + INJECT_TCB_SLOT, &ctl, sizeof(ctl)) < 0) {
        dbg(DBG_INJECT, 1, "thread %d: cannot write its control block: %s", (int)t->tid,
            strerror(errno));
        if (slot >= 0)
            space_slot_release(s->inject, sp, slot);
        return;
    }
    if (slot >= 0)
        sp->slot_fs[slot] = tls_base;
}

/* The control block of the stopped thread t, claiming the main one for it when it has none
 * yet; -1 when it has none. *at: where its thread control block points to it. */
static int slot_of_stopped(struct inject_space *sp, struct thread *t, uint64_t *tcb_at)
{
    arch_regs regs;
    if (ptrace(PTRACE_GETREGS, t->tid, 0, &regs) < 0 ||
        !is_glibc_tcb(t->proc, arch_tls_base(&regs)))
        return -1;
    uint64_t at = arch_tls_base(&regs) + INJECT_TCB_SLOT, current = 0;
    *tcb_at = at;
    if (mem_read(t->proc->mem_fd, at, &current, sizeof(current)) < 0)
        return -1;
    if (current == 0 && space_load(sp->local, 0) > 1) { /* what the trampoline would do */
        current = space_load(sp->local, 0);
        if (mem_write(t->proc->mem_fd, at, &current, sizeof(current)) < 0)
            return -1;
        space_store(sp->local, 0, 1);
    }
    return slot_at(sp, current);
}

static void copy_for_fork(struct session *s, struct inject_space *sp, int slot, pid_t child)
{
    /* the shadow stack, indexes and entries, is the parent's private memory (space.h) */
    size_t shadow_len = 0;
    uint64_t shadow = slot >= 0 ? space_ctl_remote(sp, slot) + CTL_SIZE : 0, top;
    if (slot >= 0 &&
        mem_read(sp->mem_fd, shadow + CTL_SHADOW_TOP - CTL_SIZE, &top, sizeof(top)) == 0)
        shadow_len = top > shadow && top - shadow <= SHADOW_SIZE ? top - shadow : 0;
    struct inject_fork_copy *c = calloc(1, sizeof(*c) + shadow_len);
    struct inject_patch *patches = calloc(sp->npatches ? sp->npatches : 1, sizeof(*patches));
    struct blob_copy *libs = calloc(sp->nlib_blobs ? sp->nlib_blobs : 1, sizeof(*libs));
    if (!c || !patches || !libs || addr_map_put(&s->inject->forks, (uint64_t)child, c) < 0) {
        err_msg("inject engine: process %d: out of memory", (int)child);
        free(c);
        free(patches);
        free(libs);
        return;
    }
    if (sp->nlib_blobs) /* lib_blobs is NULL without -l */
        memcpy(libs, sp->lib_blobs, sp->nlib_blobs * sizeof(*libs));
    if (sp->npatches)
        memcpy(patches, sp->patches, sp->npatches * sizeof(*patches));
    c->patches = patches;
    c->npatches = sp->npatches;
    c->remote = sp->remote;
    c->size = sp->size;
    c->exits = space_exit_set(sp);
    c->exits.libs = libs;
    if (slot >= 0) {
        const uint8_t *ctl = space_ctl(sp, slot);
        c->ctl_remote = space_ctl_remote(sp, slot);
        memcpy(c->ctl, ctl, CTL_SIZE);
        if (shadow_len && mem_read(sp->mem_fd, shadow, c->shadow, shadow_len) == 0)
            c->shadow_len = shadow_len;
    }
}

enum fork_verdict inject_on_fork(struct session *s, struct thread *parent, pid_t child,
                                 bool is_vfork, bool shares_memory)
{
    struct inject_space *sp = space_of(s, parent->proc->pid);
    if (!sp)
        return FORK_FOLLOWED;
    uint64_t tcb_at = 0;
    int slot = slot_of_stopped(sp, parent, &tcb_at);
    if (!shares_memory) { /* see inject_thread_start and inject_release_child */
        copy_for_fork(s, sp, slot, child);
        return FORK_FOLLOWED;
    }
    if (!is_vfork) {
        err_msg("inject engine: process %d shares the memory of process %d (clone with "
                "CLONE_VM): its calls may be recorded as its parent's; use --engine=ptrace",
                (int)child, (int)parent->proc->pid);
        return FORK_UNTRACED;
    }
    /* The child runs on the parent's memory and thread control block until it execs or exits,
     * the parent stopped meanwhile: the thread control block points to a block of the child's
     * until then (vfork_done). If there is none to give, the child's calls are counted, not
     * recorded. Its new image, if it execs, gets rings of its own. */
    int lent = slot >= 0 ? space_slot_take(sp, child) : -1;
    uint64_t ctl = lent >= 0 ? space_ctl_remote(sp, lent) : 0;
    if (lent >= 0 && mem_write(parent->proc->mem_fd, tcb_at, &ctl, sizeof(ctl)) == 0) {
        sp->slot_lender[lent] = parent->tid;
        sp->slot_fs[lent] = tcb_at;
        return FORK_FOLLOWED;
    }
    if (lent >= 0)
        space_slot_release(s->inject, sp, lent);
    if (slot >= 0)
        space_ctl(sp, slot)[CTL_BUSY] = 2;
    return FORK_FOLLOWED;
}

void inject_on_clone(struct session *s, pid_t tid, unsigned long flags)
{
    if (s->inject && !(flags & CLONE_SETTLS))
        addr_map_put(&s->inject->shared_tls, (uint64_t)tid, (void *)1);
}

void inject_on_vfork_done(struct session *s, struct thread *parent)
{
    struct inject_space *sp = space_of(s, parent->proc->pid);
    if (!sp)
        return;
    int slot = space_slot_of(sp, parent->tid);
    if (slot >= 0)
        space_ctl(sp, slot)[CTL_BUSY] = 0;
    for (int i = 0; i < REGION_SLOTS; i++) { /* the block lent to its child comes back */
        if (!sp->slot_tid[i] || sp->slot_lender[i] != parent->tid)
            continue;
        uint64_t ctl = slot >= 0 ? space_ctl_remote(sp, slot) : 0;
        if (mem_write(parent->proc->mem_fd, sp->slot_fs[i], &ctl, sizeof(ctl)) < 0)
            dbg(DBG_INJECT, 1, "thread %d: cannot point it back to its block: %s", (int)parent->tid,
                strerror(errno));
        space_slot_release(s->inject, sp, i);
    }
}

/* The child gets a private copy of what its thread used (returns still pending in it go through
 * the trampolines) and its entries back. */
static int detach_child_region(struct process *p, pid_t tid, const struct inject_fork_copy *c)
{
    uint64_t args[6] = {
        c->remote,    c->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
        (uint64_t)-1, 0};
    uint64_t got;
    if (remote_syscall(process_target(p, tid), SYS_mmap, args, &got) < 0 || got != c->remote)
        return -1;
    if (c->ctl_remote && (mem_write(p->mem_fd, c->ctl_remote, c->ctl, CTL_SIZE) < 0 ||
                          (c->shadow_len && mem_write(p->mem_fd, c->ctl_remote + CTL_SIZE,
                                                      c->shadow, c->shadow_len) < 0)))
        return -1;
    return space_restore_patches(p->mem_fd, c->patches, c->npatches, NULL, 0);
}

/* Does a word of the stopped thread's stack still hold one of the trampolines' exits (or can the
 * stack not be read)? */
static bool returns_into(struct process *p, pid_t tid, const struct exit_set *exits)
{
    struct thread_stack st;
    thread_stack_read(p->pid, tid, p->mem_fd, &st);
    bool found = st.cut;
    for (size_t i = 0; i < st.n && !found; i++)
        found = exit_set_has(exits, st.words[i]);
    thread_stack_free(&st);
    return found;
}

void inject_release_child(struct session *s, struct process *p, pid_t tid)
{
    struct inject_fork_copy *c =
        s->inject ? addr_map_get(&s->inject->forks, (uint64_t)p->pid) : NULL;
    if (c)
        release_fork(s, p, tid, c);
}

/* glibc gives a new thread the stack (and thread control block) of one that ended without
 * clearing the word calltrace keeps there: were calltrace gone by then, the new thread would
 * record into the block of the ended one, which may be another live thread's by then (two
 * threads on one shadow stack: returns that find no entry). A thread that ends leaves it
 * marked untraced. */
void inject_on_thread_exit(struct session *s, struct thread *t)
{
    struct inject_space *sp = space_of(s, t->proc->pid);
    int slot = sp ? space_slot_of(sp, t->tid) : -1;
    if (slot < 0 || !sp->slot_fs[slot] || sp->slot_lender[slot])
        return;
    uint64_t untraced = 1;
    if (mem_write(t->proc->mem_fd, sp->slot_fs[slot] + INJECT_TCB_SLOT, &untraced,
                  sizeof(untraced)) < 0)
        dbg(DBG_INJECT, 1, "thread %d: cannot mark its thread control block: %s", (int)t->tid,
            strerror(errno));
}
