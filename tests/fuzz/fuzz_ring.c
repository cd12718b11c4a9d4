/* Fuzz target: the inject engine's ring reader (tracer/inject/ring_reader.h) draining arbitrary
 * rings. The traced program can write every byte of its control block and ring: whatever it
 * wrote, the reader must stay inside the ring and its slack, step forward by what it says (never
 * past the head), end within one step per event of the span, and tell the fast path's take and
 * the general read apart only where the general one sees more (data, or a stamp being written).
 * Then the whole drain of a thread's ring (tracer/inject/drain.c: the fast path, the shadow-stack
 * rules, the recorder) runs over the same bytes, in a session without a live process: it must
 * not crash, must not move the tail outside what it was given, and must keep the thread's open
 * calls within what its shadow stack holds, on few stacks. Some inputs drain with -A/-R on:
 * their records' data goes through the capture tables of two captured functions (every kind of
 * value: stack arguments, pointees, vector registers, a result in memory; and registers only)
 * into REC_ARGS and REC_RETVAL records, tail-call chains keeping their return values; some
 * drain into a thread whose open calls are a few short of the shadow stack's depth.
 *
 * Input: 1 byte choosing the ring's size (64 B to 4 KiB; bit 7: -A/-R, bit 6: deep), 8 bytes of
 * head, 8 of tail offset from the head (so that most spans are plausible), then the ring's bytes
 * (the rest is 0). */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "tracer/tracee.h"
#include "fuzz.h"
#include "record/writer.h"
#include "symbols/capture_plan.h"
#include "tracer/arg_capture.h"
#include "tracer/inject/capture_table.h"
#include "tracer/inject/inject.h"
#include "tracer/inject/ring_reader.h"
#include "tracer/inject/space.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RING_MAX 4096

static uint64_t take_u64(const uint8_t **data, size_t *size)
{
    uint64_t v = 0;
    size_t n = *size < 8 ? *size : 8;
    memcpy(&v, *data, n);
    *data += n;
    *size -= n;
    return v;
}

/* The general path over [tail, head): every step within the span and at least an event. */
static void drain_general(const struct ring_view *rv, uint64_t tail, uint64_t head, uint8_t *buf)
{
    uint64_t steps = 0, limit = (head - tail) / EVENT_SIZE;
    while (tail != head) {
        struct inject_event ev;
        size_t step = 0;
        enum ring_state state = ring_read(rv, tail, head, &ev, buf, &step);
        FUZZ_ASSERT(state <= RING_CORRUPT);
        FUZZ_ASSERT(step >= EVENT_SIZE && step % EVENT_SIZE == 0 && step <= head - tail);
        FUZZ_ASSERT(step <= INJECT_RECORD_MAX);
        if (state == RING_READY && !(ev.func & INJECT_EVENT_DATA))
            FUZZ_ASSERT(step == EVENT_SIZE);
        tail += step;
        FUZZ_ASSERT(++steps <= limit);
    }
}

/* The fast path's take agrees with the general read wherever it takes an event. */
static void drain_fast(const struct ring_view *rv, uint64_t tail, uint64_t head, uint8_t *buf)
{
    for (; tail != head; tail += EVENT_SIZE) {
        struct inject_event fast, slow;
        if (!ring_take(rv->ring, rv->size - 1, tail, &fast))
            continue;
        size_t step;
        enum ring_state state = ring_read(rv, tail, head, &slow, buf, &step);
        if (fast.func & INJECT_EVENT_DATA)
            continue; /* the fast path gives such events to the general one */
        FUZZ_ASSERT(state == RING_READY && !memcmp(&fast, &slow, sizeof(fast)));
    }
}

/* A session with one traced thread whose ring is the input's, writing its record nowhere. */
struct drain_harness {
    struct session s;
    struct trace_options opts;
    struct capture_state *capture; /* s.capture when the input asks for -A/-R */
    struct inject_engine engine;
    struct recorder rec;
    struct clock_calibration clock;
    struct process proc;
    struct thread thread;
    struct frame *deep; /* open calls, a few short of INJECT_DEPTH_MAX */
    size_t deep_depth;
    struct inject_space sp;
};

#define STACK_HI 0x7ffd00100000ull
#define DEEP_TOP 0x7ffd000f0000ull
#define FUNC_VALUES 1 /* captured: every kind of value */
#define FUNC_REGS 2   /* captured: registers only */

