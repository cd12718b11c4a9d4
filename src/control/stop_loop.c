#include "control/control.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "tracer/addrspace.h"
#include "remote/ptrace_stop.h"
#include "util/log.h"

void control_resume(struct thread *t, int sig)
{
    /* a thread killed meanwhile is no error: its exit comes with the next wait */
    ptrace_resume(t->tid, RESUME_CONTINUE, sig);
}

/* PTRACE_EVENT_STOP: a new thread's first stop, or a group-stop (job control). A group-stop is
 * parked with PTRACE_LISTEN so the thread stays stopped until SIGCONT, as it would untraced. */
static void on_event_stop(struct session *s, struct thread *t, const struct ptrace_stop *stop,
                          uint64_t now)
{
    if (!t->started && s->detaching) {
        t->started = true;
        t->hold.held = true; /* born while calltrace leaves: it goes with the others */
        return;
    }
    if (!t->started) {
        t->started = true;
        const struct tracer_backend *b = t->proc->backend;
        if (t->proc->untouched && !t->proc->unfollowed)
            control_trace_untouched(s, t, now);
        else if (!t->proc->unfollowed && b->thread_start &&
                 b->thread_start(s, t) == START_TO_BREAKPOINTS)
            control_trace_with_breakpoints(s, t, now);
        /* An unfollowed fork child goes now; a vfork child shares its parent's breakpoints and
         * is held, silently, until it execs or exits. */
        if (t->proc->unfollowed && t->proc->as->refs == 1)
            control_release(s, t);
        else
            control_resume(t, 0);
        return;
    }
    if (stop->kind != STOP_GROUP) {
        control_resume(t, 0);
        return;
    }
    ptrace_resume(t->tid, RESUME_LISTEN, 0);
    /* A terminal stop of the program stops calltrace too, so the shell sees the job stop and
     * its SIGCONT (fg, bg) reaches both. */
    if (t->tid == s->main_pid && stop->sig != SIGSTOP)
        kill(getpid(), SIGSTOP);
}

/* A stop from a tid nobody reported yet: a new thread or child whose creator's event has not
 * been seen. It waits, stopped, until control_on_new_child adopts it. */
static void park_unknown(struct session *s, const struct ptrace_stop *stop)
{
    if (!ptrace_stop_stopped(stop))
        return; /* a thread that vanished with an exec: nothing to do */
    struct thread *t = thread_new(s, NULL, stop->tid);
    if (!t)
        return;
    t->hold.pending_first = true;
    t->hold.pending_status = stop->status;
}

/* A ptrace event stop of t: clone, fork, vfork, exec, exit, vfork-done. */
static void on_event(struct session *s, struct thread *t, int event, uint64_t now)
{
    switch (event) {
    case PTRACE_EVENT_CLONE:
    case PTRACE_EVENT_FORK:
    case PTRACE_EVENT_VFORK:
        control_on_new_child(s, t, event, now);
        break;
    case PTRACE_EVENT_EXEC:
        control_on_exec(s, t, now);
        break;
    case PTRACE_EVENT_EXIT: /* attached: its end follows (a leader's only with the last thread) */
        t->exiting = true;
        if (t->proc->backend->on_thread_exit)
            t->proc->backend->on_thread_exit(s, t);
        control_resume(t, 0);
        break;
    case PTRACE_EVENT_VFORK_DONE:
        if (t->proc->backend->on_vfork_done)
            t->proc->backend->on_vfork_done(s, t);
        control_resume(t, 0);
        break;
    default:
        control_resume(t, 0);
        break;
    }
}

/* A SIGTRAP: one of calltrace's breakpoints, or the program's own, which it gets back. */
static void on_trap(struct session *s, struct thread *t, uint64_t now)
{
    int sig = t->proc->backend->on_trap(s, t, now);
    if (sig >= 0)
        control_resume(t, sig);
}

