/* The consumer side: events from the rings go through the ptrace engine's shadow-stack rules
 * (tracer/frames.h) into the recorder, so both engines make the same trace of the same calls. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "arch/x86_64/inject_tramp.h"
#include "tracer/stack_region.h"
#include "tracer/inject/captures.h"
#include "tracer/inject/inject.h"
#include "tracer/inject/ring_reader.h"
#include "tracer/inject/space.h"
#include "remote/ptrace_stop.h"
#include "util/log.h"
#include "util/proc_stat.h"

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
    long i = frames_innermost_at(&t->stack, ev->slot);
    return i >= 0 ? t->stack.frames[i].ret_addr : ev->ret;
}

/* What the program wrote makes no sense (it wrote over the memory it shares with calltrace):
 * left out, counted, and said once a process. */
static void corrupt(struct session *s, struct inject_space *sp, pid_t tid, uint64_t events,
                    const char *what)
{
    s->inject->corrupt_events += events;
    if (sp->corrupt_reported)
        return;
    sp->corrupt_reported = true;
    err_msg("inject engine: process %d: thread %d %s: the program wrote over the memory it "
            "shares with calltrace; what makes no sense there is left out",
            (int)sp->pid, (int)tid, what);
}

static uint64_t tick_step(const struct session *s)
{
    if (!s->inject->tick_step)
        s->inject->tick_step = (uint64_t)(1.0 / s->clock->ns_per_tick) + 1;
    return s->inject->tick_step;
}

/* An exit's return value (-A/-R) goes just before the exit record of its own call, as the
 * ptrace engine writes it; frames closed on the way (abandoned) have none. */
struct retval_end {
    struct frame_end_ctx base;
    uint32_t func;
    bool pending;
};

static void end_with_retval(void *ctx, const struct frame *frame, unsigned flags)
{
    struct retval_end *r = ctx;
    if (r->pending && !flags && frame->func == r->func) {
        captures_write_retval(r->base.s, r->base.t);
        r->pending = false;
    } else if (!flags && r->base.s->capture) {
        captures_write_kept(r->base.s, r->base.t, frame->func);
    }
    session_frame_end(&r->base, frame, flags);
}

/* The stack t's cached mappings put sp on (stack_region without its /proc read), or 0. */
static uint64_t known_region(const struct thread *t, uint64_t sp)
{
    for (int i = 0; i < 2; i++)
        if (sp >= t->region_lo[i] && sp < t->region_hi[i])
            return t->region_hi[i];
    return 0;
}

/* A read of /proc/PID/maps costs tens of microseconds, more the more mappings the program has:
 * a drain of a thread's ring reads it this many times at most, for entries on a stack its cache
 * does not know (a thread uses two: its own and a signal stack). Past that, the entries the
 * program wrote on stacks no thread has are taken as on no known stack. */
#define REGION_READS_PER_DRAIN 16

static uint64_t region_of(struct session *s, struct thread *t, uint64_t slot)
{
    uint64_t region = known_region(t, slot);
    if (region || !s->inject->region_reads_left)
        return region;
    s->inject->region_reads_left--;
    return stack_region(t, slot);
}

/* last: the ticks of the thread's previous event, updated. data[0..len): what the event
 * carried (-A/-R), or NULL. */
