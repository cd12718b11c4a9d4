/* Leaving a program that ran before calltrace came: every thread stopped, every breakpoint taken
 * out, no thread left on calltrace's code or past one of its traps, then detached.
 *
 *   1. interrupt every thread and collect the stops; a thread that reports one of our traps
 *      gets its program counter back on the breakpoint (the original instruction runs once
 *      restored)
 *   2. step each thread that sits in a scratch page until it is back in the program's code
 *   3. write back the byte under every breakpoint; let a child forked during the attachment that
 *      has not run yet go as any child is let go; unmap calltrace's scratch pages, unless a
 *      frame may still run there (the inject backend: its region too, tracer/inject/leftovers.h)
 *   4. detach each thread, handing it the signal it was about to receive, if any
 *   5. a vfork parent, which cannot stop while its child runs on its memory, is left out of
 *      1-4; once its child has gone with the others it stops, and goes through 1, 2 and 4
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>

#include "control/control.h"
#include "tracer/addrspace.h"
#include "arch/x86_64/machine.h"
#include "remote/memory.h"
#include "remote/ptrace_stop.h"
#include "tracer/scratch.h"
#include "tracer/stack_scan.h"
#include "util/log.h"

#define MAX_THREADS 65536

/* Is pc in one of calltrace's scratch chunks of the address space as? */
static bool in_scratch(const void *addrspace, uint64_t pc)
{
    const struct addrspace *as = addrspace;
    for (const struct scratch_chunk *c = as->chunks; c; c = c->next)
        if (pc >= c->base && pc < c->base + c->size)
            return true;
    return false;
}

/* Is a SIGTRAP pending for this thread (not yet reported)? */
static bool sigtrap_pending(pid_t tid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
    FILE *f = fopen(path, "re");
    unsigned long long pending = 0;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "SigPnd: %llx", &pending) == 1)
            break;
    if (f)
        fclose(f);
    return (pending >> (SIGTRAP - 1)) & 1;
}

static int get_pc(pid_t tid, uint64_t *pc)
{
    arch_regs regs;
    if (ptrace(PTRACE_GETREGS, tid, NULL, &regs) < 0)
        return -1;
    *pc = arch_pc(&regs);
    return 0;
}

static int set_pc(pid_t tid, uint64_t pc)
{
    return (int)ptrace(PTRACE_POKEUSER, tid, (void *)ARCH_PC_USER_OFFSET, (void *)pc);
}

/* A thread stopped by one of our breakpoints (reported, or about to be) goes back onto it,
 * and the trap is dropped. */
static void undo_trap(struct thread *t, const struct ptrace_stop *stop)
{
    uint64_t pc;
    if (get_pc(t->tid, &pc) < 0)
        return;
    uint64_t at = pc - ARCH_BREAKPOINT_LEN;
    const struct breakpoint *bp = breakpoint_at(t->proc->as, at);
    if (!bp || !bp->kinds)
        return;
    if (stop->kind == STOP_TRAP) {
        set_pc(t->tid, at);
        t->hold.status = 0;
        return;
    }
    if (sigtrap_pending(t->tid)) {
        /* Let the kernel deliver it: the thread stops again before running user code. */
        set_pc(t->tid, at);
        struct ptrace_stop trap;
        if (ptrace_resume(t->tid, RESUME_CONTINUE, 0) == 0)
            ptrace_stop_wait(t->tid, 0, &trap);
        t->hold.status = 0;
    }
}

/* Is t a vfork parent whose child, still traced, runs on its memory (it has neither exec'd
 * nor exited)? t then waits in the kernel, where no PTRACE_INTERRUPT stops it, until the child
 * is done: waiting for t while the child is held stopped would be forever. */
static bool in_vfork(struct session *s, const struct thread *t)
{
    const struct thread *c = t->vfork_child ? thread_find(s, t->vfork_child) : NULL;
    return c && c->proc && c->proc->as == t->proc->as;
}

/* A leader that has passed its exit stop (pthread_exit, or the end of its process): it never
 * stops again, and waitpid reports its end only once the other threads have ended. */
static bool exited_leader(const struct thread *t)
{
    return t->exiting && t->tid == t->proc->pid;
}

/* Stops t for good, handling what it reports on the way. Returns false when it is gone, or when
 * it has just been resumed into a vfork (in_vfork: it is stopped later, see control_detach) or
 * into its end (exited_leader: see settle_leader). */
