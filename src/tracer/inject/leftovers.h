/* What a detach leaves in a program, and what a later attachment does with it.
 *
 * Detaching, once every entry and hooked return address is back (running_threads.c), the program
 * keeps nothing of calltrace's unless a frame of it may still run there (tracer/stack_scan.h: a
 * signal handler that interrupted a trampoline or a relocated prologue and is still running, a
 * thread left on a hop or in the code, a return address that could not be put back):
 *
 *   no frame uses them     every code region, the whole region (the memfd's mapping and the
 *                          shadow stacks in it) unmapped; each thread's word in its thread
 *                          control block (fs:0x80) 0 again, as glibc left it
 *   a frame of thread T    kept, private to the program: the code regions, the region's header
 *   may use them           page and T's slot (control block, shadow stack, ring), where that
 *                          frame's trampoline reads and writes; the control block says calltrace
 *                          gave up (no wait, no request) and names no process to signal
 *                          (NO_CONSUMER); everything else unmapped. The header lists what was
 *                          kept (REGION_KEPT)
 *
 * A later attachment finds the kept sets (from their code regions, whose blob copies name the
 * header, and from the threads' words), leaves a thread whose frames still use one on its old
 * block, untraced, and at its own detach unmaps each kept set no frame uses any more. What stays
 * is bounded by the frames that use it, not by the number of attachments. A killed calltrace's
 * leftovers (a header without the mark) are not touched. */
#ifndef CALLTRACE_TRACER_INJECT_LEFTOVERS_H
#define CALLTRACE_TRACER_INJECT_LEFTOVERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracer/stack_scan.h"
#include "tracer/tracee.h"

/* What an earlier detach kept: its header, the ranges it lists, its trampolines' exits. */
struct kept_set {
    uint64_t header;
    struct addr_range *ranges;
    size_t nranges;
    uint64_t *returns;
    size_t nreturns;
};

struct inject_space;

/* Attaching to p (every thread stopped): notes the sets earlier detaches kept, found from the
 * code regions in p's maps. */
void leftovers_find(struct process *p, struct inject_space *sp);
/* Notes the kept set whose header is header, if it is one (found through a thread's word). */
void leftovers_note(struct process *p, struct inject_space *sp, uint64_t header);
/* The kept set whose ranges hold addr, or NULL. */
const struct kept_set *leftovers_at(const struct inject_space *sp, uint64_t addr);
void leftovers_free(struct inject_space *sp);

/* Detaching from p, every entry and return address back: unmaps what no frame of hs uses, of
 * this attachment and of the kept sets; keeps the rest as said above. -1 when something could
 * not be unmapped (said with -v). */
int leftovers_release(struct inject_space *sp, struct process *p, const struct held_stacks *hs);

#endif