static void on_event(struct session *s, struct thread *t, struct inject_space *sp,
                     const struct inject_event *ev, uint64_t *last, const uint8_t *data, size_t len)
{
    uint32_t func = ev->func & INJECT_EVENT_FUNC;
    if (func < sp->first_func || func >= sp->end_func) {
        corrupt(s, sp, t->tid, 1, "wrote an event of no traced function");
        return;
    }
    uint64_t ret = real_return(t, sp, ev);
    if (ev->func & INJECT_EVENT_EXIT) {
        struct retval_end r = {{s, t, ev->tsc}, func, false};
        r.pending = s->capture && captures_returned(s, t, func, data, len);
        /* a tail-called function: the chain ends with the exit of the call it came from,
         * whose return value is to be recorded too (the ptrace engine sees one return) */
        bool chain = space_is_blob_exit(sp, ev->ret);
        if (s->capture && chain) {
            if (r.pending)
                captures_keep_for_chain(s, t);
            return;
        }
        frames_return(&t->stack, ret, ev->slot + 8, end_with_retval, &r);
        if (s->capture)
            captures_forget_kept(s);
        return;
    }
    struct frame_end_ctx ctx = {s, t, ev->tsc};
    struct frame call = {.entry_sp = ev->slot,
                         .ret_addr = ret,
                         .region = region_of(s, t, ev->slot),
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
    if (t->stack.depth >= INJECT_DEPTH_MAX) {
        corrupt(s, sp, t->tid, 1, "opened more calls than its shadow stack holds");
        return;
    }
    if (frames_run_start(&t->stack, call.region) == t->stack.depth &&
        frames_count_runs(&t->stack, INJECT_STACKS_MAX) == INJECT_STACKS_MAX) {
        corrupt(s, sp, t->tid, 1, "opened calls on more stacks than a thread uses");
        return;
    }
    if (frames_enter(&t->stack, &call, session_frame_end, &ctx) < 0)
        return;
    rec_enter_from(s->rec, t->proc->pid, t->tid, func, call.ticks, ret);
    if (s->capture)
        captures_entered(s, t, func, data, len, ev->slot);
}

/* How far after calltrace's clock an event's time stamp may be: the TSCs of two CPUs may differ
 * a little, and an event reserved before the drain read the head may be stamped after it. */
#define FUTURE_NS 1000000

/* The latest time stamp an event may have now. */
static uint64_t ticks_limit(const struct session *s)
{
    return clock_ticks(s->clock) + (uint64_t)(FUTURE_NS / s->clock->ns_per_tick);
}

/* The TSC of these machines moves in steps of ~10 ns: a call and the one it makes at once (a tail
 * call) can read the same value, and two calls with the same start and duration have no order
 * in a trace. Each event of a thread is kept at least a nanosecond after the one before. The
 * program writes the time stamps too: none is taken from before calltrace started (the first
 * event's floor, see first_ticks) nor from after *limit (ticks_limit, read again before an
 * event is taken to be from the future). */
static void order_ticks(struct session *s, uint64_t *last, uint64_t *limit, struct inject_event *ev)
{
    uint64_t step = tick_step(s);
    if (ev->tsc > *limit && ev->tsc > (*limit = ticks_limit(s)))
        ev->tsc = *limit;
    if (ev->tsc < *last + step)
        ev->tsc = *last + step;
    *last = ev->tsc;
}

/* The ticks a slot's events come after: its last event's, or calltrace's start. */
static uint64_t first_ticks(const struct session *s, const struct inject_space *sp, int slot)
{
    uint64_t start = s->clock->start.ticks;
    return sp->slot_last[slot] > start ? sp->slot_last[slot] : start;
}

/* An event reserved but never committed: its writer was interrupted by a signal handler that
 * is still running (it commits once the handler returns), or left for good (the handler
 * longjmp'd out, the thread died). After this long running, or at the end, it is given up. */
#define STUCK_NS 200000000

/* A thread waiting for room in a full ring sleeps on the tail: it is moved on, and the thread
 * woken, every this many events, so that it runs on while calltrace drains the rest. */
#define TAIL_PUBLISH_EVENTS 8192
/* The region's progress word moves every this many events of the slow path (a few ms under
 * valgrind with -A), so that the other threads waiting for room see calltrace at work. */
#define PROGRESS_EVENTS 256

/* How far ahead of the event it reads the drain asks for the ring's cache lines. */
#define DRAIN_PREFETCH 1024

static void publish_tail(const struct inject_space *sp, uint8_t *ctl, uint64_t tail)
{
    space_store(ctl, CTL_TAIL, tail);
    space_progress(sp);
    ctl[CTL_GAVE_UP] = 0; /* it may give up waiting for a while, not for good */
    syscall(SYS_futex, ctl + CTL_TAIL, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Nearly every event is a call made below the open one on the same stack, or the return of the
 * open one: this loop does for them what on_event and the shadow-stack rules would, without
 * their generality (it is most of calltrace's work per traced call). It stops at the first
 * event it cannot take as simply (not committed yet, with data, a tail call, an unwound or
 * inherited frame, an unknown stack, a call deeper than the shadow stack holds, a time stamp
 * past limit...), which drain_slot then gives to on_event; returns the position it reached.
 * Not used with -A/-R or the call filters. Few live values, so that they stay in registers:
 * the events packed and the calls made are counted from positions and depths afterwards, not as
 * it goes. Two copies: drain_common, and drain_common_sites for --callsites, which packs each
 * entry's return address too (sites is a constant in each: the first has no trace of it). */
static inline __attribute__((always_inline)) uint64_t
drain_packed(struct session *s, struct inject_space *sp, int slot, struct thread *t,
             const uint8_t *ring, uint64_t tail, uint64_t head, uint64_t limit, const bool sites)
{
    struct rec_packer pk;
    if (!rec_packer_begin(s->rec, t->proc->pid, t->tid, sp->slot_last[slot], &pk))
        return tail;
    const uint64_t mask = sp->ring_size - 1, step = tick_step(s);
    /* the executable's exits compared here, those of the libraries' copies of the blob (-l)
     * only when there are some */
    const uint64_t exit = sp->blob_exit, exit_args = sp->blob_exit_args;
    const struct exit_set exits = space_exit_set(sp);
    const uint32_t first_func = sp->first_func, nfuncs = sp->end_func - sp->first_func;
    struct frame *frames = t->stack.frames;
    const size_t depth0 = t->stack.depth;
    const size_t cap = t->stack.cap < INJECT_DEPTH_MAX ? t->stack.cap : INJECT_DEPTH_MAX;
    size_t depth = depth0;
    /* prev: the thread's last event, which each is kept a step after (the general path may
     * have taken some that recorded nothing); last: the last one recorded, which the packer
     * counts deltas from */
    uint64_t start = tail, last = pk.last_ticks, prev = first_ticks(s, sp, slot);
    struct rec_site_packer spk = {0};
    if (sites)
        rec_site_packer_begin(s->rec, &spk);
    uint8_t *at = pk.at, *site_at = spk.at;
    uint64_t last_site = spk.last;
    for (; tail != head && at <= pk.limit && (!sites || site_at <= spk.limit); tail += EVENT_SIZE) {
        /* the ring was written up to a millisecond ago: out of L1, often of L2 */
        __builtin_prefetch(ring + ((tail + DRAIN_PREFETCH) & mask));
        struct inject_event ev;
        if (!ring_take(ring, mask, tail, &ev))
            break;
        uint32_t func = ev.func & INJECT_EVENT_FUNC;
        if ((ev.func & INJECT_EVENT_DATA) || func - first_func >= nfuncs || ev.ret == exit ||
            ev.ret == exit_args || ev.tsc > limit || (exits.nlibs && exit_set_has(&exits, ev.ret)))
            break;
        uint64_t ticks = ev.tsc < prev + step ? prev + step : ev.tsc;
        struct frame *top = depth ? &frames[depth - 1] : NULL;
        if (ev.func & INJECT_EVENT_EXIT) {
            if (!top || top->entry_sp != ev.slot || top->ret_addr != ev.ret || top->inherited ||
                (depth > 1 && top[-1].entry_sp == ev.slot && top[-1].ret_addr == ev.ret))
                break; /* not the open call, or the end of a chain of tail calls */
            depth--;
            at += call_pack_event(at, REC_EXIT, 0, top->func, ticks, last);
        } else {
            uint64_t region = known_region(t, ev.slot);
            if (!region || depth == cap ||
                (top && (top->region != region || top->entry_sp <= ev.slot)))
                break;
            frames[depth] = (struct frame){.entry_sp = ev.slot,
                                           .ret_addr = ev.ret,
                                           .region = region,
                                           .ticks = ticks,
                                           .func = func,
                                           .run_start = top ? top->run_start : 0};
            depth++;
            at += call_pack_event(at, REC_ENTER, 0, func, ticks, last);
            if (sites) {
                site_at += call_pack_site(site_at, ev.ret, last_site);
                last_site = ev.ret;
            }
        }
        last = prev = ticks;
        if (((tail + EVENT_SIZE) / EVENT_SIZE) % TAIL_PUBLISH_EVENTS == 0)
            publish_tail(sp, space_ctl(sp, slot), tail + EVENT_SIZE);
    }
    /* every event taken was packed: entries - exits = depth - depth0 */
    uint64_t events = (tail - start) / EVENT_SIZE;
    pk.at = at;
    pk.last_ticks = last;
    pk.count = (uint32_t)events;
    pk.calls = (events - (depth - depth0)) / 2;
    rec_packer_end(s->rec, &pk);
    if (sites) { /* entries + exits = events */
        spk.at = site_at;
        spk.last = last_site;
        spk.count = (uint32_t)((events + (depth - depth0)) / 2);
        rec_site_packer_end(s->rec, &spk);
    }
    t->stack.depth = depth;
    sp->slot_last[slot] = prev;
    return tail;
}

static __attribute__((noinline)) uint64_t drain_common(struct session *s, struct inject_space *sp,
                                                       int slot, struct thread *t,
                                                       const uint8_t *ring, uint64_t tail,
                                                       uint64_t head, uint64_t limit)
{
    return drain_packed(s, sp, slot, t, ring, tail, head, limit, false);
}

static __attribute__((noinline)) uint64_t
drain_common_sites(struct session *s, struct inject_space *sp, int slot, struct thread *t,
                   const uint8_t *ring, uint64_t tail, uint64_t head, uint64_t limit)
{
    return drain_packed(s, sp, slot, t, ring, tail, head, limit, true);
}

/* Told to stop (SIGINT, SIGTERM), calltrace drains for this long at most, all rings together
 * (the time drains take, not a detach's other work): a program can fill its rings with events
 * that each cost calltrace more than a usual one, and the user is waiting. */
#define STOP_DRAIN_NS 1000000000

/* Told to stop: *began is when this drain first saw it (0 before). True once the drains since
 * took STOP_DRAIN_NS. */
static bool drain_cut(struct session *s, uint64_t *began)
{
    uint64_t now = clock_ticks(s->clock);
    if (!*began)
        *began = now;
    return (double)(s->inject->stop_drained + now - *began) * s->clock->ns_per_tick > STOP_DRAIN_NS;
}

/* Calls calltrace itself could not record, and why (those the trampolines dropped are counted
 * in the control blocks). */
static void count_drops(struct inject_engine *e, enum drop_cause cause, uint64_t calls)
{
    e->drops += calls;
    e->drops_by[cause] += calls;
}

static void drain_slot(struct session *s, struct inject_space *sp, int slot, struct thread *t,
                       bool final)
{
    uint8_t *ctl = space_ctl(sp, slot);
    uint64_t head = space_load(ctl, CTL_HEAD), tail = space_load(ctl, CTL_TAIL);
    if (head == tail)
        return;
    if (!ring_span_ok(tail, head, sp->ring_size)) {
        corrupt(s, sp, t->tid, 1, "wrote impossible positions into its ring's indexes");
        space_store(ctl, CTL_TAIL, head);
        return;
    }
    /* after the head: every event in [tail, head) was stamped before this, unless its writer
     * was between reserving it and reading the time (order_ticks reads the clock again) */
    uint64_t limit = ticks_limit(s);
    s->inject->region_reads_left = REGION_READS_PER_DRAIN;
    const struct ring_view rv = space_ring_view(sp, ctl);
    uint64_t since_publish = 0, stop_began = 0;
    if (s->capture && !s->inject->record)
        s->inject->record = malloc(INJECT_RECORD_MAX);
    uint8_t *data = s->inject->record;
    bool common = !s->capture && !s->rec->gate && !s->inject->general_drain_only;
    for (size_t size; tail != head; tail += size) {
        if (common &&
            (tail = s->rec->sites
                        ? drain_common_sites(s, sp, slot, t, rv.ring, tail, head, limit)
                        : drain_common(s, sp, slot, t, rv.ring, tail, head, limit)) == head)
            break;
        if (*s->stop_signal && drain_cut(s, &stop_began)) {
            /* about a call for every two events: its entry and its exit */
            count_drops(s->inject, DROP_STOPPED, (head - tail) / (2 * EVENT_SIZE));
            dbg(DBG_INJECT, 1, "thread %d: %llu bytes of its ring left unread: told to stop",
                (int)t->tid, (unsigned long long)(head - tail));
            tail = head;
            break;
        }
        struct inject_event ev;
        enum ring_state state = ring_read(&rv, tail, head, &ev, data, &size);
        if (state == RING_PENDING && !final) {
            uint64_t stuck = clock_ticks(s->clock);
            /* only the time the thread could run counts: a thread stopped in the middle of a
             * trampoline (SIGSTOP, a ptrace stop) commits its event once it runs again */
            if (sp->slot_stuck_at[slot] != tail + 1 || proc_task_stopped(sp->pid, t->tid)) {
                sp->slot_stuck_at[slot] = tail + 1;
                sp->slot_stuck_since[slot] = stuck;
            }
            if ((double)(stuck - sp->slot_stuck_since[slot]) * s->clock->ns_per_tick < STUCK_NS)
                break;
        }
        if (state == RING_CORRUPT)
            corrupt(s, sp, t->tid, 1, "wrote a record of an impossible length");
        else if (state != RING_READY)
            count_drops(s->inject, DROP_UNREADABLE, 1);
        if (state != RING_READY)
            continue;
        uint64_t last = first_ticks(s, sp, slot);
        order_ticks(s, &last, &limit, &ev);
        sp->slot_last[slot] = last;
        bool with_data = ev.func & INJECT_EVENT_DATA;
        on_event(s, t, sp, &ev, &sp->slot_last[slot], with_data ? data : NULL,
                 with_data ? size - EVENT_SIZE : 0);
        if (++since_publish % PROGRESS_EVENTS == 0)
            space_progress(sp);
        if (since_publish % TAIL_PUBLISH_EVENTS == 0)
            publish_tail(sp, ctl, tail + size);
    }
    if (stop_began)
        s->inject->stop_drained += clock_ticks(s->clock) - stop_began;
    if (sp->slot_last[slot] > t->last_ticks)
        t->last_ticks = sp->slot_last[slot];
    publish_tail(sp, ctl, tail);
}

/* ended: the thread that ended (its ring is drained whole: it will write no more), -1: every
 * thread's, 0: none. Another thread may be inside a trampoline, between reserving a record
 * and committing it: a final drain of its ring would lose that record. */
static void drain_space(struct session *s, struct inject_space *sp, pid_t ended)
{
    space_progress(sp);
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
        drain_slot(s, sp, i, t, ended == -1 || sp->slot_tid[i] == ended);
    }
}

static void drain_all(struct session *s, pid_t ended)
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
            drain_space(s, sp, ended);
        }
        if (!gone)
            return;
        addr_map_del(&e->spaces, (uint64_t)gone->pid);
        space_free(e, gone);
    }
}

