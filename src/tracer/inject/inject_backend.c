/* The inject backend's table (tracer/backend.h). Its calls are caught inside the program: a
 * patched entry jumps to a trampoline that writes the entry event into the thread's ring and
 * hooks the return address, whose exit event the trampoline writes too (inject.h); calltrace
 * drains the rings while it waits for ptrace stops. What it cannot patch gets breakpoints, so
 * the breakpoint backend's trap handling serves its processes too. */
#include <sys/ptrace.h>

#include "tracer/inject/inject.h"
#include "tracer/breakpoint/breakpoints.h"

static void forget_library(struct session *s, struct process *p, uint64_t lo, uint64_t hi,
                           uint32_t func_lo, uint32_t func_hi)
{
    (void)func_lo;
    (void)func_hi;
    inject_forget_library(s, p, lo, hi);
}

/* The controller's wait, with the rings drained meanwhile once a process has some. */
static bool wait_stop(struct session *s, struct ptrace_stop *stop, int *got)
{
    if (!inject_has_rings(s))
        return false;
    *got = inject_wait(s, stop);
    return true;
}

const struct tracer_backend inject_backend = {
    .name = "inject",
    /* a vfork child's control block comes back at vfork-done */
    .attach_options = PTRACE_O_TRACEVFORKDONE,
    /* the trampolines take a few dozen steps (their only loop, waiting for room in a ring, ends
     * once the rings are drained). A thread must be out before its calls are unhooked: one let
     * go inside an entry would hook its call after that, with no unwinder hook left to unhook
     * it at a throw (terminate). */
    .detach_steps = 4096,
    .trace_image = inject_trace_image,
    .trace_library = inject_trace_library,
    .forget_library = forget_library,
    .patched_at = inject_patched_at,
    .trace_ifuncs = inject_trace_ifuncs,
    .callers_changed = inject_callers_changed,
    .watches_libraries = inject_traces,
    .on_library = inject_on_library,
    .on_hook = inject_on_hook,
    .on_trap = breakpoint_on_trap,
    .before_trap = inject_drain_thread,
    .hooked_return = inject_hooked_return,
    .thread_start = inject_thread_start,
    .on_thread_exit = inject_on_thread_exit,
    .on_clone = inject_on_clone,
    .on_fork = inject_on_fork,
    .on_vfork_done = inject_on_vfork_done,
    .on_handover = inject_on_handover,
    .release_child = inject_release_child,
    .in_stale_code = inject_in_stale_code,
    .attach_threads = inject_attach_threads,
    .wait_stop = wait_stop,
    .drain = inject_drain,
    .detach = inject_detach,
    .dropped_calls = inject_dropped_calls,
    .drop_causes = inject_drop_causes,
    .own_code = inject_own_code,
    .lost_returns = inject_lost_returns,
    .corrupt_events = inject_corrupt_events,
    .insert_hook = inject_insert_linker_hook,
};