static void dispatch_stop(struct session *s, const struct ptrace_stop *stop, uint64_t now)
{
    struct thread *t = thread_find(s, stop->tid);
    if (!t || t->hold.pending_first) {
        if (!t)
            park_unknown(s, stop);
        return;
    }
    switch (stop->kind) {
    case STOP_EXITED:
    case STOP_KILLED:
        control_on_exit(s, t, stop->status, now);
        break;
    case STOP_TRAP:
        on_trap(s, t, now);
        break;
    case STOP_SIGNAL:
        control_resume(t, stop->sig);
        break;
    case STOP_GROUP:
    case STOP_INTERRUPT:
        on_event_stop(s, t, stop, now);
        break;
    case STOP_EVENT:
        on_event(s, t, stop->event, now);
        break;
    case STOP_CONTINUED:
        break;
    }
}

void control_handle_stop(struct session *s, pid_t tid, int status, uint64_t now)
{
    struct ptrace_stop stop;
    ptrace_stop_classify(tid, status, &stop);
    dispatch_stop(s, &stop, now);
}

static void kill_all(struct session *s)
{
    ADDR_MAP_FOREACH(&s->processes, slot)
    {
        struct process *p = slot->value;
        kill(p->pid, SIGKILL);
    }
    s->killing = true;
}

/* How long to poll before sleeping in waitpid. On a VM a sleeping tracer costs an inter-
 * processor wake-up at every stop when the program runs on the other CPU: measured here, 104 us
 * per traced call against 24 us when both share one CPU. Polling for a little longer than the
 * usual gap between two stops keeps the tracer awake through a burst of calls and brings that to
 * about 40 us; a program that goes quiet costs at most this much CPU before calltrace sleeps. */
#define SPIN_NS 200000

/* Returns like ptrace_stop_wait, interrupted by calltrace's stop signal. */
static int wait_for_stop(struct session *s, struct ptrace_stop *stop)
{
    int got;
    if (s->backend->wait_stop && s->backend->wait_stop(s, stop, &got))
        return got; /* it drained the rings meanwhile */
    if (s->spin_ticks) {
        uint64_t start = clock_ticks(s->clock);
        do {
            int got = ptrace_stop_wait(-1, STOP_WAIT_POLL | STOP_WAIT_INTERRUPTIBLE, stop);
            if (got != 0)
                return got;
        } while (clock_ticks(s->clock) - start < s->spin_ticks && !*s->stop_signal);
    }
    return ptrace_stop_wait(-1, STOP_WAIT_INTERRUPTIBLE, stop);
}

/* Polling only helps when the program can run on another CPU than calltrace. */
static uint64_t spin_ticks(const struct clock_calibration *clock)
{
    cpu_set_t cpus;
    if (sched_getaffinity(0, sizeof(cpus), &cpus) < 0 || CPU_COUNT(&cpus) < 2)
        return 0;
    return (uint64_t)(SPIN_NS / clock->ns_per_tick);
}

int control_run(struct session *s, pid_t pid)
{
    struct process *p = process_new(s, pid, getpid());
    struct thread *t = p ? thread_new(s, p, pid) : NULL;
    if (!t) {
        err_msg("out of memory");
        kill(pid, SIGKILL);
        return -1;
    }
    t->started = true; /* seized while running: its first stop is the exec */
    s->main_pid = pid;
    s->on_hook = control_on_hook;
    return control_loop(s);
}

int control_loop(struct session *s)
{
    s->spin_ticks = spin_ticks(s->clock);
    while (s->live_processes > 0) {
        if (*s->stop_signal && (s->attached || *s->stop_signal == s->leave_signal))
            return 0; /* the caller detaches, leaving the program running */
        if (*s->stop_signal && !s->killing)
            kill_all(s);
        struct ptrace_stop stop;
        int got = wait_for_stop(s, &stop);
        uint64_t now = clock_ticks(s->clock);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            if (errno == ECHILD)
                break;
            err_msg("waitpid: %s", strerror(errno));
            break;
        }
        dispatch_stop(s, &stop, now);
        recorder_tick(s->rec, now);
    }
    return 0;
}

void control_finish(struct session *s)
{
    if (s->backend->drain)
        s->backend->drain(s, true);
    /* after the events just drained: see control_detach */
    uint64_t now = clock_ticks(s->clock);
    for (;;) {
        struct process *p = NULL;
        ADDR_MAP_FOREACH(&s->processes, slot)
        {
            p = slot->value;
            break;
        }
        if (!p)
            break;
        control_end_threads(s, p, NULL, now);
        rec_process_end(s->rec, p->pid, 0, now);
        process_forget(s, p);
    }
}
