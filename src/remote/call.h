/* Makes a stopped tracee thread call a function of the program for calltrace: an IFUNC
 * resolver, to learn which implementation it picks on this machine.
 *
 *   saved = regs; sp = below saved sp's red zone, aligned; return address = the gadget's trap
 *   pc = func -> the function returns onto the trap -> its result -> regs = saved
 *
 * Only for functions without side effects: if it faults, the call is abandoned (the registers
 * are put back, the fault is never delivered) and -1 returned. */
#ifndef CALLTRACE_REMOTE_CALL_H
#define CALLTRACE_REMOTE_CALL_H

#include <stdint.h>

#include "remote/run.h"
#include "remote/target.h"

/* Calls func() with no arguments in t's thread; 0 and its result in *result, or -1. Needs t's
 * gadget (the function returns onto its trap). traps: calltrace's breakpoints the function may
 * run into, passed as the tracer would, without recording anything (NULL: none). */
int remote_call(struct remote_target t, uint64_t func, const struct remote_traps *traps,
                uint64_t *result);

#endif