void inject_drain(struct session *s, bool final)
{
    drain_all(s, final ? -1 : 0);
    if (s->detaching) /* a thread waiting in a hook for calltrace is let go, unserved */
        inject_serve_requests(s);
}

/* SIGCHLD tells of every ptrace stop: calltrace sleeps on it, blocked, with a timeout to drain
 * the rings, so a stop is handled at once and the rings at least every IDLE_WAIT_NS. */
int inject_wait(struct session *s, struct ptrace_stop *stop)
{
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    for (;;) {
        int got = ptrace_stop_wait(-1, STOP_WAIT_POLL | STOP_WAIT_INTERRUPTIBLE, stop);
        /* a thread or process that ended wrote everything it will: drain it whole */
        drain_all(s, got > 0 && ptrace_stop_ended(stop) ? stop->tid : 0);
        if (got != 0)
            return got;
        inject_serve_requests(s);
        /* the record reaches the file every ~10 ms, as between ptrace stops: little is lost
         * if calltrace is killed */
        recorder_tick(s->rec, clock_ticks(s->clock));
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

void inject_own_code(struct session *s, struct thread *t, bool done)
{
    if (!done) {
        inject_drain_thread(s, t);
        return;
    }
    struct inject_space *sp = addr_map_get(&s->inject->spaces, (uint64_t)t->proc->pid);
    int slot = sp ? space_slot_of(sp, t->tid) : -1;
    if (slot < 0 || sp->slot_lender[slot])
        return;
    uint8_t *ctl = space_ctl(sp, slot);
    uint64_t head = space_load(ctl, CTL_HEAD), tail = space_load(ctl, CTL_TAIL);
    if (head != tail)
        dbg(DBG_INJECT, 1, "thread %d: %llu events of calltrace's own calls left out", (int)t->tid,
            (unsigned long long)((head - tail) / EVENT_SIZE));
    publish_tail(sp, ctl, head);
}

bool inject_hooked_return(const struct session *s, const struct thread *t, uint64_t rsp,
                          uint64_t *ret)
{
    const struct inject_space *sp = addr_map_get(&s->inject->spaces, (uint64_t)t->proc->pid);
    if (!sp || !space_is_blob_exit(sp, *ret))
        return false;
    long i = frames_innermost_at(&t->stack, rsp);
    if (i >= 0)
        *ret = t->stack.frames[i].ret_addr;
    return true;
}

bool inject_has_rings(const struct session *s)
{
    return s->inject->spaces.count > 0;
}

/* base: the count of the slots already released; at: the count's offset in a control block. */
static uint64_t sum_slot_counts(const struct session *s, uint64_t base, size_t at)
{
    uint64_t n = base;
    ADDR_MAP_FOREACH(&s->inject->spaces, slot)
    {
        const struct inject_space *sp = slot->value;
        for (int i = 0; i < REGION_SLOTS; i++)
            if (sp->slot_tid[i])
                n += space_count(space_ctl(sp, i), at);
    }
    return n;
}

uint64_t inject_dropped_calls(const struct session *s)
{
    return s->inject ? sum_slot_counts(s, s->inject->drops, CTL_DROPS) : 0;
}

void inject_drop_causes(const struct session *s, uint64_t by[DROP_CAUSES])
{
    static const size_t counter_at[] = {
        [DROP_RING_FULL] = CTL_DROPS_FULL,
        [DROP_SHADOW_FULL] = CTL_DROPS_SHADOW,
        [DROP_VFORK] = CTL_DROPS_VFORK,
    };
    for (size_t c = 0; c < DROP_CAUSES; c++) {
        by[c] = s->inject ? s->inject->drops_by[c] : 0;
        if (s->inject && c < sizeof(counter_at) / sizeof(counter_at[0]))
            by[c] = sum_slot_counts(s, by[c], counter_at[c]);
    }
}

uint64_t inject_lost_returns(const struct session *s)
{
    return s->inject ? sum_slot_counts(s, s->inject->lost_returns, CTL_LOST_RETURNS) : 0;
}

uint64_t inject_corrupt_events(const struct session *s)
{
    return s->inject ? s->inject->corrupt_events : 0;
}
