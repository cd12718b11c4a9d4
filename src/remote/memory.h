/* Tracee memory through /proc/PID/mem: one pread or pwrite per access (PTRACE_PEEKDATA costs a
 * system call per 8 bytes), and it writes read-only text pages, which process_vm_writev cannot. */
#ifndef CALLTRACE_REMOTE_MEMORY_H
#define CALLTRACE_REMOTE_MEMORY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

int mem_open(pid_t pid);
/* 0 when all len bytes were transferred, else -1 with errno set. */
int mem_read(int fd, uint64_t addr, void *buf, size_t len);
int mem_write(int fd, uint64_t addr, const void *buf, size_t len);

#endif