static struct capture_read entry_reads[] = {
    {0, READ_STRING, {SRC_GPR, 0, 8, 0}, 0, {0}},
    {1, READ_COUNTED, {SRC_GPR, 1, 8, 0}, 0, {SRC_GPR, 2, 4, 0}},
    {4, READ_FIXED, {SRC_GPR, 5, 8, 0}, 4, {0}},
    {6, READ_COUNTED, {SRC_STACK, 0, 8, 0}, 0, {SRC_STACK, 8, 8, 0}},
    {7, READ_COUNTED, {SRC_GPR, 0, 8, 0}, 0, {SRC_CONST, 0, 8, 3}},
};
static struct capture_read result_reads[] = {
    {CHUNK_RESULT, READ_STRING, {SRC_GPR, 0, 8, 0}, 0, {0}},
};

/* The plans of the two captured functions, and the tables calltrace would have placed. */
static void add_captures(struct drain_harness *h)
{
    static struct capture_plan values = {.entry = true,
                                         .result = true,
                                         .entry_xmm = true,
                                         .stack_bytes = 16,
                                         .reads = entry_reads,
                                         .nreads = sizeof(entry_reads) / sizeof(*entry_reads),
                                         .result_fp = true,
                                         .hidden_size = 24,
                                         .result_reads = result_reads,
                                         .nresult_reads = 1};
    static struct capture_plan regs = {.entry = true, .result = true};
    struct capture_plan *plans[] = {[FUNC_VALUES] = &values, [FUNC_REGS] = &regs};
    h->opts.capture = (struct capture_options){.args = true, .retval = true, .string_max = 64};
    h->s.opts = &h->opts;
    if (!(h->capture = capture_state_new()) || addr_map_init(&h->engine.capture_tables, 4) < 0)
        abort();
    for (uint32_t func = FUNC_VALUES; func <= FUNC_REGS; func++) {
        uint8_t *table = calloc(1, capture_table_size(plans[func]));
        if (!table)
            abort();
        capture_table_encode(plans[func], 64, 4096, table);
        if (capture_plan_add(h->capture, func, plans[func]) < 0 ||
            addr_map_put(&h->engine.capture_tables, (uint64_t)func + 1, table) < 0)
            abort();
    }
}

/* Open calls on the thread's stack, each below the one before, a few short of the most a
 * shadow stack holds: an input's entries reach that depth. */
static void add_deep_stack(struct drain_harness *h)
{
    h->deep_depth = INJECT_DEPTH_MAX - 4;
    h->deep = calloc(h->deep_depth, sizeof(*h->deep));
    if (!h->deep)
        abort();
    for (size_t i = 0; i < h->deep_depth; i++)
        h->deep[i] = (struct frame){.entry_sp = DEEP_TOP - 16 * i,
                                    .ret_addr = 0x401234,
                                    .region = STACK_HI,
                                    .ticks = 1,
                                    .func = FUNC_REGS + 1};
}

static struct drain_harness *harness_new(void)
{
    struct drain_harness *h = calloc(1, sizeof(*h));
    if (!h)
        abort();
    h->clock = (struct clock_calibration){.use_tsc = false, .ns_per_tick = 1};
    /* the recorder creates its file (O_EXCL): one of its own, then /dev/null in its place */
    char dir[] = "/tmp/calltrace-fuzz-ring-XXXXXX", path[64];
    if (!mkdtemp(dir))
        abort();
    snprintf(path, sizeof(path), "%s/r.ctr", dir);
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null < 0 || recorder_open(&h->rec, AT_FDCWD, path, 0644, &h->clock) < 0 ||
        dup2(null, h->rec.out.fd) < 0 || unlink(path) < 0 || rmdir(dir) < 0 ||
        addr_map_init(&h->engine.spaces, 4) < 0)
        abort();
    close(null);
    static volatile sig_atomic_t no_stop;
    h->s.rec = &h->rec;
    h->s.clock = &h->clock;
    h->s.inject = &h->engine;
    h->s.stop_signal = &no_stop;
    add_captures(h);
    add_deep_stack(h);
    /* a pid no process has: stack_region and the stuck-event check ask /proc about it, and
     * fail at once (this process's maps are long to read, and the events' stacks are made up) */
    h->proc.pid = 0x7ffffff0;
    h->thread.tid = gettid();
    h->thread.proc = &h->proc;
    struct inject_space *sp = &h->sp;
    sp->pid = h->proc.pid;
    sp->slot_size = CTL_SIZE + SHADOW_SIZE + RING_MAX + INJECT_RECORD_MAX;
    sp->local = calloc(1, REGION_HEADER + sp->slot_size);
    if (!sp->local || addr_map_put(&h->engine.spaces, (uint64_t)sp->pid, sp) < 0)
        abort();
    sp->slot_tid[0] = h->thread.tid;
    sp->first_func = 1;
    sp->end_func = 64;
    sp->blob_exit = 0x401000;
    sp->blob_exit_args = 0x401100;
    return h;
}

