/* calltrace -p PID: taking over a running process, every thread of it, and saying precisely
 * why when the kernel will not allow it. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "control/control.h"
#include "tracer/addrspace.h"
#include "remote/memory.h"
#include "remote/ptrace_stop.h"
#include "remote/syscall.h"
#include "tracer/scratch.h"
#include "util/log.h"
#include "util/proc_stat.h"

/* No PTRACE_O_EXITKILL: the program must outlive calltrace. PTRACE_O_TRACEEXIT: a thread that
 * ends stops once more first, so calltrace knows of a main thread that called pthread_exit
 * (after which it is a zombie that cannot be stopped, and that waitpid reports only once every
 * other thread has ended: detach.c must not wait for it). */
#define ATTACH_OPTIONS                                                                             \
    (PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC |         \
     PTRACE_O_TRACEEXIT)

#define PF_KTHREAD 0x00200000u
/* single steps that take a thread through what is left of an entry or exit trampoline (its only
 * loop, waiting for room in a ring, ends at its next round once the dead calltrace's control
 * block is marked given up: inject_give_up_stale_blocks) */
#define STALE_STEPS 4096

/* A field of /proc/PID/status ("TracerPid:", "Uid:"), as text; -1 when unreadable. */
static int status_field(pid_t pid, const char *key, char *out, size_t len)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    int rc = -1;
    size_t klen = strlen(key);
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, key, klen) == 0) {
            snprintf(out, len, "%s", line + klen + strspn(line + klen, " \t"));
            out[strcspn(out, "\n")] = '\0';
            rc = 0;
            break;
        }
    }
    fclose(f);
    return rc;
}

static void comm_of(pid_t pid, char *out, size_t len)
{
    if (status_field(pid, "Name:", out, len) < 0)
        snprintf(out, len, "?");
}

static int check_target(pid_t pid)
{
    char state, tracer[32], comm[64];
    unsigned long flags;
    if (pid == getpid()) {
        err_msg("-p %d: that is calltrace itself", (int)pid);
        return -1;
    }
    if (pid == getppid()) {
        err_msg("-p %d: that is calltrace's parent, which waits for calltrace", (int)pid);
        return -1;
    }
    if (proc_stat_read(pid, 0, &state, &flags) < 0) {
        err_hint("check the number with ps or pgrep", "-p %d: no such process", (int)pid);
        return -1;
    }
    if (state == 'Z' || state == 'X') {
        err_msg("-p %d: is a zombie: it has exited and only waits for its parent to reap it",
                (int)pid);
        return -1;
    }
    if (flags & PF_KTHREAD) {
        err_msg("-p %d: is a kernel thread, which runs no user code to trace", (int)pid);
        return -1;
    }
    if (status_field(pid, "TracerPid:", tracer, sizeof(tracer)) == 0 && atoi(tracer) != 0) {
        comm_of(atoi(tracer), comm, sizeof(comm));
        err_hint("a process has one tracer at a time: stop that one first",
                 "-p %d: already traced by process %s (%s)", (int)pid, tracer, comm);
        return -1;
    }
    return 0;
}

static int read_int_file(const char *path)
{
    FILE *f = fopen(path, "re");
    int v = -1;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

/* EPERM from PTRACE_SEIZE has three usual causes; name the one that applies. */
static void explain_eperm(pid_t pid)
{
    char uids[64];
    unsigned real = 0, effective = 0;
    if (status_field(pid, "Uid:", uids, sizeof(uids)) == 0)
        sscanf(uids, "%u %u", &real, &effective);
    if (geteuid() != 0 && (real != geteuid() || effective != geteuid())) {
        err_hint("run calltrace as that user, or as root",
                 "-p %d: permission denied: the process belongs to user %u", (int)pid, effective);
        return;
    }
    int scope = read_int_file("/proc/sys/kernel/yama/ptrace_scope");
    if (scope == 1 && geteuid() != 0) {
        err_hint("run calltrace as root, or allow it with "
                 "'echo 0 | sudo tee /proc/sys/kernel/yama/ptrace_scope'",
                 "-p %d: permission denied by Yama (ptrace_scope 1: only descendants)", (int)pid);
    } else if (scope == 2) {
        err_hint("run calltrace as root (it needs CAP_SYS_PTRACE)",
                 "-p %d: permission denied by Yama (ptrace_scope 2: admin only)", (int)pid);
    } else if (scope == 3) {
        err_hint("ptrace_scope 3 cannot be lowered until the next reboot",
                 "-p %d: permission denied by Yama (ptrace_scope 3: no attaching at all)",
                 (int)pid);
    } else {
        err_hint("calltrace needs CAP_SYS_PTRACE here (a container or seccomp profile may "
                 "withhold it)",
                 "-p %d: permission denied", (int)pid);
    }
}

static bool traced_by_us(pid_t tid)
{
    char tracer[32];
    return status_field(tid, "TracerPid:", tracer, sizeof(tracer)) == 0 && atoi(tracer) == getpid();
}

/* Seizes and interrupts every thread not yet known. Returns how many were new, -1 on error. */
static int seize_new_threads(struct session *s, struct process *p)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)p->pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int added = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid <= 0 || thread_find(s, tid))
            continue;
        unsigned long options = ATTACH_OPTIONS | s->backend->attach_options;
        if (ptrace(PTRACE_SEIZE, tid, 0, options) < 0) {
            if (errno == ESRCH)
                continue; /* it exited meanwhile */
            int seize_errno = errno;
            char state;
            unsigned long flags;
            if (proc_stat_read(tid, 0, &state, &flags) < 0)
                continue; /* it exited meanwhile */
            if (seize_errno == EPERM && traced_by_us(tid)) {
                /* created since the first pass: already ours through PTRACE_O_TRACECLONE,
                 * its first stop will come like any other's */
                if (!thread_new(s, p, tid)) {
                    closedir(d);
                    errno = ENOMEM;
                    return -1;
                }
                added++;
                continue;
            }
            closedir(d);
            errno = seize_errno;
            return -1;
        }
        struct thread *t = thread_new(s, p, tid);
        if (!t) {
            closedir(d);
            errno = ENOMEM;
            return -1;
        }
        ptrace(PTRACE_INTERRUPT, tid, 0, 0);
        added++;
    }
    closedir(d);
    return added;
}

