/* A SIGTRAP stop: one of calltrace's breakpoints (a function entry, a return site, or both), or
 * a trap of the program's own, which goes back to it untouched. */
#include <signal.h>
#include <sys/ptrace.h>

#include "arch/x86_64/machine.h"
#include "tracer/arg_capture.h"
#include "tracer/backend.h"
#include "tracer/breakpoint/sigtrap_guard.h"
#include "tracer/breakpoint/stop_values.h"
#include "tracer/stack_region.h"
#include "tracer/addrspace.h"
#include "tracer/breakpoint/breakpoints.h"
#include "remote/memory.h"
#include "util/log.h"

/* A breakpoint reports si_code SI_KERNEL; the program's raise(SIGTRAP) or kill() does not, even if
 * it happened to stop right after one of our breakpoints. */
static bool trap_is_breakpoint(pid_t tid)
{
    siginfo_t si;
    if (ptrace(PTRACE_GETSIGINFO, tid, 0, &si) < 0)
        return false;
    return si.si_code == SI_KERNEL;
}

/* -L: is the call of a library's function entered with sp the program's? Its return address is
 * in the program (the executable, the -l libraries), or it is the tail call of the open call
 * of the program's own on this slot; else a library called it (the inject engine's trampolines
 * decide alike, arch/x86_64/inject_tramp.S PROGRAM_CALL). */
static bool program_call(const struct thread *t, uint64_t sp, uint64_t ret)
{
    const struct shadow_stack *stack = &t->stack;
    if (stack->depth && stack->frames[stack->depth - 1].entry_sp == sp)
        return !stack->frames[stack->depth - 1].lib_call;
    return caller_ranges_has(&t->proc->as->callers, ret);
}

static void on_entry(struct session *s, struct thread *t, const struct breakpoint *bp,
                     const arch_regs *regs, uint64_t now)
{
    uint64_t sp = arch_sp(regs);
    struct process *p = t->proc;
    uint64_t ret = 0;
    if (mem_read(p->mem_fd, sp, &ret, sizeof(ret)) < 0)
        return;
    /* Under the inject backend, the function may have been tail-called from a patched one. */
    bool hooked = p->backend->hooked_return && p->backend->hooked_return(s, t, sp, &ret);
    if (bp->lib_call && !program_call(t, sp, ret))
        return;
    struct frame call = {.entry_sp = sp,
                         .ret_addr = ret,
                         .region = stack_region(t, sp),
                         .ticks = now,
                         .func = bp->func,
                         .lib_call = bp->lib_call};
    if (bp->loop_head && frames_is_reentry(&t->stack, &call))
        return; /* the loop went round, nobody called */
    struct frame_end_ctx ctx = {s, t, now};
    if (frames_enter(&t->stack, &call, session_frame_end, &ctx) < 0)
        return;
    rec_enter_from(s->rec, p->pid, t->tid, bp->func, now, ret);
    if (s->capture)
        capture_at_entry(s, t, bp->func, regs);
    if (!hooked)
        probe_return_site(s, p, t->tid, ret);
}

/* A frame that ends at a return site's breakpoint: its results are in the stop's registers
 * (-A/-R); frames closed on the way (abandoned, flags set) have none. */
struct return_site_end {
    struct frame_end_ctx base;
    const arch_regs *regs;
};

static void end_at_return_site(void *ctx, const struct frame *frame, unsigned flags)
{
    struct return_site_end *r = ctx;
    if (r->base.s->capture && !flags)
        capture_at_return(r->base.s, r->base.t, frame->func, r->regs);
    session_frame_end(&r->base, frame, flags);
}

int breakpoint_on_trap(struct session *s, struct thread *t, uint64_t now)
{
    arch_regs regs;
    if (ptrace(PTRACE_GETREGS, t->tid, 0, &regs) < 0)
        return -1;
    /* the breakpoint ran: the program counter is just past it */
    const struct breakpoint *bp = breakpoint_at(t->proc->as, arch_pc(&regs) - ARCH_BREAKPOINT_LEN);
    if (!bp || !bp->kinds || !trap_is_breakpoint(t->tid)) {
        sigtrap_guard_learn(t);
        return SIGTRAP;
    }
    sigtrap_guard_check(t);
    /* its calls caught otherwise (the inject backend's rings) come first: it made them first */
    if (t->proc->backend->before_trap)
        t->proc->backend->before_trap(s, t);
    if (t->proc->unfollowed) { /* a vfork child of --no-follow: run through, record nothing */
        ptrace(PTRACE_POKEUSER, t->tid, ARCH_PC_USER_OFFSET, bp->resume);
        return 0;
    }
    struct breakpoint hook;
    if (bp->kinds & BP_HOOK) {
        hook = *bp;
        s->on_hook(s, t, hook.addr, now); /* may add and forget breakpoints */
        bp = breakpoint_at(t->proc->as, hook.addr);
        if (!bp)
            bp = &hook;
    }
    if (bp->kinds & BP_RETURN) {
        struct return_site_end ctx = {{s, t, now}, &regs};
        frames_return(&t->stack, bp->addr, arch_sp(&regs), end_at_return_site, &ctx);
    }
    uint64_t resume = bp->resume;
    if (bp->kinds & BP_ENTRY)
        on_entry(s, t, bp, &regs, now); /* may add breakpoints: bp can move */
    /* Only the program counter changes: one word instead of the whole register set. */
    ptrace(PTRACE_POKEUSER, t->tid, ARCH_PC_USER_OFFSET, resume);
    return 0;
}