/* Drains the input's ring as calltrace drains a live thread's, from a thread with no open calls
 * (or a deep stack of them) on a stack around 0x7ffd00000000, with -A/-R or without. */
static void drain_whole(struct drain_harness *h, const uint8_t *ring, size_t ring_size,
                        uint64_t tail, uint64_t head, bool capture, bool deep)
{
    struct inject_space *sp = &h->sp;
    uint8_t *ctl = space_ctl(sp, 0);
    struct ring_view rv = space_ring_view(sp, ctl);
    memcpy(rv.ring, ring, RING_MAX + INJECT_RECORD_MAX);
    sp->ring_size = ring_size;
    sp->slot_last[0] = 0;
    sp->slot_stuck_at[0] = 0;
    space_store(ctl, CTL_HEAD, head);
    space_store(ctl, CTL_TAIL, tail);
    h->engine.general_drain_only = head & 32; /* either path first */
    h->s.capture = capture ? h->capture : NULL;
    struct shadow_stack *stack = &h->thread.stack;
    stack->depth = 0;
    if (deep) {
        if (stack->cap < INJECT_DEPTH_MAX) {
            free(stack->frames);
            if (!(stack->frames = calloc(INJECT_DEPTH_MAX, sizeof(*stack->frames))))
                abort();
            stack->cap = INJECT_DEPTH_MAX;
        }
        memcpy(stack->frames, h->deep, h->deep_depth * sizeof(*h->deep));
        stack->depth = h->deep_depth;
    }
    h->thread.region_lo[0] = deep ? 0x7ffc00000000ull : 0x7ffd00000000ull;
    h->thread.region_hi[0] = STACK_HI;
    h->thread.region_lo[1] = h->thread.region_hi[1] = 0;
    inject_drain_thread(&h->s, &h->thread);
    uint64_t reached = space_load(ctl, CTL_TAIL);
    FUZZ_ASSERT(reached - tail <= head - tail);
    FUZZ_ASSERT(stack->depth <= INJECT_DEPTH_MAX);
    FUZZ_ASSERT(frames_count_runs(stack, SIZE_MAX) <= INJECT_STACKS_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct drain_harness *harness;
    static uint8_t *ctl, *ring, *buf;
    if (!ctl) {
        ctl = calloc(1, CTL_SIZE);
        ring = malloc(RING_MAX + INJECT_RECORD_MAX);
        buf = malloc(INJECT_RECORD_MAX);
        if (!ctl || !ring || !buf)
            abort();
        fuzz_silence_stderr();
        harness = harness_new();
    }
    if (size < 1)
        return 0;
    size_t ring_size = (size_t)64 << ((data[0] & 7) % 7);
    bool capture = data[0] & 0x80, deep = data[0] & 0x40;
    data++, size--;
    uint64_t head = take_u64(&data, &size);
    uint64_t tail = head - take_u64(&data, &size);
    memset(ring, 0, RING_MAX + INJECT_RECORD_MAX);
    memcpy(ring, data, size < RING_MAX + INJECT_RECORD_MAX ? size : RING_MAX + INJECT_RECORD_MAX);
    memcpy(ctl + CTL_HEAD, &head, 8);
    memcpy(ctl + CTL_TAIL, &tail, 8);
    struct ring_view rv = {ctl, ring, ring_size};
    if (!ring_span_ok(tail, head, ring_size))
        return 0; /* the drain gives such a ring up */
    drain_general(&rv, tail, head, buf);
    drain_fast(&rv, tail, head, buf);
    drain_whole(harness, ring, ring_size, tail, head, capture, deep);
    return 0;
}