static bool hold(struct session *s, struct thread *t, uint64_t now)
{
    pid_t tid = t->tid;
    ptrace(PTRACE_INTERRUPT, tid, 0, 0);
    for (;;) {
        struct ptrace_stop stop;
        int got = ptrace_stop_wait(tid, 0, &stop);
        if (got < 0 || !ptrace_stop_stopped(&stop)) {
            if (got > 0 && thread_find(s, tid)) {
                control_handle_stop(s, tid, stop.status, now); /* an exit: recorded as usual */
            } else if (got < 0 && errno == ECHILD) {
                /* Its end went to another waitpid (a remote system call's, when the program
                 * died while calltrace attached): left here, it would be waited for forever. */
                control_end_thread(s, t, now);
            }
            return false;
        }
        if (stop.kind != STOP_EVENT) { /* a trap, a signal, the interrupt or a group stop */
            bool has_signal = stop.kind == STOP_TRAP || stop.kind == STOP_SIGNAL;
            t->hold.status = has_signal ? stop.status : 0;
            t->hold.held = true;
            undo_trap(t, &stop);
            return true;
        }
        /* clone, fork, exec: the engine records it (new threads stay stopped, see
         * stop_loop.c), then this one is stopped again; its exit stop: it goes on to its end */
        control_handle_stop(s, tid, stop.status, now);
        if (!thread_find(s, tid) || in_vfork(s, t) || exited_leader(t))
            return false;
        ptrace(PTRACE_INTERRUPT, tid, 0, 0);
    }
}

/* Leaders come last, once the other threads are held or gone: waitpid reports a leader's end
 * only after theirs (the program may end during the detach, or have ended its main thread). */
static void settle_leader(struct session *s, struct thread *t, uint64_t now)
{
    if (!exited_leader(t) || t->proc->nthreads == 1) {
        hold(s, t, now); /* alive, or the last thread: its end, its process's, is reported now */
        return;
    }
    /* Exited while other threads live, held (pthread_exit): a zombie that waitpid would report
     * only after they have all ended, which would be never, and that cannot be detached. It runs
     * no code: it ends here, and the kernel lets it go when calltrace exits (the parent then
     * sees the process end as usual). */
    control_end_thread(s, t, now);
}

/* Step 1: until no thread is left running, threads born meanwhile included, but for the vfork
 * parents whose child is still traced. Returns the number of threads held, listed in list. */
static size_t stop_everyone(struct session *s, struct thread **list, uint64_t now)
{
    for (;;) {
        pid_t pending[256], leaders[256];
        size_t n = 0, nleaders = 0;
        ADDR_MAP_FOREACH(&s->threads, slot)
        {
            struct thread *t = slot->value;
            if (!t->proc || t->hold.held || t->hold.pending_first || in_vfork(s, t))
                continue;
            if (t->tid != t->proc->pid && n < 256)
                pending[n++] = t->tid;
            else if (t->tid == t->proc->pid && nleaders < 256)
                leaders[nleaders++] = t->tid;
        }
        if (!n && !nleaders)
            break;
        for (size_t i = 0; i < n; i++) {
            struct thread *t = thread_find(s, pending[i]);
            if (t && !t->hold.held)
                hold(s, t, now);
        }
        for (size_t i = 0; !n && i < nleaders; i++) { /* the other threads first */
            struct thread *t = thread_find(s, leaders[i]);
            if (t && !t->hold.held)
                settle_leader(s, t, now);
        }
    }
    size_t held = 0;
    ADDR_MAP_FOREACH(&s->threads, slot)
    {
        struct thread *t = slot->value;
        if (t->hold.held && held < MAX_THREADS)
            list[held++] = t;
    }
    return held;
}

/* Step 2: each backend says how many steps always get a thread out of its code
 * (struct tracer_backend: detach_steps). A stepped thread keeps the trap flag until it is let
 * go: a calltrace killed in between (a few milliseconds) leaves it to die of SIGTRAP. */

int control_step_out(struct thread *t, bool (*inside)(const void *ctx, uint64_t pc),
                     const void *ctx, int steps)
{
    for (int i = 0; i < steps; i++) {
        uint64_t pc;
        if (get_pc(t->tid, &pc) < 0)
            return -1;
        if (!inside(ctx, pc))
            return 0;
        struct ptrace_stop stop;
        if (ptrace_resume(t->tid, RESUME_STEP, 0) < 0 || ptrace_stop_wait(t->tid, 0, &stop) < 0 ||
            !ptrace_stop_stopped(&stop))
            return -1;
        if (stop.kind == STOP_SIGNAL)
            t->hold.status = stop.status; /* came in between: kept, like the stops of attach */
    }
    return -1;
}

static int step_all_out(struct session *s, struct thread **list, size_t n)
{
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (control_step_out(list[i], in_scratch, list[i]->proc->as, s->backend->detach_steps) <
            0) {
            err_msg("thread %d: cannot move it out of calltrace's code", (int)list[i]->tid);
            rc = -1;
        }
    }
    return rc;
}

