/* Fuzz target: the inject engine's ring reader (tracer/inject/ring_reader.h) draining arbitrary
 * rings. The traced program can write every byte of its control block and ring: whatever it
 * wrote, the reader must stay inside the ring and its slack, step forward by what it says (never
 * past the head), end within one step per event of the span, and tell the fast path's take and
 * the general read apart only where the general one sees more (data, or a stamp being written).
 *
 * Input: 1 byte choosing the ring's size (64 B to 4 KiB), 8 bytes of head, 8 of tail offset
 * from the head (so that most spans are plausible), then the ring's bytes (the rest is 0). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "tracer/inject/ring_reader.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t *ctl, *ring, *buf;
    if (!ctl) {
        ctl = calloc(1, CTL_SIZE);
        ring = malloc(RING_MAX + INJECT_RECORD_MAX);
        buf = malloc(INJECT_RECORD_MAX);
        if (!ctl || !ring || !buf)
            abort();
    }
    if (size < 1)
        return 0;
    size_t ring_size = (size_t)64 << (data[0] % 7);
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
    return 0;
}
