/* The inject engine's two ways of draining a ring give the same record: the same events, from
 * rings built by hand, are drained once with the fast path (drain.c drain_common) taking what it
 * can, and once with every event through the general one (on_event and tracer/frames.h's
 * rules), and the records of the two files must be byte for byte the same. The events are those of
 * a program: nested calls and returns on one stack (the fast path's), and what it gives to the
 * general path: tail calls, longjmp, a call on another stack, an event of no traced function,
 * equal time stamps, and rings that wrap. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracer/tracee.h"
#include "record/reader.h"
#include "record/writer.h"
#include "tracer/inject/inject.h"
#include "tracer/inject/space.h"
#include "unit.h"

#define RING_SIZE (64u << 10) /* 2048 events a turn */
#define STACK_LO 0x7ffd00000000ull
#define STACK_HI 0x7ffd00100000ull
#define BLOB_EXIT 0x7f0000001000ull
#define FIRST_FUNC 1
#define END_FUNC 40
#define MAX_EVENTS 20000

struct harness {
    struct session s;
    struct inject_engine engine;
    struct recorder rec;
    struct clock_calibration clock;
    struct process proc;
    struct thread thread;
    struct inject_space *sp;
    uint64_t head;
};

static void harness_open(struct harness *h, const char *path, bool general_only)
{
    memset(h, 0, sizeof(*h));
    h->clock = (struct clock_calibration){.use_tsc = false, .ns_per_tick = 1};
    CHECK(recorder_open(&h->rec, AT_FDCWD, path, 0644, &h->clock) == 0);
    CHECK(addr_map_init(&h->engine.spaces, 4) == 0);
    h->engine.ring_size = RING_SIZE;
    h->engine.general_drain_only = general_only;
    static volatile sig_atomic_t no_stop;
    h->s.rec = &h->rec;
    h->s.clock = &h->clock;
    h->s.inject = &h->engine;
    h->s.stop_signal = &no_stop;
    h->proc.pid = getpid();
    h->thread.tid = gettid();
    h->thread.proc = &h->proc;
    h->thread.region_lo[0] = STACK_LO;
    h->thread.region_hi[0] = STACK_HI;
    struct inject_space *sp = calloc(1, sizeof(*sp));
    sp->pid = h->proc.pid;
    sp->ring_size = RING_SIZE;
    sp->slot_size = CTL_SIZE + SHADOW_SIZE + RING_SIZE + INJECT_RECORD_MAX;
    sp->size = REGION_HEADER + sp->slot_size;
    sp->local = calloc(1, sp->size);
    sp->slot_tid[0] = h->thread.tid;
    sp->first_func = FIRST_FUNC;
    sp->end_func = END_FUNC;
    sp->blob_exit = BLOB_EXIT;
    sp->blob_exit_args = BLOB_EXIT + 0x100;
    CHECK(sp->local != NULL);
    space_store(space_ctl(sp, 0), CTL_LIMIT, RING_SIZE - EVENT_SIZE);
    space_store(space_ctl(sp, 0), CTL_MASK, RING_SIZE - 1);
    CHECK(addr_map_put(&h->engine.spaces, (uint64_t)sp->pid, sp) == 0);
    h->sp = sp;
}

static void harness_close(struct harness *h)
{
    CHECK(recorder_close(&h->rec) == 0);
    frames_free(&h->thread.stack);
    free(h->sp->local);
    free(h->sp);
    addr_map_free(&h->engine.spaces);
}

/* Commits events[0..n) into the harness's ring, from its head on, and drains them. */
static void harness_drain(struct harness *h, const struct inject_event *events, size_t n)
{
    struct ring_view rv = space_ring_view(h->sp, space_ctl(h->sp, 0));
    for (size_t i = 0; i < n; i++)
        CHECK(ring_append(&rv, &events[i]));
    inject_drain_thread(&h->s, &h->thread);
    CHECK_EQ_U64(space_load(rv.ctl, CTL_TAIL), space_load(rv.ctl, CTL_HEAD));
}

/* A program's events, made up: a stack of open calls, each a slot and a return address. */
struct program {
    struct inject_event *events;
    size_t n;
    uint64_t slot[256], ret[256];
    uint32_t func[256];
    size_t depth;
    uint64_t tsc;
    uint32_t seed;
};

static uint32_t next_random(struct program *p)
{
    p->seed = p->seed * 1103515245u + 12345u;
    return p->seed >> 8;
}

static void emit(struct program *p, uint64_t slot, uint64_t ret, uint32_t func)
{
    /* steps of 0 now and then: calls the TSC cannot tell apart */
    p->tsc += next_random(p) % 4 == 0 ? 0 : next_random(p) % 50;
    p->events[p->n++] =
        (struct inject_event){.tsc = p->tsc, .slot = slot, .ret = ret, .func = func};
}

static void call(struct program *p, uint64_t slot, uint64_t ret, uint32_t func)
{
    emit(p, slot, ret, func);
    p->slot[p->depth] = slot;
    p->ret[p->depth] = ret;
    p->func[p->depth++] = func;
}

