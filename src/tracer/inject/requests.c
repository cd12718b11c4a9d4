/* The requests of in-process hooks that need calltrace (arch/ring_abi.h HOOK_LINKER: the dynamic
 * linker's list of libraries changed in a program calltrace attached to): found as calltrace
 * waits, between two passes over the rings, and answered as a breakpoint stop there would be.
 *
 *   program thread (in inject_blob_hook)          calltrace (inject_wait)
 *   CTL_HOOK_REQ = ack + 1
 *   kill(calltrace, SIGCHLD) ───────────────────> wakes; REQ > ACK in the thread's block
 *   futex wait on CTL_HOOK_ACK (1 ms a turn)       s->on_hook_request: the thread is stopped,
 *                                                  the new libraries patched, the thread resumed
 *                                 <─────────────── CTL_HOOK_ACK = REQ, futex wake
 *   back in _dl_debug_state
 *
 * calltrace gone, the thread waits as long as calltrace's progress word moved, ~200 ms, once
 * (REGION_GONE); detaching, every request is answered unserved (the libraries are not calltrace's
 * business any more). */
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tracer/inject/inject.h"
#include "tracer/inject/space.h"
#include "util/log.h"

#define MAX_REQUESTS 64 /* served a pass; the others wait for the next one */

struct request {
    pid_t pid, tid;
    int slot;
    uint64_t req;
};

static void answer(uint8_t *ctl, uint64_t req)
{
    space_store(ctl, CTL_HOOK_ACK, req);
    syscall(SYS_futex, ctl + CTL_HOOK_ACK, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static size_t pending(struct session *s, struct request *out)
{
    size_t n = 0;
    ADDR_MAP_FOREACH(&s->inject->spaces, slot)
    {
        struct inject_space *sp = slot->value;
        space_store(sp->local, REGION_GONE, 0); /* calltrace is here */
        for (int i = 0; i < REGION_SLOTS && n < MAX_REQUESTS; i++) {
            uint8_t *ctl = space_ctl(sp, i);
            uint64_t req = space_load(ctl, CTL_HOOK_REQ);
            if (sp->slot_tid[i] && req > space_load(ctl, CTL_HOOK_ACK))
                out[n++] = (struct request){sp->pid, sp->slot_tid[i], i, req};
        }
    }
    return n;
}

/* Serving one may change what the others refer to (the thread ends, or its process execs and
 * gets a new region): each is looked up again before it is answered. */
void inject_serve_requests(struct session *s)
{
    struct request r[MAX_REQUESTS];
    size_t n = pending(s, r);
    for (size_t k = 0; k < n; k++) {
        struct inject_space *sp = addr_map_get(&s->inject->spaces, (uint64_t)r[k].pid);
        struct thread *t = thread_find(s, r[k].tid);
        if (!sp || sp->slot_tid[r[k].slot] != r[k].tid)
            continue;
        if (t && !s->detaching && sp->linker_hook && s->on_hook_request)
            s->on_hook_request(s, t, sp->linker_hook, clock_ticks(s->clock));
        else
            dbg(DBG_INJECT, 1, "thread %d: a request of the dynamic linker's hook left unserved",
                (int)r[k].tid);
        sp = addr_map_get(&s->inject->spaces, (uint64_t)r[k].pid);
        if (sp && sp->slot_tid[r[k].slot] == r[k].tid)
            answer(space_ctl(sp, r[k].slot), r[k].req);
    }
}
