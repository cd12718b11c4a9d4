/* In-process hooks on the entry of a function (entry_hook.c): what the inject engine puts where
 * the ptrace engine would stop a thread, in a program that may not get a breakpoint. */
#ifndef CALLTRACE_TRACER_INJECT_ENTRY_HOOK_H
#define CALLTRACE_TRACER_INJECT_ENTRY_HOOK_H

#include <stdint.h>
#include <sys/types.h>

#include "tracer/inject/space.h"

/* Hooks the entry addr of p (every thread stopped; via runs the system calls): a call of it goes
 * through inject_blob_hook with kind (a HOOK_* of arch/ring_abi.h) first. Returns NULL, or why
 * it could not be hooked (nothing was changed). */
const char *inject_hook_entry(struct session *s, struct process *p, struct inject_space *sp,
                              pid_t via, uint64_t addr, int kind);

#endif
