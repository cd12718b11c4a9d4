/* A thread that waits in an in-process hook (tracer/inject/requests.c: the dynamic linker's, in
 * a program calltrace attached to) is served as one stopped at a breakpoint there would be: it
 * is stopped first, so that calltrace may run its system calls in it (a new library's code
 * region) and nothing of it runs meanwhile (a signal handler writing its ring), then resumed,
 * with whatever it reported on the way handled as usual. */
#include <errno.h>
#include <sys/ptrace.h>

#include "control/control.h"
#include "remote/ptrace_stop.h"
#include "util/log.h"

/* Stops t: true once it is stopped (its signal to come kept in t->hold.status), false when it
 * is gone. A clone, fork or exec on the way is handled first, as the stop loop would. */
static bool stop_running(struct session *s, struct thread *t, uint64_t now)
{
    pid_t tid = t->tid;
    if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0)
        return false;
    for (;;) {
        struct ptrace_stop stop;
        int got = ptrace_stop_wait(tid, 0, &stop);
        if (got < 0 || !ptrace_stop_stopped(&stop)) {
            if (got > 0 && thread_find(s, tid))
                control_handle_stop(s, tid, stop.status, now); /* its end */
            return false;
        }
        if (stop.kind == STOP_SIGNAL || stop.kind == STOP_TRAP) {
            t->hold.status = stop.status; /* delivered when it goes on; the interrupt stops it
                                           * once more later, which the loop takes as any */
            return true;
        }
        if (stop.kind != STOP_EVENT)
            return true;
        control_handle_stop(s, tid, stop.status, now);
        if (!thread_find(s, tid) || t->proc->unfollowed)
            return false;
        if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0)
            return false;
    }
}

void control_on_hook_request(struct session *s, struct thread *t, uint64_t addr, uint64_t now)
{
    pid_t tid = t->tid;
    if (!stop_running(s, t, now)) {
        dbg(DBG_ENGINE, 1, "thread %d: gone before its hook's request was served", (int)tid);
        return;
    }
    control_on_hook(s, t, addr, now);
    if (!thread_find(s, tid))
        return;
    int held = t->hold.status;
    t->hold.status = 0;
    if (held)
        control_handle_stop(s, tid, held, now);
    else
        control_resume(t, 0);
}