/* Step 3, once per address space. */
static int restore_bytes(struct process *p)
{
    int failed = 0;
    ADDR_MAP_FOREACH(&p->as->breakpoints, slot)
    {
        struct breakpoint *bp = slot->value;
        if (bp->kinds && mem_write(p->mem_fd, bp->addr, &bp->orig, 1) < 0)
            failed = -1;
        bp->kinds = 0;
    }
    return failed;
}

/* Step 3a: a child forked during the attachment whose first stop came only with the detach was
 * held without being started (stop_loop.c, hold): it still has in its memory what its parent had
 * of its backend's at the fork (the inject engine's patches, its parent's shared rings, the calls
 * it was forked from hooked). It is let go as any child is (control/release.c), before its
 * scratch pages may be unmapped; the backend has nothing to do for the other processes. */
static void release_children(struct session *s, struct thread *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct process *p = list[i]->proc;
        if (p && list[i]->tid == p->pid && p->as->refs == 1 && p->backend->release_child)
            p->backend->release_child(s, p, list[i]->tid);
    }
}

/* Step 3b: the scratch pages the backend left mapped (the breakpoints' out-of-line copies; the
 * inject backend unmaps its own with its region) go, unless a frame may still run there: a
 * signal handler that interrupted an out-of-line copy returns into it (tracer/stack_scan.h). */
static void release_scratch(struct session *s, struct thread *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct process *p = list[i]->proc;
        if (!p || !p->as->chunks || p->as->chunks_kept)
            continue;
        size_t nchunks = 0;
        for (const struct scratch_chunk *c = p->as->chunks; c; c = c->next)
            nchunks++;
        struct addr_range ranges[nchunks];
        nchunks = 0;
        for (const struct scratch_chunk *c = p->as->chunks; c; c = c->next)
            ranges[nchunks++] = (struct addr_range){c->base, c->base + c->size};
        struct code_set set = {ranges, nchunks, NULL, 0};
        struct held_stacks hs;
        held_stacks_read(s, p->as, list, n, &hs);
        if (!hs.whole || !hs.via || held_stacks_use(&hs, p->mem_fd, &set, "calltrace's code"))
            p->as->chunks_kept = true;
        else if (scratch_release(p, hs.via) < 0)
            dbg(DBG_ENGINE, 1, "process %d: some of calltrace's pages stay mapped", (int)p->pid);
        held_stacks_free(&hs);
    }
}

/* Step 4: detaches the n threads of list, handing each the signal it was about to receive. */
static int release_held(struct session *s, struct thread **list, size_t n, uint64_t now)
{
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        struct thread *t = list[i];
        struct ptrace_stop held;
        ptrace_stop_classify(t->tid, t->hold.status, &held);
        int sig = t->hold.status ? held.sig : 0;
        if (ptrace(PTRACE_DETACH, t->tid, 0, sig) < 0 && errno != ESRCH) {
            err_msg("thread %d: cannot detach: %s", (int)t->tid, strerror(errno));
            rc = -1;
        }
        control_end_thread(s, t, now);
    }
    return rc;
}

int control_detach(struct session *s)
{
    static struct thread *list[MAX_THREADS];
    int rc = 0;
    s->detaching = true;
    uint64_t now = clock_ticks(s->clock);
    size_t n = stop_everyone(s, list, now);
    if (s->backend->drain)
        s->backend->drain(s, false); /* a thread waiting for room in its ring gets it */
    if (step_all_out(s, list, n) < 0)
        rc = -1;
    if (s->backend->detach && s->backend->detach(s, list, n) < 0)
        rc = -1;
    /* The calls still open end now: after every event the rings held, which the threads wrote
     * while they were being stopped (after the stops above). */
    now = clock_ticks(s->clock);
    ADDR_MAP_FOREACH(&s->processes, slot)
    {
        struct process *p = slot->value;
        if (p->as && restore_bytes(p) < 0) {
            err_msg("process %d: cannot restore its code: %s", (int)p->pid, strerror(errno));
            rc = -1;
        }
    }
    release_children(s, list, n);
    release_scratch(s, list, n);
    if (release_held(s, list, n, now) < 0)
        rc = -1;
    /* Step 5: the vfork parents left out of step 1. Their children went above, with the memory
     * the two share restored; each parent stops once its child has exec'd or exited, and is then
     * let go like the others (a child that was itself a vfork parent first: one round each). */
    while ((n = stop_everyone(s, list, now)) > 0) {
        if (step_all_out(s, list, n) < 0)
            rc = -1;
        if (release_held(s, list, n, now) < 0)
            rc = -1;
    }
    return rc;
}
