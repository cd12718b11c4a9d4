#include "remote/call.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tracer/addrspace.h"
#include "remote/memory.h"
#include "util/log.h"

/* The x86_64 ABI lets a leaf function use 128 bytes below rsp: the call's frame goes below. */
#define RED_ZONE 128

static bool is_fault(int sig)
{
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE;
}

/* Runs tid until it traps at trap_rip. One of calltrace's breakpoints on the way is passed as
 * the engine would (through its out-of-line copy) without recording anything; a fault or a
 * foreign trap ends the call. Other signals are set aside in *set_aside. */
static int run_call(struct process *p, pid_t tid, uint64_t trap_rip, uint64_t *set_aside)
{
    for (;;) {
        if (ptrace(PTRACE_CONT, tid, 0, 0) < 0)
            return -1;
        int status;
        pid_t got;
        while ((got = waitpid(tid, &status, __WALL)) < 0 && errno == EINTR)
            ;
        if (got < 0)
            return -1;
        if (!WIFSTOPPED(status)) {
            errno = ESRCH;
            return -1;
        }
        int sig = WSTOPSIG(status);
        if ((status >> 16) != 0)
            continue; /* an event stop (group-stop): just go on */
        if (sig == SIGTRAP) {
            struct user_regs_struct regs;
            if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
                return -1;
            if (regs.rip == trap_rip)
                return 0;
            const struct breakpoint *bp = breakpoint_at(p->as, regs.rip - 1);
            if (!bp || !bp->kinds) {
                errno = EFAULT;
                return -1;
            }
            if (ptrace(PTRACE_POKEUSER, tid, offsetof(struct user_regs_struct, rip), bp->resume) <
                0)
                return -1;
            continue;
        }
        if (is_fault(sig)) {
            errno = EFAULT;
            return -1;
        }
        *set_aside |= 1ull << (sig - 1);
    }
}

int remote_call(struct process *p, pid_t tid, uint64_t func, uint64_t *result)
{
    uint64_t gadget = p->as->syscall_gadget;
    if (!gadget) {
        errno = ENOENT;
        return -1;
    }
    struct user_regs_struct saved, regs;
    if (ptrace(PTRACE_GETREGS, tid, 0, &saved) < 0)
        return -1;
    regs = saved;
    uint64_t ret = gadget + 2; /* the int3 after "syscall" */
    regs.rsp = ((saved.rsp - RED_ZONE - 64) & ~0xfull) - 8;
    regs.rip = func;
    regs.rax = 0;
    regs.orig_rax = (uint64_t)-1; /* never let the kernel restart an interrupted call here */
    uint64_t set_aside = 0;
    int rc = mem_write(p->mem_fd, regs.rsp, &ret, sizeof(ret));
    if (rc == 0)
        rc = (int)ptrace(PTRACE_SETREGS, tid, 0, &regs);
    if (rc == 0)
        rc = run_call(p, tid, ret + 1, &set_aside);
    if (rc == 0 && ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
        rc = -1;
    int saved_errno = errno;
    if (ptrace(PTRACE_SETREGS, tid, 0, &saved) < 0 && rc == 0)
        rc = -1;
    for (int sig = 1; sig <= 64; sig++)
        if (set_aside & (1ull << (sig - 1)))
            syscall(SYS_tgkill, p->pid, tid, sig);
    errno = saved_errno;
    if (rc == 0)
        *result = regs.rax;
    dbg(DBG_PROBE, 3, "remote call %#llx in %d -> %#llx", (unsigned long long)func, (int)tid,
        rc == 0 ? (unsigned long long)regs.rax : 0ull);
    return rc;
}
