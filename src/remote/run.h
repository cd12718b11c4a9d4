/* Runs a stopped thread until it traps at a given address, for a remote system call or call.
 *
 *   continue ─> stop ─┬─ trap at trap_pc ............................ done (0)
 *                     ├─ another trap: traps says where it goes on .. continue
 *                     │  (without traps it is dropped)                (not calltrace's: -1)
 *                     ├─ a fault of its own instruction ............. -1 (EFAULT)
 *                     ├─ another signal: set aside .................. continue
 *                     ├─ ptrace event, group stop, interrupt ........ continue
 *                     └─ the thread ended ........................... -1 (ESRCH)
 *
 * The signals set aside are queued to the thread again (tgkill) once the run is over, so the
 * program still gets them afterwards; queued at once, they would only stop the next resume. A
 * fault is not set aside: resumed without it, the thread would run the same instruction into
 * the same fault, for ever. The caller puts the registers back; its next resume drops it. */
#ifndef CALLTRACE_REMOTE_RUN_H
#define CALLTRACE_REMOTE_RUN_H

#include <stdint.h>

#include "remote/target.h"

/* calltrace's own traps (its breakpoints) that code run remotely may pass on its way. */
struct remote_traps {
    /* Where a thread that trapped on the trap at addr goes on, or 0 when that trap is not
     * calltrace's. */
    uint64_t (*resume_at)(void *ctx, uint64_t addr);
    void *ctx;
};

/* Continues t's thread until it stops with its program counter at trap_pc. traps: NULL when
 * no trap of calltrace's is on the way. Returns 0, or -1 with errno. */
int remote_run_to(const struct remote_target *t, uint64_t trap_pc,
                  const struct remote_traps *traps);

#endif
