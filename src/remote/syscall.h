/* Makes a stopped tracee thread run one system call for calltrace (mmap of the scratch page).
 *
 *   saved = regs; regs.rax = nr, rdi.. = args, rip = gadget ("syscall; int3")
 *   continue -> the thread traps on the int3 -> rax is the result -> regs = saved
 *
 * Before the address space has a scratch page, the gadget is written over the thread's current
 * instruction and put back afterwards. */
#ifndef CALLTRACE_REMOTE_SYSCALL_H
#define CALLTRACE_REMOTE_SYSCALL_H

#include <stdint.h>
#include <sys/types.h>

#include "tracer/tracee.h"

/* Returns 0 and the system call's raw return value in *result, or -1 (thread gone, errno set). */
int remote_syscall(struct process *p, pid_t tid, long nr, const uint64_t args[6], uint64_t *result);

/* A thread stopped at PTRACE_EVENT_EXEC is still inside execve, which stores its result in
 * rax after the stop: a remote system call set up there would run with rax clobbered. This lets
 * the thread return to user space and trap on its first instruction, not yet executed. */
int remote_leave_syscall(struct process *p, pid_t tid);

#endif