static void ret(struct program *p)
{
    p->depth--;
    emit(p, p->slot[p->depth], p->ret[p->depth], p->func[p->depth] | INJECT_EVENT_EXIT);
}

static void step(struct program *p)
{
    uint32_t r = next_random(p) % 100;
    uint64_t below =
        p->depth ? p->slot[p->depth - 1] - 16 * (1 + next_random(p) % 8) : STACK_HI - 64;
    uint32_t func = FIRST_FUNC + next_random(p) % (END_FUNC - FIRST_FUNC);
    uint64_t ret_addr = 0x401000 + 16 * (next_random(p) % 64);
    if (r < 45 && p->depth < 200) {
        call(p, below, ret_addr, func);
    } else if (r < 90 && p->depth) {
        ret(p);
    } else if (r < 93 && p->depth) {
        /* a tail call: the callee enters in its caller's slot, over the trampoline's exit */
        uint64_t slot = p->slot[p->depth - 1];
        call(p, slot, BLOB_EXIT, func);
        ret(p);
        ret(p);
    } else if (r < 96 && p->depth > 3) {
        /* longjmp: the innermost calls are abandoned, a call is made further up */
        size_t keep = p->depth / 2;
        p->depth = keep;
        call(p, p->slot[keep - 1] - 8, ret_addr, func);
    } else if (r < 97) {
        emit(p, below, ret_addr, END_FUNC + 5); /* no function of this process: ignored */
    } else if (r < 98) {
        /* a signal handler on another stack (not a mapping this thread knows) */
        emit(p, 0x1000, ret_addr, func);
        emit(p, 0x1000, ret_addr, func | INJECT_EVENT_EXIT);
    } else if (p->depth) {
        /* an exit that is not the open call's: another return address */
        emit(p, p->slot[p->depth - 1], ret_addr + 1, p->func[p->depth - 1] | INJECT_EVENT_EXIT);
        p->depth--;
    }
}

static void drain_both(struct harness *fast, struct harness *general, struct program *p)
{
    harness_drain(fast, p->events, p->n);
    harness_drain(general, p->events, p->n);
    p->n = 0;
}

/* Are the records of the two files the same, byte for byte, as the reader hands them out? The
 * files themselves differ where the packing does: the REC_CALLS record the fast path's packer
 * opens counts its first delta from the thread's last event, rec_enter's from the event itself,
 * so their deltas, and where a full REC_CALLS record ends, are written differently; and the
 * header and the last clock anchor hold the time each file was closed. */
static bool same_records(const char *a, const char *b, size_t *n)
{
    struct rec_reader ra, rb;
    char why[256];
    CHECK(rec_reader_open(&ra, AT_FDCWD, a, why, sizeof(why)) == 0);
    CHECK(rec_reader_open(&rb, AT_FDCWD, b, why, sizeof(why)) == 0);
    bool same = true;
    for (*n = 0; same; ++*n) {
        const struct rec_hdr *ha = rec_reader_next(&ra), *hb = rec_reader_next(&rb);
        if (!ha || !hb) {
            same = ha == hb;
            break;
        }
        /* a clock anchor holds the time it was written */
        size_t compared = ha->type == REC_CLOCK ? sizeof(*ha) : ha->size;
        same = ha->size == hb->size && !memcmp(ha, hb, compared);
    }
    if (!same)
        fprintf(stderr, "record %zu differs\n", *n);
    CHECK(!ra.truncated && !ra.corrupt && !rb.truncated && !rb.corrupt);
    rec_reader_close(&ra);
    rec_reader_close(&rb);
    return same;
}

static void test_equivalence(const char *dir)
{
    char fast_path[512], general_path[512];
    snprintf(fast_path, sizeof(fast_path), "%s/fast.ctr", dir);
    snprintf(general_path, sizeof(general_path), "%s/general.ctr", dir);
    static struct harness fast, general;
    harness_open(&fast, fast_path, false);
    harness_open(&general, general_path, true);
    struct program p = {
        .events = calloc(MAX_EVENTS, sizeof(*p.events)), .tsc = 1u << 20, .seed = 7};
    /* drains of every size: a few events, most of a turn; 40 turns of the ring in all */
    for (int round = 0; round < 200; round++) {
        size_t want = round % 3 == 0 ? 5 : RING_SIZE / EVENT_SIZE - 300;
        while (p.n < want)
            step(&p);
        drain_both(&fast, &general, &p);
    }
    CHECK(fast.rec.calls > 100000);
    CHECK_EQ_U64(fast.rec.calls, general.rec.calls);
    harness_close(&fast);
    harness_close(&general);
    struct stat st;
    CHECK(stat(fast_path, &st) == 0 && st.st_size > 100000);
    size_t n;
    CHECK(same_records(fast_path, general_path, &n));
    CHECK(n > 200000);
    free(p.events);
}

int main(void)
{
    char dir[] = "/tmp/calltrace-unit-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    test_equivalence(dir);
    char cmd[600];
    if (getenv("KEEP"))
        return unit_finish("test_ring_drain");
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return 1;
    return unit_finish("test_ring_drain");
}