/* Waits until t is stopped. A stop that is more than the interrupt (a signal, a clone) is kept
 * to be handled once the breakpoints are in. Returns -1 when the thread is gone. */
static int wait_stopped(struct session *s, struct thread *t)
{
    struct ptrace_stop stop;
    if (ptrace_stop_wait(t->tid, 0, &stop) < 0 || !ptrace_stop_stopped(&stop)) {
        thread_forget(s, t);
        return -1;
    }
    t->started = true;
    if (stop.kind != STOP_GROUP && stop.kind != STOP_INTERRUPT)
        t->hold.status = stop.status;
    bool new_child = stop.kind == STOP_EVENT &&
                     (stop.event == PTRACE_EVENT_CLONE || stop.event == PTRACE_EVENT_FORK ||
                      stop.event == PTRACE_EVENT_VFORK);
    if (new_child && ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &t->hold.event_msg) < 0)
        t->hold.event_msg = 0;
    /* The thread entered that clone or fork between its seize and its interrupt: a process it
     * forked has a copy of the program's memory as it is now, before any breakpoint or patch. */
    t->hold.untouched = new_child;
    return 0;
}

/* Seizes every thread of p and returns once all of them are stopped.
 *
 * A scan of /proc/PID/task that finds nothing new is not the end: a thread seized inside clone()
 * finishes that clone before it stops, and whether the kernel attaches the new thread to us was
 * decided when the clone began, before the seize. That thread is not ours, and it can show up in
 * /proc only after the last scan (its creator held up inside the kernel, by load or by a page
 * fault): it would run into the breakpoints untraced, and its first breakpoint would kill the
 * program with SIGTRAP. No clone can be under way once every thread seen is stopped, so the scans
 * start again after each round of waiting, until one finds nothing new with all threads stopped. */
static int stop_all_threads(struct session *s, struct process *p)
{
    for (;;) {
        int added;
        /* Threads may be created while we look: rescan until a pass finds none. */
        while ((added = seize_new_threads(s, p)) > 0)
            ;
        if (added < 0)
            return -1;
        struct thread *list[4096];
        size_t n = 0;
        ADDR_MAP_FOREACH(&s->threads, slot)
        {
            struct thread *t = slot->value;
            if (t->proc == p && !t->started && n < 4096)
                list[n++] = t;
        }
        if (!n)
            break; /* the scans just done ran with every thread stopped */
        for (size_t i = 0; i < n; i++)
            wait_stopped(s, list[i]);
    }
    return p->nthreads ? 0 : -1;
}

/* Is t held at a ptrace event stop (clone, fork, exec...), inside the system call? */
static bool held_event(const struct thread *t)
{
    struct ptrace_stop held;
    ptrace_stop_classify(t->tid, t->hold.status, &held);
    return t->hold.status && held.kind == STOP_EVENT;
}

/* The thread to run calltrace's system calls in. One stopped inside a system call at a ptrace
 * event (clone, fork, exec) would lose that call's result to ours: it returns to user space
 * only after the kernel writes the result into its register, over whatever we left there, and
 * ours would then run with that value as its number. Such a thread is used only if there is no
 * other, once it has left its system call. */
