/* Makes a stopped tracee thread run one system call for calltrace (mmap of the scratch page).
 *
 *   saved = regs; regs = the call's number and arguments, pc = gadget ("syscall; int3")
 *   continue -> the thread traps after the system call -> its result -> regs = saved
 *
 * Before the process has a gadget, one is written over the thread's current instruction and
 * the instruction put back afterwards. */
#ifndef CALLTRACE_REMOTE_SYSCALL_H
#define CALLTRACE_REMOTE_SYSCALL_H

#include <stdint.h>

#include "remote/target.h"

/* Returns 0 and the system call's raw return value in *result, or -1 (thread gone, errno set). */
int remote_syscall(struct remote_target t, long nr, const uint64_t args[6], uint64_t *result);

/* A thread stopped at PTRACE_EVENT_EXEC is still inside execve, which stores its result in
 * the result register after the stop: a remote system call set up there would run with its
 * number clobbered. This lets the thread return to user space and trap on its first
 * instruction, not yet executed. */
int remote_leave_syscall(struct remote_target t);

#endif
