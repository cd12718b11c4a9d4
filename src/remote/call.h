/* Makes a stopped tracee thread call a function of the program for calltrace: an IFUNC
 * resolver, to learn which implementation it picks on this machine.
 *
 *   saved = regs; rsp = below saved.rsp's red zone, aligned; push gadget+2 (an int3)
 *   rip = func -> the function returns onto the int3 -> rax is its result -> regs = saved
 *
 * Only for functions without side effects: if it faults, the call is abandoned (the registers
 * are put back, the fault is never delivered) and -1 returned. */
#ifndef CALLTRACE_REMOTE_CALL_H
#define CALLTRACE_REMOTE_CALL_H

#include <stdint.h>
#include <sys/types.h>

#include "tracer/tracee.h"

/* Calls func() with no arguments in thread tid of p; 0 and its rax in *result, or -1. Needs
 * the address space's scratch gadget (see scratch.h). */
int remote_call(struct process *p, pid_t tid, uint64_t func, uint64_t *result);

#endif
