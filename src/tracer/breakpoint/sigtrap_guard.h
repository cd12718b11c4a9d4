/* Keeping the program's own SIGTRAP handler alive.
 *
 * An int3 raises SIGTRAP through the kernel's force_sig: when the program has SIGTRAP blocked at
 * that moment (inside its own SIGTRAP handler, for one), the kernel resets the handler to
 * SIG_DFL and unblocks it, before calltrace even sees the stop. The program's next SIGTRAP
 * would then kill it. Programs with a SIGTRAP disposition of their own are found when their
 * first SIGTRAP arrives; from then on each breakpoint stop in them checks the disposition and
 * puts it back when the kernel took it away. Other programs pay nothing. */
#ifndef CALLTRACE_TRACER_BREAKPOINT_SIGTRAP_GUARD_H
#define CALLTRACE_TRACER_BREAKPOINT_SIGTRAP_GUARD_H

#include "tracer/tracee.h"

/* The program's own SIGTRAP is about to be delivered to t: remember its disposition. */
void sigtrap_guard_learn(struct thread *t);
/* After one of calltrace's breakpoints stopped t: restore what the kernel reset. */
void sigtrap_guard_check(struct thread *t);

#endif
