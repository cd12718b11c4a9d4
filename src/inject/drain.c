/* The consumer side: events from the rings go through the ptrace engine's shadow-stack rules
 * (engine/frames.h) into the recorder, so both engines make the same trace of the same calls. */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
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
    if (!space_is_blob_exit(sp, ev->ret))
        return ev->ret;
    for (size_t i = t->stack.depth; i-- > 0;)
        if (t->stack.frames[i].entry_sp == ev->slot)
            return t->stack.frames[i].ret_addr;
    return ev->ret;
}

static uint64_t tick_step(const struct session *s)
{
    if (!s->inject->tick_step)
        s->inject->tick_step = (uint64_t)(1.0 / s->clock->ns_per_tick) + 1;
    return s->inject->tick_step;
}

/* last: the ticks of the thread's previous event, updated. */
static void on_event(struct session *s, struct thread *t, const struct inject_space *sp,
                     const struct inject_event *ev, uint64_t *last)
{
    uint32_t func = ev->func & ~INJECT_EVENT_EXIT;
    if (func < sp->first_func || func >= sp->end_func)
        return; /* the program wrote over its ring: ignore what makes no sense */
    s->now = ev->tsc;
    struct frame_end_ctx ctx = {s, t, NULL};
    uint64_t ret = real_return(t, sp, ev);
    if (ev->func & INJECT_EVENT_EXIT) {
        frames_return(&t->stack, ret, ev->slot + 8, session_frame_end, &ctx);
        return;
    }
    struct frame call = {.entry_sp = ev->slot,
                         .ret_addr = ret,
                         .region = stack_region(t, ev->slot),
                         .ticks = ev->tsc,
                         .func = func};
    /* Frames this entry proves abandoned (longjmp) end at its time; the call itself starts a
     * step later, so that it is not taken for a call inside them. */
    size_t depth = t->stack.depth;
    frames_close_stale(&t->stack, &call, session_frame_end, &ctx);
    if (t->stack.depth < depth) {
        call.ticks += tick_step(s);
        *last = call.ticks;
    }
    if (frames_enter(&t->stack, &call, session_frame_end, &ctx) == 0)
        rec_enter(s->rec, t->proc->pid, t->tid, func, call.ticks);
}

/* The TSC of these machines moves in steps of ~10 ns: a call and the one it makes at once (a tail
 * call) can read the same value, and two calls with the same start and duration have no order
 * in a trace. Each event of a thread is kept at least a nanosecond after the one before. */
static uint64_t tick_step(const struct session *s);

static void order_ticks(struct session *s, uint64_t *last, struct inject_event *ev)
{
    uint64_t step = tick_step(s);
    if (*last && ev->tsc < *last + step)
        ev->tsc = *last + step;
    *last = ev->tsc;
}

/* An event reserved but never committed: its writer was interrupted by a signal handler that
 * is still running (it commits once the handler returns), or left for good (the handler
 * longjmp'd out, the thread died). After this long, or at the end, it is given up. */
#define STUCK_NS 200000000

enum event_state { EVENT_READY, EVENT_PENDING, EVENT_LOST };

/* A thread waiting for room in a full ring sleeps on the tail: it is moved on, and the thread
 * woken, every this many events, so that it runs on while calltrace drains the rest. */
#define TAIL_PUBLISH_EVENTS 8192

static void publish_tail(uint8_t *ctl, uint64_t tail)
{
    space_store(ctl, CTL_TAIL, tail);
    ctl[CTL_GAVE_UP] = 0; /* it may give up waiting for a while, not for good */
    syscall(SYS_futex, ctl + CTL_TAIL, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Copies the event at position pos, telling whether it is committed. */
static enum event_state read_event(const uint8_t *ring, size_t ring_size, uint64_t pos,
                                   struct inject_event *ev)
{
    const uint8_t *at = ring + (pos & (ring_size - 1));
    uint32_t want = (uint32_t)(pos / EVENT_SIZE) + 1;
    uint32_t stamp = __atomic_load_n((const uint32_t *)(at + 28), __ATOMIC_ACQUIRE);
    if (stamp != want)
        return (int32_t)(stamp - want) > 0 ? EVENT_LOST : EVENT_PENDING;
    memcpy(ev, at, sizeof(*ev));
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    /* written over meanwhile by a writer a whole turn ahead (a full ring) */
    if (__atomic_load_n((const uint32_t *)(at + 28), __ATOMIC_RELAXED) != want)
        return EVENT_LOST;
    return EVENT_READY;
}

static void drain_slot(struct session *s, struct inject_space *sp, int slot, struct thread *t,
                       bool final)
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
        enum event_state state = read_event(ring, sp->ring_size, tail, &ev);
        if (state == EVENT_PENDING && !final) {
            uint64_t now = clock_ticks(s->clock);
            if (sp->slot_stuck_at[slot] != tail + 1) {
                sp->slot_stuck_at[slot] = tail + 1;
                sp->slot_stuck_since[slot] = now;
            }
            if ((double)(now - sp->slot_stuck_since[slot]) * s->clock->ns_per_tick < STUCK_NS)
                break;
        }
        if (state != EVENT_READY) {
            s->inject->drops++;
            continue;
        }
        order_ticks(s, &sp->slot_last[slot], &ev);
        on_event(s, t, sp, &ev, &sp->slot_last[slot]);
        if ((tail / EVENT_SIZE) % TAIL_PUBLISH_EVENTS == 0)
            publish_tail(ctl, tail + EVENT_SIZE);
    }
    s->now = saved_now;
    publish_tail(ctl, tail);
}

static void drain_space(struct session *s, struct inject_space *sp, bool final)
{
    for (int i = 0; i < REGION_SLOTS; i++) {
        if (!sp->slot_tid[i])
            continue;
        struct thread *t = thread_find(s, sp->slot_tid[i]);
        if (sp->slot_lender[i] && (!t || !t->proc)) /* the vfork child is gone: vfork_done */
            continue;
        if (!sp->slot_lender[i] && (!t || !t->proc || t->proc->pid != sp->pid)) {
            space_slot_release(s->inject, sp, i); /* gone: nothing more will come */
            continue;
        }
        drain_slot(s, sp, i, t, final);
    }
}

void inject_drain(struct session *s, bool final)
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
            drain_space(s, sp, final);
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
        /* a thread or process that ended wrote everything it will: drain it whole */
        inject_drain(s, tid > 0 && (WIFEXITED(*status) || WIFSIGNALED(*status)));
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

void inject_drain_thread(struct session *s, struct thread *t)
{
    struct inject_space *sp = addr_map_get(&s->inject->spaces, (uint64_t)t->proc->pid);
    int slot = sp ? space_slot_of(sp, t->tid) : -1;
    if (slot >= 0 && !sp->slot_lender[slot])
        drain_slot(s, sp, slot, t, false);
}

bool inject_hooked_return(const struct session *s, const struct thread *t, uint64_t rsp,
                          uint64_t *ret)
{
    const struct inject_space *sp = addr_map_get(&s->inject->spaces, (uint64_t)t->proc->pid);
    if (!sp || !space_is_blob_exit(sp, *ret))
        return false;
    for (size_t i = t->stack.depth; i-- > 0;)
        if (t->stack.frames[i].entry_sp == rsp) {
            *ret = t->stack.frames[i].ret_addr;
            break;
        }
    return true;
}

bool inject_has_rings(const struct session *s)
{
    return s->inject->spaces.count > 0;
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
