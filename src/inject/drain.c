/* The consumer side: events from the rings go through the ptrace engine's shadow-stack rules
 * (engine/frames.h) into the recorder, so both engines make the same trace of the same calls. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "arch/x86_64/inject_tramp.h"
#include "engine/stack_region.h"
#include "inject/inject.h"
#include "inject/space.h"
#include "util/log.h"

/* How long calltrace sleeps when the rings are empty and no thread stopped. A ring holds
 * ring_size / 64 calls (131072 by default, a few milliseconds of calls at full speed). */
#define IDLE_WAIT_NS 1000000

/* A tail call from a hooked function finds the trampoline's exit in its slot, where the ptrace
 * engine sees the real return address: the one of the open call in that slot. */
static uint64_t real_return(const struct thread *t, const struct inject_space *sp,
                            const struct inject_event *ev)
{
    if (ev->ret != sp->blob_exit)
        return ev->ret;
    for (size_t i = t->stack.depth; i-- > 0;)
        if (t->stack.frames[i].entry_sp == ev->slot)
            return t->stack.frames[i].ret_addr;
    return ev->ret;
}

static void on_event(struct session *s, struct thread *t, const struct inject_space *sp,
                     const struct inject_event *ev)
{
    if (ev->func < sp->first_func || ev->func >= sp->end_func)
        return; /* the program wrote over its ring: ignore what makes no sense */
    s->now = ev->tsc;
    struct frame_end_ctx ctx = {s, t};
    uint64_t ret = real_return(t, sp, ev);
    if (ev->kind == INJECT_EVENT_EXIT) {
        frames_return(&t->stack, ret, ev->slot + 8, session_frame_end, &ctx);
        return;
    }
    struct frame call = {.entry_sp = ev->slot,
                         .ret_addr = ret,
                         .region = stack_region(t, ev->slot),
                         .ticks = ev->tsc,
                         .func = ev->func};
    if (frames_enter(&t->stack, &call, session_frame_end, &ctx) == 0)
        rec_enter(s->rec, t->proc->pid, t->tid, ev->func, ev->tsc);
}

/* The TSC of these machines moves in steps of ~10 ns: a call and the one it makes at once (a tail
 * call) can read the same value, and two calls with the same start and duration have no order
 * in a trace. Each event of a thread is kept at least a nanosecond after the one before. */
static void order_ticks(struct session *s, uint64_t *last, struct inject_event *ev)
{
    uint64_t step = (uint64_t)(1.0 / s->clock->ns_per_tick) + 1;
    if (*last && ev->tsc < *last + step)
        ev->tsc = *last + step;
    *last = ev->tsc;
}

static void drain_slot(struct session *s, struct inject_space *sp, int slot, struct thread *t)
{
    uint8_t *ctl = space_ctl(sp, slot);
    uint64_t head = space_load(ctl, CTL_HEAD), tail = space_load(ctl, CTL_TAIL);
    if (head == tail)
        return;
    if (head < tail || head - tail > sp->ring_size || (head - tail) % EVENT_SIZE) {
        if (!sp->corrupt_reported)
            err_msg("--engine=inject: process %d: thread %d's ring is corrupt; its calls are "
                    "no longer recorded",
                    (int)sp->pid, (int)t->tid);
        sp->corrupt_reported = true;
        s->inject->corrupt_slots++;
        space_store(ctl, CTL_TAIL, head);
        return;
    }
    const uint8_t *ring = ctl + CTL_SIZE + SHADOW_SIZE;
    uint64_t saved_now = s->now;
    for (; tail != head; tail += EVENT_SIZE) {
        struct inject_event ev;
        memcpy(&ev, ring + (tail & (sp->ring_size - 1)), sizeof(ev));
        order_ticks(s, &sp->slot_last[slot], &ev);
        on_event(s, t, sp, &ev);
    }
    s->now = saved_now;
    space_store(ctl, CTL_TAIL, tail);
}

static void drain_space(struct session *s, struct inject_space *sp)
{
    for (int i = 0; i < REGION_SLOTS; i++) {
        if (!sp->slot_tid[i])
            continue;
        struct thread *t = thread_find(s, sp->slot_tid[i]);
        if (!t || !t->proc || t->proc->pid != sp->pid) { /* gone: nothing more will come */
            space_slot_release(s->inject, sp, i);
            continue;
        }
        drain_slot(s, sp, i, t);
    }
}

void inject_drain(struct session *s)
{
    struct inject_engine *e = s->inject;
    for (;;) {
        struct inject_space *gone = NULL;
        ADDR_MAP_FOREACH(&e->spaces, slot)
        {
            struct inject_space *sp = slot->value;
            if (!addr_map_get(&s->processes, (uint64_t)sp->pid)) {
                gone = sp;
                break;
            }
            drain_space(s, sp);
        }
        if (!gone)
            return;
        addr_map_del(&e->spaces, (uint64_t)gone->pid);
        space_free(e, gone);
    }
}

/* SIGCHLD tells of every ptrace stop: calltrace sleeps on it, blocked, with a timeout to drain
 * the rings, so a stop is handled at once and the rings at least every IDLE_WAIT_NS. */
pid_t inject_wait(struct session *s, int *status)
{
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    for (;;) {
        pid_t tid = waitpid(-1, status, __WALL | WNOHANG);
        inject_drain(s);
        if (tid != 0)
            return tid;
        if (*s->stop_signal && !s->killing) {
            errno = EINTR;
            return -1;
        }
        struct timespec ts = {0, IDLE_WAIT_NS};
        sigtimedwait(&chld, NULL, &ts);
    }
}

uint64_t inject_dropped_calls(const struct session *s)
{
    if (!s->inject)
        return 0;
    uint64_t n = s->inject->drops;
    ADDR_MAP_FOREACH(&s->inject->spaces, slot)
    {
        const struct inject_space *sp = slot->value;
        for (int i = 0; i < REGION_SLOTS; i++)
            if (sp->slot_tid[i])
                n += space_load(space_ctl(sp, i), CTL_DROPS);
    }
    return n;
}
