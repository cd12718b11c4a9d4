/* -A/-R under the breakpoint backend: at an entry or return-site stop, the values a function's
 * capture plan names are read from the stopped thread (its registers, its memory) into
 * REC_ARGS and REC_RETVAL records, through tracer/values_record.h like the inject backend's. */
#ifndef CALLTRACE_TRACER_BREAKPOINT_STOP_VALUES_H
#define CALLTRACE_TRACER_BREAKPOINT_STOP_VALUES_H

#include <stdint.h>

#include "arch/x86_64/machine.h"
#include "tracer/tracee.h"

/* Thread t stopped at the entry of function func, with registers regs. */
void capture_at_entry(struct session *s, struct thread *t, uint32_t func, const arch_regs *regs);
/* Thread t stopped where function func returned to, with registers regs. */
void capture_at_return(struct session *s, struct thread *t, uint32_t func, const arch_regs *regs);

#endif
