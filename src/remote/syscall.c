#include "remote/syscall.h"

#include <errno.h>
#include <stddef.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tracer/addrspace.h"
#include "remote/memory.h"
#include "util/log.h"

static const uint8_t gadget_code[] = {0x0f, 0x05, 0xcc}; /* syscall; int3 */

static int wait_for_trap(pid_t tid, uint64_t trap_rip, uint64_t *set_aside);

/* A fault of the thread's own instruction: the kernel's (si_code > 0), not a kill()'s. */
static bool own_fault(pid_t tid, int sig)
{
    siginfo_t si;
    if (sig != SIGSEGV && sig != SIGBUS && sig != SIGILL && sig != SIGFPE)
        return false;
    return ptrace(PTRACE_GETSIGINFO, tid, 0, &si) == 0 && si.si_code > 0;
}

/* Resumes tid and waits for the trap after the system call. Signals that arrive meanwhile are
 * set aside and queued again with tgkill once the trap is reached, so the program still gets
 * them afterwards (queueing them at once would only make the next resume stop on them again). */
static int run_until_trap(pid_t pid, pid_t tid, uint64_t trap_rip)
{
    uint64_t set_aside = 0;
    int rc = wait_for_trap(tid, trap_rip, &set_aside);
    for (int sig = 1; sig <= 64; sig++)
        if (set_aside & (1ull << (sig - 1)))
            syscall(SYS_tgkill, pid, tid, sig);
    return rc;
}

static int wait_for_trap(pid_t tid, uint64_t trap_rip, uint64_t *set_aside)
{
    if (ptrace(PTRACE_CONT, tid, 0, 0) < 0)
        return -1;
    for (;;) {
        int status;
        pid_t got = waitpid(tid, &status, __WALL);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -1;
        if (!WIFSTOPPED(status)) {
            errno = ESRCH;
            return -1;
        }
        int sig = WSTOPSIG(status);
        if ((status >> 16) == 0 && own_fault(tid, sig)) {
            /* Not one to set aside: resumed without it, the thread runs the same instruction
             * into the same fault, for ever (the gadget's page not mapped in this process, say).
             * The caller puts its registers back; its next resume drops the signal. */
            dbg(DBG_PROBE, 1, "thread %d: signal %d in calltrace's system call: given up", (int)tid,
                sig);
            errno = EFAULT;
            return -1;
        }
        if (sig == SIGTRAP && (status >> 16) == 0) {
            struct user_regs_struct regs;
            if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
                return -1;
            if (regs.rip == trap_rip)
                return 0;
        }
        if ((status >> 16) == 0 && sig != SIGTRAP)
            *set_aside |= 1ull << (sig - 1);
        if (ptrace(PTRACE_CONT, tid, 0, 0) < 0)
            return -1;
    }
}

int remote_syscall(struct process *p, pid_t tid, long nr, const uint64_t args[6], uint64_t *result)
{
    struct user_regs_struct saved, regs;
    if (ptrace(PTRACE_GETREGS, tid, 0, &saved) < 0)
        return -1;
    uint64_t gadget = p->as->syscall_gadget;
    uint8_t displaced[sizeof(gadget_code)];
    bool borrowed = !gadget;
    if (borrowed) {
        gadget = saved.rip;
        if (mem_read(p->mem_fd, gadget, displaced, sizeof(displaced)) < 0 ||
            mem_write(p->mem_fd, gadget, gadget_code, sizeof(gadget_code)) < 0)
            return -1;
    }
    regs = saved;
    regs.rax = (uint64_t)nr;
    regs.orig_rax = (uint64_t)-1; /* never let the kernel restart an interrupted call here */
    regs.rdi = args[0];
    regs.rsi = args[1];
    regs.rdx = args[2];
    regs.r10 = args[3];
    regs.r8 = args[4];
    regs.r9 = args[5];
    regs.rip = gadget;
    int rc = ptrace(PTRACE_SETREGS, tid, 0, &regs);
    if (rc == 0)
        rc = run_until_trap(p->pid, tid, gadget + 3);
    if (rc == 0 && ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
        rc = -1;
    int saved_errno = errno;
    if (borrowed)
        mem_write(p->mem_fd, gadget, displaced, sizeof(displaced));
    if (ptrace(PTRACE_SETREGS, tid, 0, &saved) < 0 && rc == 0)
        return -1;
    errno = saved_errno;
    if (rc == 0)
        *result = regs.rax;
    dbg(DBG_PROBE, 3, "remote syscall %ld in %d -> %#llx", nr, (int)tid,
        rc == 0 ? (unsigned long long)regs.rax : 0ull);
    return rc;
}

int remote_leave_syscall(struct process *p, pid_t tid)
{
    struct user_regs_struct regs;
    if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
        return -1;
    uint8_t orig;
    static const uint8_t int3 = 0xcc;
    if (mem_read(p->mem_fd, regs.rip, &orig, 1) < 0 || mem_write(p->mem_fd, regs.rip, &int3, 1) < 0)
        return -1;
    int rc = run_until_trap(p->pid, tid, regs.rip + 1);
    int saved_errno = errno;
    mem_write(p->mem_fd, regs.rip, &orig, 1);
    if (rc == 0 &&
        ptrace(PTRACE_POKEUSER, tid, offsetof(struct user_regs_struct, rip), regs.rip) < 0)
        return -1;
    errno = saved_errno;
    return rc;
}
