#include "remote/call.h"

#include <errno.h>
#include <stddef.h>
#include <sys/ptrace.h>

#include "arch/x86_64/machine.h"
#include "remote/memory.h"
#include "util/log.h"

int remote_call(struct remote_target t, uint64_t func, const struct remote_traps *traps,
                uint64_t *result)
{
    if (!t.gadget) {
        errno = ENOENT;
        return -1;
    }
    arch_regs saved, regs;
    if (ptrace(PTRACE_GETREGS, t.tid, NULL, &saved) < 0)
        return -1;
    /* the trap that ends the gadget, after its system call instruction */
    uint64_t ret = t.gadget + ARCH_SYSCALL_GADGET_LEN - ARCH_BREAKPOINT_LEN;
    regs = saved;
    arch_setup_call(&regs, func, arch_call_sp(arch_sp(&saved)));
    int rc = mem_write(t.mem_fd, arch_sp(&regs), &ret, sizeof(ret));
    if (rc == 0)
        rc = (int)ptrace(PTRACE_SETREGS, t.tid, NULL, &regs);
    if (rc == 0)
        rc = remote_run_to(&t, ret + ARCH_BREAKPOINT_LEN, traps);
    if (rc == 0 && ptrace(PTRACE_GETREGS, t.tid, NULL, &regs) < 0)
        rc = -1;
    int saved_errno = errno;
    if (ptrace(PTRACE_SETREGS, t.tid, NULL, &saved) < 0 && rc == 0)
        rc = -1;
    errno = saved_errno;
    if (rc == 0)
        *result = arch_retval(&regs);
    dbg(DBG_PROBE, 3, "remote call %#llx in %d -> %#llx", (unsigned long long)func, (int)t.tid,
        rc == 0 ? (unsigned long long)arch_retval(&regs) : 0ull);
    return rc;
}
