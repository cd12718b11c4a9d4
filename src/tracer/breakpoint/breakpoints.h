/* Breakpoints: an int3 over the first byte of a function entry or a return site, and the
 * out-of-line copy of the instruction it displaced. Never removed while the program runs. */
#ifndef CALLTRACE_TRACER_BREAKPOINT_BREAKPOINTS_H
#define CALLTRACE_TRACER_BREAKPOINT_BREAKPOINTS_H

#include <stdint.h>

#include "tracer/tracee.h"
#include "tracer/addrspace.h"
#include "symbols/elf_image.h"

struct tracer_backend;

/* The breakpoint backend's table (breakpoint_backend.c). */
extern const struct tracer_backend breakpoint_backend;

/* A SIGTRAP stop of t, at now (trap.c): one of calltrace's breakpoints, handled (its entry or
 * return recorded, rip past it), or a trap of the program's own. Returns the signal to resume
 * t with, or -1 when t cannot be read (gone). */
int breakpoint_on_trap(struct session *s, struct thread *t, uint64_t now);

/* Puts a breakpoint on every traced function of image, loaded at bias in p (stopped thread tid
 * serves remote calls). Assigns function ids and records them. Returns the number of functions
 * traced, or -1 when nothing could be set up. */
long probe_insert_entries(struct session *s, struct process *p, pid_t tid,
                          const struct elf_image *image, uint64_t bias);

/* Makes addr, a return address of a traced call, a return site. Returns its breakpoint (kinds 0
 * when it cannot be instrumented: its calls end when the engine sees they are over), or NULL. */
struct breakpoint *probe_return_site(struct session *s, struct process *p, pid_t tid,
                                     uint64_t addr);

/* Traces the one function at runtime address addr (an implementation an IFUNC resolver chose)
 * under name, as part of image image_id (lib_call: at the program's boundary, -L). Returns 1
 * when traced, 0 when not, -1 out of memory. */
int probe_insert_function(struct session *s, struct process *p, pid_t tid, uint32_t image_id,
                          uint64_t addr, const char *name, bool lib_call);

/* Puts an entry breakpoint on the one function f of image path (loaded at bias in p), as part
 * of image image_id: the inject engine's fallback for a function it cannot patch safely.
 * Returns 1 when traced, 0 when not (-v says why), -1 out of memory. */
int probe_insert_symbol(struct session *s, struct process *p, pid_t tid, uint32_t image_id,
                        const char *path, const struct func_symbol *f, uint64_t bias);

/* A BP_HOOK breakpoint at addr: the engine is told when a thread passes there, and the thread
 * goes on as if nothing happened. Returns it, or NULL when it cannot be placed. */
struct breakpoint *probe_insert_hook(struct session *s, struct process *p, pid_t tid,
                                     uint64_t addr);

/* Forgets, without touching the program's memory, every breakpoint in [lo, hi) and every entry
 * of a function with an id in [func_lo, func_hi): the code they were in has been unmapped, and
 * whatever is mapped there next is not ours to write. */
void probe_forget(struct addrspace *as, uint64_t lo, uint64_t hi, uint32_t func_lo,
                  uint32_t func_hi);

/* Where a thread that trapped on the breakpoint at addr in address space as (a struct
 * addrspace) goes on, or 0 when there is none of calltrace's there: struct remote_traps's
 * resume_at, for code run remotely that may pass traced functions. */
uint64_t breakpoint_resume_at(void *as, uint64_t addr);

#endif
