/* Breakpoints: an int3 over the first byte of a function entry or a return site, and the
 * out-of-line copy of the instruction it displaced. Never removed while the program runs. */
#ifndef CALLTRACE_PROBE_BREAKPOINTS_H
#define CALLTRACE_PROBE_BREAKPOINTS_H

#include <stdint.h>

#include "engine/session.h"
#include "probe/addrspace.h"
#include "symbols/elf_image.h"

/* Puts a breakpoint on every traced function of image, loaded at bias in p (stopped thread tid
 * serves remote calls). Assigns function ids and records them. Returns the number of functions
 * traced, or -1 when nothing could be set up. */
long probe_insert_entries(struct session *s, struct process *p, pid_t tid,
                          const struct elf_image *image, uint64_t bias);

/* Makes addr, a return address of a traced call, a return site. Returns its breakpoint (kinds 0
 * when it cannot be instrumented: its calls end when the engine sees they are over), or NULL. */
struct breakpoint *probe_return_site(struct session *s, struct process *p, pid_t tid,
                                     uint64_t addr);

#endif
