/* Threads and processes coming and going: clone, fork, vfork, and exits. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "arch/x86_64/machine.h"
#include "control/control.h"
#include "tracer/addrspace.h"
#include "remote/memory.h"
#include "util/log.h"

/* The command line of pid, arguments joined by spaces, for the process's track name. */
static void read_cmdline(pid_t pid, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    FILE *f = fopen(path, "re");
    size_t n = f ? fread(buf, 1, len - 1, f) : 0;
    if (f)
        fclose(f);
    while (n && buf[n - 1] == '\0')
        n--;
    for (size_t i = 0; i < n; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[n] = '\0';
    if (!n)
        snprintf(buf, len, "pid %d", (int)pid);
}

void control_record_process(struct session *s, struct process *p, bool is_exec, uint64_t now)
{
    char cmdline[1024], name[1100];
    read_cmdline(p->pid, cmdline, sizeof(cmdline));
    if (s->opts->rank)
        snprintf(name, sizeof(name), "rank %s: %s", s->opts->rank, cmdline);
    else
        snprintf(name, sizeof(name), "%s", cmdline);
    rec_process(s->rec, p->pid, p->ppid, now, name, is_exec);
}

/* The clone flags of the system call the parent is stopped in (clone or clone3). */
static unsigned long clone_flags(struct process *parent, pid_t tid)
{
    arch_regs regs;
    if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
        return 0;
    if (arch_syscall_nr(&regs) == SYS_clone)
        return arch_syscall_arg(&regs, 0);
#ifdef SYS_clone3
    if (arch_syscall_nr(&regs) == SYS_clone3) { /* its first argument: struct clone_args */
        unsigned long long flags = 0;
        if (mem_read(parent->mem_fd, arch_syscall_arg(&regs, 0), &flags, sizeof(flags)) == 0)
            return (unsigned long)flags;
    }
#endif
    return 0;
}

/* Without /proc/PID/mem (out of file descriptors) the child still runs correctly: its
 * inherited breakpoints are stepped over, but its calls cannot be recorded. Said once, counted
 * in the closing line; the rest go to -v. */
static void note_untraced(struct session *s, pid_t pid, int err)
{
    if (s->stats.untraced_processes++ == 0)
        err_hint(err == EMFILE || err == ENFILE ? "raise the limit of open files, ulimit -n" : NULL,
                 "process %d: cannot open /proc/%d/mem: %s; its calls are not recorded", (int)pid,
                 (int)pid, strerror(err));
    else
        dbg(DBG_ENGINE, 1, "process %d: cannot open /proc/%d/mem: %s", (int)pid, (int)pid,
            strerror(err));
}

/* untouched: the child was forked before calltrace wrote into its parent (control_attach held
 * the fork): what its parent's address space says of breakpoints, scratch pages and the system
 * call gadget is not in the child's memory. A remote system call through that gadget would
 * fault at every resume, and its inherited breakpoints would never trap: it starts with an
 * empty address space instead, and gets its own at its first stop. */
static struct process *new_process(struct session *s, struct thread *parent, pid_t pid,
                                   bool shares_memory, bool untouched)
{
    struct process *pp = parent->proc;
    struct process *p = process_new(s, pid, pp->pid);
    if (!p)
        return NULL;
    p->mem_fd = mem_open(pid);
    if (p->mem_fd < 0)
        note_untraced(s, pid, errno);
    p->exec_done = pp->exec_done;
    memcpy(p->image_name, pp->image_name, sizeof(p->image_name));
    p->as = shares_memory ? addrspace_ref(pp->as)
            : untouched   ? addrspace_new()
                          : addrspace_copy(pp->as);
    p->untouched = untouched && !shares_memory;
    p->backend = pp->backend; /* an untouched child gets the breakpoints at its first stop */
    if (!p->as) {
        process_forget(s, p);
        return NULL;
    }
    return p;
}

/* The child starts inside the calls its parent had open: they are recorded on its track too,
 * so its returns from them pair up, and marked inherited when they end. */
static void inherit_frames(struct session *s, struct thread *child, struct thread *parent)
{
    if (frames_copy_inherited(&child->stack, &parent->stack) < 0)
        return;
    for (size_t i = 0; i < child->stack.depth; i++) {
        const struct frame *f = &child->stack.frames[i];
        rec_enter(s->rec, child->proc->pid, child->tid, f->func, f->ticks);
    }
}

/* Its parent's backend says whether the new child is traced: the threads of a process share
 * their backend, a child process starts with its parent's. */
static bool backend_untraces(struct session *s, struct thread *parent, struct process *p, pid_t tid,
                             int event, unsigned long flags, bool shares)
{
    const struct tracer_backend *b = parent->proc->backend;
    if (p == parent->proc) {
        if (b->on_clone)
            b->on_clone(s, tid, flags);
        return false;
    }
    /* an untouched child has no patches or rings to take out (a vfork child, sharing the
     * memory, has them as its parent does) */
    return !parent->proc->unfollowed && !p->untouched && b->on_fork &&
           b->on_fork(s, parent, tid, event == PTRACE_EVENT_VFORK, shares) == FORK_UNTRACED;
}

void control_on_new_child(struct session *s, struct thread *parent, int event, uint64_t now)
{
    unsigned long new_tid = parent->hold.event_msg;
    bool untouched = parent->hold.untouched;
    parent->hold.event_msg = 0;
    parent->hold.untouched = false;
    if (!new_tid && ptrace(PTRACE_GETEVENTMSG, parent->tid, 0, &new_tid) < 0) {
        err_msg("thread %d: cannot read the id of its new thread or process: %s", (int)parent->tid,
                strerror(errno));
        control_resume(parent, 0);
        return;
    }
    unsigned long flags = event == PTRACE_EVENT_CLONE ? clone_flags(parent->proc, parent->tid) : 0;
    bool is_thread = event == PTRACE_EVENT_CLONE && (flags & CLONE_THREAD);
    bool shares = event == PTRACE_EVENT_VFORK || (flags & CLONE_VM);
    pid_t tid = (pid_t)new_tid;
    /* Its first stop may already be parked; if not, it will come as PTRACE_EVENT_STOP. */
    struct thread *t = new_tid ? thread_find(s, tid) : NULL;
    if (t && is_thread && t->proc == parent->proc) {
        /* Taken over by control_attach from /proc/PID/task before this event was handled: it is
         * counted, recorded and was stopped once already. Only its creator goes on. */
        control_resume(parent, 0);
        return;
    }
    if (!t && new_tid)
        t = thread_new(s, NULL, tid);
    struct process *p = parent->proc;
    if (t && !is_thread)
        p = new_process(s, parent, tid, shares, untouched);
    if (!t || !p) {
        err_msg("cannot follow new %s %d: out of memory", is_thread ? "thread" : "process",
                (int)tid);
        control_resume(parent, 0);
        return;
    }
    t->proc = p;
    p->nthreads++;
    if (!is_thread && (!s->opts->follow_forks || parent->proc->unfollowed))
        p->unfollowed = true;
    /* Attached, a forked child would be traced by the breakpoints (tracer/backend.h): without
     * them (session_may_break) it runs free, like one of --no-follow. A vfork child shares its
     * parent's memory, patches and all, and stays. */
    if (!is_thread && !shares && !p->unfollowed && !session_may_break(s)) {
        p->unfollowed = true;
        s->stats.left_out_children++;
    }
    if (backend_untraces(s, parent, p, tid, event, flags, shares))
        p->unfollowed = true;
    if (!p->unfollowed) {
        if (!is_thread)
            control_record_process(s, p, false, now);
        rec_thread(s->rec, p->pid, tid, now);
        if (!is_thread)
            inherit_frames(s, t, parent);
    }
    dbg(DBG_ENGINE, 2, "%d: new %s %d", (int)parent->tid, is_thread ? "thread" : "process",
        (int)tid);
    if (t->hold.pending_first) {
        t->hold.pending_first = false;
        control_handle_stop(s, tid, t->hold.pending_status, now);
    }
    if (event == PTRACE_EVENT_VFORK) /* vfork, or clone with CLONE_VFORK (posix_spawn, system) */
        parent->vfork_child = tid;
    control_resume(parent, 0);
}

void control_trace_untouched(struct session *s, struct thread *t, uint64_t now)
{
    struct process *p = t->proc;
    p->untouched = false;
    if (control_trace_with_breakpoints(s, t, now) < 0) /* as any forked child */
        err_msg("process %d: cannot put breakpoints in it: its calls are not recorded",
                (int)p->pid);
}

void control_end_thread(struct session *s, struct thread *t, uint64_t now)
{
    thread_close_frames(s, t, EXIT_UNFINISHED, now);
    if (!t->proc->unfollowed)
        rec_thread_end(s->rec, t->proc->pid, t->tid, now);
    thread_forget(s, t);
}

/* Every thread of p but keep (exec) or all of them (exit). */
void control_end_threads(struct session *s, struct process *p, struct thread *keep, uint64_t now)
{
    struct thread *victims[64];
    for (;;) {
        size_t n = 0;
        ADDR_MAP_FOREACH(&s->threads, slot)
        {
            struct thread *t = slot->value;
            if (t->proc == p && t != keep && n < 64)
                victims[n++] = t;
        }
        if (!n)
            return;
        for (size_t i = 0; i < n; i++)
            control_end_thread(s, victims[i], now);
    }
}

void control_on_exit(struct session *s, struct thread *t, int status, uint64_t now)
{
    struct process *p = t->proc;
    if (t->tid != p->pid) {
        control_end_thread(s, t, now);
        return;
    }
    control_end_threads(s, p, NULL, now);
    if (!p->unfollowed)
        rec_process_end(s->rec, p->pid, status, now);
    if (p->pid == s->main_pid) {
        s->main_status = status;
        s->main_done = true;
    }
    dbg(DBG_ENGINE, 2, "process %d ended, status %#x", (int)p->pid, status);
    process_forget(s, p);
}
