/* The thread a remote-process primitive works through, and what it needs of its process. */
#ifndef CALLTRACE_REMOTE_TARGET_H
#define CALLTRACE_REMOTE_TARGET_H

#include <stdint.h>
#include <sys/types.h>

struct remote_target {
    pid_t pid;       /* the process, to queue signals to its thread again (tgkill) */
    pid_t tid;       /* the thread, stopped by ptrace */
    int mem_fd;      /* the process's /proc/PID/mem (remote/memory.h) */
    uint64_t gadget; /* ARCH_SYSCALL_GADGET in its memory, 0: none there yet */
};

#endif
