/* The breakpoint backend's table (tracer/backend.h): an int3 at every traced entry and return
 * site; each call is two ptrace stops (trap.c), nothing runs in the program on calltrace's
 * behalf but the displaced instructions. Every process has breakpoints, whatever its backend:
 * the controller's own hooks, and the inject backend's fallbacks. */
#include "tracer/breakpoint/breakpoints.h"

#include "tracer/backend.h"
#include "util/log.h"

/* The implementations no other backend traced (not done): each gets an entry breakpoint. */
static long trace_ifuncs(struct session *s, struct process *p, pid_t via, uint32_t image_id,
                         uint64_t bias, struct ifunc_impl *impls, size_t n)
{
    (void)bias;
    long traced = 0;
    for (size_t i = 0; i < n; i++) {
        if (impls[i].done)
            continue;
        if (!session_may_break(s)) { /* attached: an int3 could outlive calltrace */
            dbg(DBG_SYMBOLS, 1, "IFUNC %s: left out (attached: no breakpoint)", impls[i].name);
            s->stats.left_out_functions++;
            continue;
        }
        int rc = probe_insert_function(s, p, via, image_id, impls[i].impl, impls[i].name,
                                       impls[i].lib_call);
        if (rc < 0)
            break;
        if (rc > 0)
            dbg(DBG_SYMBOLS, 2, "IFUNC %s: traced at %#llx", impls[i].name,
                (unsigned long long)impls[i].impl);
        traced += rc;
    }
    return traced;
}

static void forget_library(struct session *s, struct process *p, uint64_t lo, uint64_t hi,
                           uint32_t func_lo, uint32_t func_hi)
{
    (void)s;
    probe_forget(p->as, lo, hi, func_lo, func_hi);
}

static bool insert_hook(struct session *s, struct process *p, pid_t tid, uint64_t addr)
{
    return probe_insert_hook(s, p, tid, addr) != NULL;
}

const struct tracer_backend breakpoint_backend = {
    .name = "breakpoints",
    /* relocated instructions end with a jump back: a few steps always get out */
    .detach_steps = 16,
    .trace_image = probe_insert_entries,
    .trace_library = probe_insert_entries,
    .forget_library = forget_library,
    .trace_ifuncs = trace_ifuncs,
    .on_trap = breakpoint_on_trap,
    .trap_resume_at = breakpoint_resume_at,
    .insert_hook = insert_hook,
};
