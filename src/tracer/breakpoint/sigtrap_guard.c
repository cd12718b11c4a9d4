#include "tracer/breakpoint/sigtrap_guard.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include "arch/x86_64/machine.h"
#include "tracer/addrspace.h"
#include "remote/memory.h"
#include "remote/syscall.h"
#include "tracer/scratch.h"
#include "util/log.h"

/* Below the red zone of the stopped thread: free stack for the kernel to read and write. */
#define STACK_SCRATCH_OFFSET 1024

static int remote_sigaction(struct thread *t, const struct kernel_sigaction *set,
                            struct kernel_sigaction *old)
{
    arch_regs regs;
    if (ptrace(PTRACE_GETREGS, t->tid, 0, &regs) < 0)
        return -1;
    uint64_t buf = (arch_sp(&regs) - STACK_SCRATCH_OFFSET) & ~(uint64_t)(ARCH_STACK_ALIGN - 1);
    if (set && mem_write(t->proc->mem_fd, buf, set, sizeof(*set)) < 0)
        return -1;
    /* the kernel's sigset_t is 8 bytes on x86_64, not glibc's 128 */
    uint64_t args[6] = {SIGTRAP, set ? buf : 0, set ? 0 : buf, 8, 0, 0};
    uint64_t rc;
    if (remote_syscall(process_target(t->proc, t->tid), SYS_rt_sigaction, args, &rc) < 0 || rc != 0)
        return -1;
    if (old && mem_read(t->proc->mem_fd, buf, old, sizeof(*old)) < 0)
        return -1;
    return 0;
}

void sigtrap_guard_learn(struct thread *t)
{
    struct process *p = t->proc;
    if (p->trap_watch || !p->as || !p->as->syscall_gadget)
        return;
    siginfo_t si;
    if (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) < 0)
        return;
    struct kernel_sigaction action;
    if (remote_sigaction(t, NULL, &action) == 0 && action.handler != 0) {
        p->trap_action = action;
        p->trap_watch = true;
        dbg(DBG_ENGINE, 1, "process %d has its own SIGTRAP disposition: guarding it", (int)p->pid);
    }
    /* The remote call went through a trap of its own: deliver the program's signal as it was. */
    ptrace(PTRACE_SETSIGINFO, t->tid, 0, &si);
}

/* Is SIGTRAP caught or ignored, per /proc/TID/status? -1 when unreadable. */
static int sigtrap_disposed(pid_t tid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    unsigned long long ign = 0, cgt = 0;
    while (fgets(line, sizeof(line), f)) {
        sscanf(line, "SigIgn: %llx", &ign);
        sscanf(line, "SigCgt: %llx", &cgt);
    }
    fclose(f);
    return ((ign | cgt) >> (SIGTRAP - 1)) & 1;
}

void sigtrap_guard_check(struct thread *t)
{
    struct process *p = t->proc;
    if (!p->trap_watch || sigtrap_disposed(t->tid) != 0)
        return;
    /* The handler first: the remote call ends on an int3, which would reset it again if
     * SIGTRAP were already blocked. */
    if (remote_sigaction(t, &p->trap_action, NULL) < 0) {
        dbg(DBG_ENGINE, 1, "process %d: cannot restore its SIGTRAP handler", (int)p->pid);
        return;
    }
    /* The kernel only resets a handler it found blocked: block it again for this thread. */
    uint64_t mask;
    if (p->trap_action.handler != (uint64_t)(uintptr_t)SIG_IGN &&
        ptrace(PTRACE_GETSIGMASK, t->tid, sizeof(mask), &mask) == 0) {
        mask |= 1ull << (SIGTRAP - 1);
        ptrace(PTRACE_SETSIGMASK, t->tid, sizeof(mask), &mask);
    }
}
