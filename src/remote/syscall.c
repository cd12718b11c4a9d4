#include "remote/syscall.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/ptrace.h>

#include "arch/x86_64/machine.h"
#include "remote/memory.h"
#include "remote/run.h"
#include "util/log.h"

static const uint8_t gadget_code[ARCH_SYSCALL_GADGET_LEN] = ARCH_SYSCALL_GADGET;
static const uint8_t breakpoint_code[ARCH_BREAKPOINT_LEN] = {ARCH_BREAKPOINT_BYTE};

int remote_syscall(struct remote_target t, long nr, const uint64_t args[6], uint64_t *result)
{
    arch_regs saved, regs;
    if (ptrace(PTRACE_GETREGS, t.tid, NULL, &saved) < 0)
        return -1;
    uint64_t gadget = t.gadget;
    uint8_t displaced[sizeof(gadget_code)];
    bool borrowed = !gadget;
    if (borrowed) {
        gadget = arch_pc(&saved);
        if (mem_read(t.mem_fd, gadget, displaced, sizeof(displaced)) < 0 ||
            mem_write(t.mem_fd, gadget, gadget_code, sizeof(gadget_code)) < 0)
            return -1;
    }
    regs = saved;
    arch_setup_syscall(&regs, nr, args, gadget);
    int rc = (int)ptrace(PTRACE_SETREGS, t.tid, NULL, &regs);
    if (rc == 0)
        rc = remote_run_to(&t, gadget + sizeof(gadget_code), NULL);
    if (rc == 0 && ptrace(PTRACE_GETREGS, t.tid, NULL, &regs) < 0)
        rc = -1;
    int saved_errno = errno;
    if (borrowed && mem_write(t.mem_fd, gadget, displaced, sizeof(displaced)) < 0)
        dbg(DBG_PROBE, 1, "thread %d: cannot put back the code under a system call", (int)t.tid);
    if (ptrace(PTRACE_SETREGS, t.tid, NULL, &saved) < 0 && rc == 0)
        return -1;
    errno = saved_errno;
    if (rc == 0)
        *result = arch_retval(&regs);
    dbg(DBG_PROBE, 3, "remote syscall %ld in %d -> %#llx", nr, (int)t.tid,
        rc == 0 ? (unsigned long long)arch_retval(&regs) : 0ull);
    return rc;
}

int remote_leave_syscall(struct remote_target t)
{
    arch_regs regs;
    if (ptrace(PTRACE_GETREGS, t.tid, NULL, &regs) < 0)
        return -1;
    uint64_t pc = arch_pc(&regs);
    uint8_t orig[sizeof(breakpoint_code)];
    if (mem_read(t.mem_fd, pc, orig, sizeof(orig)) < 0 ||
        mem_write(t.mem_fd, pc, breakpoint_code, sizeof(breakpoint_code)) < 0)
        return -1;
    int rc = remote_run_to(&t, pc + sizeof(breakpoint_code), NULL);
    int saved_errno = errno;
    if (mem_write(t.mem_fd, pc, orig, sizeof(orig)) < 0)
        dbg(DBG_PROBE, 1, "thread %d: cannot put back the code under a trap", (int)t.tid);
    if (rc == 0 && ptrace(PTRACE_POKEUSER, t.tid, (void *)ARCH_PC_USER_OFFSET, (void *)pc) < 0)
        return -1;
    errno = saved_errno;
    return rc;
}
