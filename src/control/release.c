/* Letting a process go: with --no-follow, a child leaves the session before it runs a single
 * instruction of its own, with none of calltrace's breakpoints left in its memory. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>

#include "control/control.h"
#include "tracer/addrspace.h"
#include "remote/memory.h"
#include "util/log.h"

/* Puts back every byte an int3 replaced. Only for a private copy of the memory: a vfork child
 * shares its parent's, which keeps its breakpoints. */
static void remove_breakpoints(struct process *p)
{
    ADDR_MAP_FOREACH(&p->as->breakpoints, slot)
    {
        const struct breakpoint *bp = slot->value;
        if (bp->kinds && mem_write(p->mem_fd, bp->addr, &bp->orig, 1) < 0)
            dbg(DBG_ENGINE, 1, "process %d: cannot restore %#llx: %s", (int)p->pid,
                (unsigned long long)bp->addr, strerror(errno));
    }
}

void control_release(struct session *s, struct thread *t)
{
    struct process *p = t->proc;
    if (p->as->refs == 1) {
        remove_breakpoints(p);
        if (p->backend->release_child)
            p->backend->release_child(s, p, t->tid);
    }
    /* Its scratch page stays mapped: a thread may be between a relocated instruction and the
     * jump back, and nothing else will ever run there. */
    if (ptrace(PTRACE_DETACH, t->tid, 0, 0) < 0)
        dbg(DBG_ENGINE, 1, "process %d: detach: %s", (int)p->pid, strerror(errno));
    dbg(DBG_ENGINE, 2, "process %d runs free", (int)p->pid);
    thread_forget(s, t);
    if (!p->nthreads)
        process_forget(s, p);
}
