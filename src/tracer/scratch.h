/* Scratch pages calltrace maps into the tracee near the code they serve (rip-relative operands
 * and rel32 jumps reach +-2 GiB), where displaced instructions run out of line. The first one
 * starts with the system call gadget, which remote/ runs its system calls and calls through. */
#ifndef CALLTRACE_TRACER_SCRATCH_H
#define CALLTRACE_TRACER_SCRATCH_H

#include <stddef.h>
#include <stdint.h>

#include "tracer/tracee.h"
#include "remote/target.h"
#include "tracer/addrspace.h"

#define SCRATCH_SLOT 64
/* The room the gadget takes at the start of an address space's first chunk. */
#define SCRATCH_GADGET_ROOM 16

/* Room for len bytes within reach of near, mapping a new chunk (through a remote mmap in the
 * stopped thread tid) when none has room. Returns the address, or 0. min_chunk sizes a new one. */
uint64_t scratch_alloc(struct process *p, pid_t tid, uint64_t near, size_t len, size_t min_chunk);

/* Unmaps every chunk of p's address space, through its stopped thread tid (the chunk that holds
 * the gadget last, the gadget then written over tid's instruction for that one call and put
 * back), and forgets them. Detaching: nothing may run there any more. 0, or -1 when one could
 * not be unmapped (it is forgotten all the same). */
int scratch_release(struct process *p, pid_t tid);

/* Thread tid of p, as remote/'s primitives work through it: p's memory, and the gadget of its
 * address space's scratch page (0 before the first). */
static inline struct remote_target process_target(const struct process *p, pid_t tid)
{
    return (struct remote_target){
        .pid = p->pid, .tid = tid, .mem_fd = p->mem_fd, .gadget = p->as->syscall_gadget};
}

#endif