static struct thread *syscall_thread(struct session *s, struct process *p)
{
    struct thread *in_event = NULL;
    ADDR_MAP_FOREACH(&s->threads, slot)
    {
        struct thread *t = slot->value;
        if (t->proc != p)
            continue;
        if (!held_event(t))
            return t;
        in_event = t;
    }
    if (in_event && remote_leave_syscall(process_target(p, in_event->tid)) < 0)
        return NULL;
    return in_event;
}

static struct thread *any_thread(struct session *s, struct process *p)
{
    struct thread *leader = thread_find(s, p->pid);
    if (leader)
        return leader;
    ADDR_MAP_FOREACH(&s->threads, slot)
    if (((struct thread *)slot->value)->proc == p)
        return slot->value;
    return NULL;
}

static void resume_all(struct session *s, struct process *p, uint64_t now)
{
    struct thread *list[4096];
    size_t n = 0;
    ADDR_MAP_FOREACH(&s->threads, slot)
    if (((struct thread *)slot->value)->proc == p && n < 4096)
        list[n++] = slot->value;
    for (size_t i = 0; i < n; i++) {
        struct thread *t = list[i];
        rec_thread(s->rec, p->pid, t->tid, now);
        int held = t->hold.status;
        t->hold.status = 0;
        if (held) /* a signal or clone from before: as usual */
            control_handle_stop(s, t->tid, held, now);
        else
            control_resume(t, 0);
    }
}

/* Every thread of p is stopped already (stop_all_threads): the detach must not wait for them to
 * stop again, only let them go, with the signal each was about to receive (an event it stopped
 * at goes on by itself). */
static void hold_all(struct session *s, struct process *p)
{
    ADDR_MAP_FOREACH(&s->threads, slot)
    {
        struct thread *t = slot->value;
        if (t->proc != p)
            continue;
        struct ptrace_stop held;
        ptrace_stop_classify(t->tid, t->hold.status, &held);
        if (!t->hold.status || held.kind != STOP_SIGNAL)
            t->hold.status = 0;
        t->hold.held = true;
    }
}

struct stale_probe {
    const struct session *s;
    const struct process *p;
};

static bool in_stale(const void *ctx, uint64_t pc)
{
    const struct stale_probe *probe = ctx;
    return probe->p->backend->in_stale_code(probe->s, probe->p, pc);
}

/* A calltrace killed while attached left its code in the program, and threads may be stopped in
 * it now, halfway through an entry or exit whose state (the return slot already hooked, the
 * shadow entry not yet pushed) the backend is about to take over: each such thread first runs
 * to the end of that code, still under the old state. Done last, just before the threads are
 * resumed: a stepped thread keeps the trap flag until then, which a calltrace killed in between
 * would leave set (SIGTRAP). One held at an event stop is inside a system call, not there. */
static void leave_stale_code(struct session *s, struct process *p)
{
    if (!p->backend->in_stale_code)
        return;
    struct stale_probe probe = {s, p};
    ADDR_MAP_FOREACH(&s->threads, slot)
    {
        struct thread *t = slot->value;
        if (t->proc != p || held_event(t))
            continue;
        if (control_step_out(t, in_stale, &probe, STALE_STEPS) < 0)
            err_msg("thread %d: cannot move it out of an earlier calltrace's code: it is not "
                    "traced",
                    (int)t->tid);
    }
}

/* Undoes a failed attach: nothing was written yet, so letting go is enough. */
static void abandon(struct session *s, struct process *p)
{
    struct thread *t;
    while ((t = any_thread(s, p))) {
        ptrace(PTRACE_DETACH, t->tid, 0, 0);
        thread_forget(s, t);
    }
    process_forget(s, p);
}

int control_attach(struct session *s, pid_t pid)
{
    if (check_target(pid) < 0)
        return -1;
    struct process *p = process_new(s, pid, 0);
    if (!p) {
        err_msg("out of memory");
        return -1;
    }
    p->exec_done = true;
    s->main_pid = pid;
    s->attached = true;
    s->on_hook = control_on_hook;
    s->on_hook_request = control_on_hook_request;
    if (stop_all_threads(s, p) < 0) {
        int err = errno;
        abandon(s, p);
        if (err == EPERM)
            explain_eperm(pid);
        else
            err_msg("-p %d: cannot attach: %s", (int)pid, strerror(err));
        return -1;
    }
    uint64_t now = clock_ticks(s->clock);
    p->as = addrspace_new();
    p->mem_fd = mem_open(pid);
    struct thread *via = p->as && p->mem_fd >= 0 ? syscall_thread(s, p) : NULL;
    if (!via || control_trace_executable(s, p, via->tid, false, now) <= 0) {
        err_msg("-p %d: cannot trace the process (said above); it runs on untouched", (int)pid);
        hold_all(s, p);
        control_detach(s);
        return -1;
    }
    leave_stale_code(s, p);
    if (p->backend->attach_threads)
        p->backend->attach_threads(s, p, via->tid);
    control_record_process(s, p, false, now);
    resume_all(s, p, now);
    return 0;
}
