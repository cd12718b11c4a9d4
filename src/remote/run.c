#include "remote/run.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/x86_64/machine.h"
#include "remote/ptrace_stop.h"
#include "util/log.h"

/* A fault of the thread's own instruction: the kernel's (si_code > 0), not a kill()'s. */
static bool own_fault(pid_t tid, int sig)
{
    siginfo_t si;
    if (sig != SIGSEGV && sig != SIGBUS && sig != SIGILL && sig != SIGFPE)
        return false;
    return ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) == 0 && si.si_code > 0;
}

/* A trap on the way: 0 when it is trap_pc, 1 when the run goes on, -1 when it ends. */
static int on_trap(const struct remote_target *t, uint64_t trap_pc,
                   const struct remote_traps *traps)
{
    arch_regs regs;
    if (ptrace(PTRACE_GETREGS, t->tid, NULL, &regs) < 0)
        return -1;
    uint64_t pc = arch_pc(&regs);
    if (pc == trap_pc)
        return 0;
    if (!traps)
        return 1; /* not ours, and no trap of calltrace's on the way: dropped */
    uint64_t resume = traps->resume_at(traps->ctx, pc - ARCH_BREAKPOINT_LEN);
    if (!resume) {
        errno = EFAULT;
        return -1;
    }
    return ptrace(PTRACE_POKEUSER, t->tid, (void *)ARCH_PC_USER_OFFSET, (void *)resume) < 0 ? -1
                                                                                            : 1;
}

static int run(const struct remote_target *t, uint64_t trap_pc, const struct remote_traps *traps,
               uint64_t *set_aside)
{
    for (;;) {
        struct ptrace_stop stop;
        if (ptrace_resume(t->tid, RESUME_CONTINUE, 0) < 0 || ptrace_stop_wait(t->tid, 0, &stop) < 0)
            return -1;
        switch (stop.kind) {
        case STOP_TRAP: {
            int rc = on_trap(t, trap_pc, traps);
            if (rc <= 0)
                return rc;
            break;
        }
        case STOP_SIGNAL:
            if (own_fault(t->tid, stop.sig)) {
                dbg(DBG_PROBE, 1, "thread %d: signal %d in calltrace's code: given up", (int)t->tid,
                    stop.sig);
                errno = EFAULT;
                return -1;
            }
            *set_aside |= 1ull << (stop.sig - 1);
            break;
        case STOP_EVENT:
        case STOP_GROUP:
        case STOP_INTERRUPT:
            break; /* nothing to hand on: it just goes on */
        case STOP_EXITED:
        case STOP_KILLED:
        case STOP_CONTINUED:
            errno = ESRCH;
            return -1;
        }
    }
}

int remote_run_to(const struct remote_target *t, uint64_t trap_pc, const struct remote_traps *traps)
{
    uint64_t set_aside = 0;
    int rc = run(t, trap_pc, traps, &set_aside);
    int saved_errno = errno;
    for (int sig = 1; sig <= 64; sig++)
        if ((set_aside & (1ull << (sig - 1))) && syscall(SYS_tgkill, t->pid, t->tid, sig) < 0)
            dbg(DBG_PROBE, 1, "thread %d: cannot queue signal %d again: %s", (int)t->tid, sig,
                strerror(errno));
    errno = saved_errno;
    return rc;
}
