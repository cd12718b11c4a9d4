/* Rewriting many return address slots of a stopped thread at once: one process_vm_readv and one
 * process_vm_writev for all of them, where a pread and a pwrite each would cost two system calls
 * per hooked frame at every stop of tracer/inject/unwind.c. */
#ifndef CALLTRACE_TRACER_INJECT_RETURN_SLOTS_H
#define CALLTRACE_TRACER_INJECT_RETURN_SLOTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Write want at addr if it holds expect, when its turn comes: the swaps are made in array order,
 * so a later swap of the same slot sees what an earlier one wrote. */
struct slot_swap {
    uint64_t addr;
    uint64_t expect;
    uint64_t want;
};

/* Makes the n swaps in process pid (mem_fd: its /proc/PID/mem, for what process_vm_* cannot
 * reach). Reorders swaps. Returns the number of slots written. */
size_t return_slots_swap(pid_t pid, int mem_fd, struct slot_swap *swaps, size_t n);

#endif
