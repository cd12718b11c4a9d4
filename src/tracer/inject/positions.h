/* Where the threads of a stopped process may go on running in its code: what a patch must not
 * cut in the middle of. */
#ifndef CALLTRACE_TRACER_INJECT_POSITIONS_H
#define CALLTRACE_TRACER_INJECT_POSITIONS_H

#include <stddef.h>
#include <stdint.h>

#include "tracer/tracee.h"

/* Every address in [lo, hi) at which a thread of p (all stopped) may resume: its rip, the
 * rip an interrupted system call restarts at, and the code addresses on its stack near its
 * stack pointer (the return addresses, and the rip a signal frame resumes at when the handler
 * returns). Sorted, in *out (to free); returns how many, 0 with *out NULL when out of memory. */
size_t thread_positions(struct session *s, const struct process *p, uint64_t lo, uint64_t hi,
                        uint64_t **out);

#endif
