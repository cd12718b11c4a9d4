#include "tracer/tracee.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracer/arg_capture.h"
#include "tracer/addrspace.h"

int session_init(struct session *s, const struct trace_options *opts, struct recorder *rec,
                 const struct clock_calibration *clock, volatile sig_atomic_t *stop_signal)
{
    memset(s, 0, sizeof(*s));
    s->opts = opts;
    s->rec = rec;
    s->clock = clock;
    s->stop_signal = stop_signal;
    if (addr_map_init(&s->threads, 64) < 0 || addr_map_init(&s->processes, 16) < 0)
        return -1;
    if ((opts->capture.args || opts->capture.retval) && !(s->capture = capture_state_new()))
        return -1;
    return 0;
}

void session_free(struct session *s)
{
    ADDR_MAP_FOREACH(&s->threads, slot)
    {
        struct thread *t = slot->value;
        frames_free(&t->stack);
        free(t);
    }
    ADDR_MAP_FOREACH(&s->processes, slot)
    {
        struct process *p = slot->value;
        if (p->mem_fd >= 0)
            close(p->mem_fd);
        addrspace_unref(p->as);
        free(p);
    }
    addr_map_free(&s->threads);
    addr_map_free(&s->processes);
    capture_state_free(s->capture);
}

struct process *process_new(struct session *s, pid_t pid, pid_t ppid)
{
    struct process *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->pid = pid;
    p->ppid = ppid;
    p->mem_fd = -1;
    p->backend = s->backend;
    if (addr_map_put(&s->processes, (uint64_t)pid, p) < 0) {
        free(p);
        return NULL;
    }
    s->live_processes++;
    return p;
}

void process_forget(struct session *s, struct process *p)
{
    addr_map_del(&s->processes, (uint64_t)p->pid);
    if (p->mem_fd >= 0)
        close(p->mem_fd);
    addrspace_unref(p->as);
    free(p);
    s->live_processes--;
}

struct thread *thread_new(struct session *s, struct process *p, pid_t tid)
{
    struct thread *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->tid = tid;
    t->proc = p;
    if (addr_map_put(&s->threads, (uint64_t)tid, t) < 0) {
        free(t);
        return NULL;
    }
    if (p)
        p->nthreads++;
    return t;
}

void thread_forget(struct session *s, struct thread *t)
{
    addr_map_del(&s->threads, (uint64_t)t->tid);
    if (t->proc)
        t->proc->nthreads--;
    frames_free(&t->stack);
    free(t);
}

struct thread *thread_find(struct session *s, pid_t tid)
{
    return addr_map_get(&s->threads, (uint64_t)tid);
}

void session_frame_end(void *ctx, const struct frame *frame, unsigned flags)
{
    struct frame_end_ctx *c = ctx;
    rec_exit(c->s->rec, c->t->proc->pid, c->t->tid, frame->func, c->now, flags);
}

void thread_close_frames(struct session *s, struct thread *t, unsigned flags, uint64_t now)
{
    struct frame_end_ctx ctx = {s, t, now > t->last_ticks ? now : t->last_ticks};
    frames_close_all(&t->stack, flags, session_frame_end, &ctx);
}
