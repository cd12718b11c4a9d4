/* Scratch pages mapped into the tracee near the code they serve (rip-relative operands and
 * rel32 jumps reach +-2 GiB), where displaced instructions run out of line. */
#ifndef CALLTRACE_REMOTE_SCRATCH_H
#define CALLTRACE_REMOTE_SCRATCH_H

#include <stddef.h>
#include <stdint.h>

#include "tracer/tracee.h"

#define SCRATCH_SLOT 64

/* Room for len bytes within reach of near, mapping a new chunk (through a remote mmap in the
 * stopped thread tid) when none has room. Returns the address, or 0. min_chunk sizes a new one. */
uint64_t scratch_alloc(struct process *p, pid_t tid, uint64_t near, size_t len, size_t min_chunk);

#endif
