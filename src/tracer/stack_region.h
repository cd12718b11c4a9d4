/* Which stack a stack pointer is on (the thread's own, or a signal handler's alternate stack),
 * named by the end address of its mapping, so frames are only compared within one stack. */
#ifndef CALLTRACE_TRACER_STACK_REGION_H
#define CALLTRACE_TRACER_STACK_REGION_H

#include <stdint.h>

#include "tracer/tracee.h"

uint64_t stack_region(struct thread *t, uint64_t sp);

#endif
