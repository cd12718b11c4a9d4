/* The inject engine's ring reader (tracer/inject/ring_reader.h) on hand-built rings: committed
 * events and records with data, pending ones (fresh memory, the stale words of the ring's last
 * turn), wrap-around, events written over a turn ahead, bad lengths, and the C writer. */
#include <stdlib.h>
#include <string.h>

#include "tracer/inject/ring_reader.h"
#include "unit.h"

#define RING_SIZE 256 /* 8 events a turn */
#define TURN (RING_SIZE / EVENT_SIZE)

struct test_ring {
    struct ring_view rv;
    uint8_t data[INJECT_RECORD_MAX];
};

static void ring_init(struct test_ring *r)
{
    r->rv.ctl = aligned_alloc(64, CTL_SIZE);
    r->rv.ring = aligned_alloc(64, RING_SIZE + INJECT_RECORD_MAX);
    r->rv.size = RING_SIZE;
    memset(r->rv.ctl, 0, CTL_SIZE);
    memset(r->rv.ring, 0, RING_SIZE + INJECT_RECORD_MAX);
    memcpy(r->rv.ctl + CTL_LIMIT, &(uint64_t){RING_SIZE - EVENT_SIZE}, 8);
    memcpy(r->rv.ctl + CTL_MASK, &(uint64_t){RING_SIZE - 1}, 8);
}

static void ring_fini(struct test_ring *r)
{
    free(r->rv.ctl);
    free(r->rv.ring);
}

static void set_head(struct test_ring *r, uint64_t head)
{
    memcpy(r->rv.ctl + CTL_HEAD, &head, 8);
}

/* The event a writer leaves at pos, stamped with stamp (ring_stamp(pos): committed). */
static uint8_t *put_event(struct test_ring *r, uint64_t pos, uint32_t func, uint32_t stamp)
{
    uint8_t *at = r->rv.ring + (pos & (RING_SIZE - 1));
    struct inject_event ev = {.tsc = 1000 + pos,
                              .slot = 0x7ff0 - pos,
                              .ret = 0x401000 + pos,
                              .func = func,
                              .stamp = stamp};
    memcpy(at, &ev, sizeof(ev));
    return at;
}

static enum ring_state read_at(struct test_ring *r, uint64_t pos, uint64_t head,
                               struct inject_event *ev, size_t *size)
{
    return ring_read(&r->rv, pos, head, ev, r->data, size);
}

static void test_committed_and_pending(void)
{
    struct test_ring r;
    ring_init(&r);
    struct inject_event ev;
    size_t size;
    put_event(&r, 0, 5, ring_stamp(0));
    put_event(&r, 32, 5 | INJECT_EVENT_EXIT, ring_stamp(32));
    set_head(&r, 96);
    CHECK(read_at(&r, 0, 96, &ev, &size) == RING_READY);
    CHECK_EQ_U64(size, EVENT_SIZE);
    CHECK_EQ_U64(ev.func, 5);
    CHECK_EQ_U64(ev.tsc, 1000);
    CHECK_EQ_U64(ev.slot, 0x7ff0);
    CHECK(read_at(&r, 32, 96, &ev, &size) == RING_READY);
    CHECK_EQ_U64(ev.func, 5 | INJECT_EVENT_EXIT);
    /* reserved, never written: fresh memory */
    CHECK(read_at(&r, 64, 96, &ev, &size) == RING_PENDING);
    /* the stale words of the ring's last turn: a stamp a turn behind, and a plausible length */
    uint8_t *at = put_event(&r, 64, 7 | INJECT_EVENT_DATA, ring_stamp(64) - TURN);
    memcpy(at + EV_DATA_LEN, &(uint64_t){32}, 8);
    CHECK(read_at(&r, 64, 96, &ev, &size) == RING_PENDING);
    /* a stamp just ahead, not a whole turn: stale as well */
    put_event(&r, 64, 7, ring_stamp(64) + 3);
    CHECK(read_at(&r, 64, 96, &ev, &size) == RING_PENDING);
    ring_fini(&r);
}

static void test_overwritten_and_wrap(void)
{
    struct test_ring r;
    ring_init(&r);
    struct inject_event ev;
    size_t size;
    /* positions 5 turns in: the same bytes as positions 0.. */
    uint64_t base = 5 * RING_SIZE;
    for (uint64_t pos = base - 64; pos < base + 64; pos += EVENT_SIZE)
        put_event(&r, pos, (uint32_t)(pos / EVENT_SIZE), ring_stamp(pos));
    set_head(&r, base + 64);
    for (uint64_t pos = base - 64; pos < base + 64; pos += EVENT_SIZE) {
        CHECK(read_at(&r, pos, base + 64, &ev, &size) == RING_READY);
        CHECK_EQ_U64(ev.func, pos / EVENT_SIZE);
    }
    /* what a reader a turn (or two) behind finds there: written over */
    CHECK(read_at(&r, base - RING_SIZE, base + 64, &ev, &size) == RING_OVERWRITTEN);
    CHECK(read_at(&r, base - 2 * RING_SIZE, base + 64, &ev, &size) == RING_OVERWRITTEN);
    /* the 32-bit stamp wraps: positions around 2^37 still pair with their stamps */
    uint64_t far = (1ull << 37) - 64;
    for (uint64_t pos = far; pos < far + 128; pos += EVENT_SIZE)
        put_event(&r, pos, 9, ring_stamp(pos));
    set_head(&r, far + 128);
    for (uint64_t pos = far; pos < far + 128; pos += EVENT_SIZE)
        CHECK(read_at(&r, pos, far + 128, &ev, &size) == RING_READY);
    ring_fini(&r);
}

static void test_data(void)
{
    struct test_ring r;
    ring_init(&r);
    struct inject_event ev;
    size_t size;
    /* a record at the ring's last event runs on into the slack: read in one piece */
    uint64_t pos = RING_SIZE - EVENT_SIZE;
    uint8_t *at = put_event(&r, pos, 3 | INJECT_EVENT_DATA, ring_stamp(pos));
    memcpy(at + EV_DATA_LEN, &(uint64_t){64}, 8);
    memset(at + EV_DATA, 0xab, 56);
    set_head(&r, pos + 96);
    CHECK(read_at(&r, pos, pos + 96, &ev, &size) == RING_READY);
    CHECK_EQ_U64(size, 96);
    CHECK_EQ_U64(ev.func, 3 | INJECT_EVENT_DATA);
    CHECK(r.data[8] == 0xab && r.data[63] == 0xab);
    /* nowhere to copy the data: the event, without its flag */
    CHECK(ring_read(&r.rv, pos, pos + 96, &ev, NULL, &size) == RING_READY);
    CHECK_EQ_U64(ev.func, 3);
    /* the writer has gone more than a turn past it meanwhile: its data may be another's */
    set_head(&r, pos + RING_SIZE + 32);
    CHECK(read_at(&r, pos, pos + 96, &ev, &size) == RING_OVERWRITTEN);
    ring_fini(&r);
}

static void expect_corrupt(struct test_ring *r, uint64_t pos, uint64_t head, uint64_t len)
{
    uint8_t *at = put_event(r, pos, 3 | INJECT_EVENT_DATA, ring_stamp(pos));
    memcpy(at + EV_DATA_LEN, &len, 8);
    struct inject_event ev;
    size_t size = 0;
    CHECK(read_at(r, pos, head, &ev, &size) == RING_CORRUPT);
    CHECK_EQ_U64(size, EVENT_SIZE);
}

static void test_bad_lengths(void)
{
    struct test_ring r;
    ring_init(&r);
    expect_corrupt(&r, 0, 256, 40);                           /* not a whole number of events */
    expect_corrupt(&r, 0, 256, 256);                          /* past what was reserved */
    expect_corrupt(&r, 0, 1ull << 20, INJECT_RECORD_MAX);     /* more than a record holds */
    expect_corrupt(&r, 0, 256, UINT64_MAX - 31);              /* wraps */
    expect_corrupt(&r, UINT64_MAX - 63, UINT64_MAX - 31, 64); /* pos + len wraps */
    ring_fini(&r);
}

static void test_span_and_writer(void)
{
    CHECK(ring_span_ok(0, 0, RING_SIZE));
    CHECK(ring_span_ok(64, 64 + RING_SIZE, RING_SIZE));
    CHECK(!ring_span_ok(64, 32, RING_SIZE));
    CHECK(!ring_span_ok(0, RING_SIZE + 32, RING_SIZE));
    CHECK(!ring_span_ok(0, 40, RING_SIZE));
    CHECK(!ring_span_ok(UINT64_MAX - 31, 32, RING_SIZE));

    struct test_ring r;
    ring_init(&r);
    struct inject_event in = {.tsc = 77, .slot = 0x7000, .ret = 0x401234, .func = 4}, ev;
    size_t size, n = 0;
    while (ring_append(&r.rv, &in))
        n++;
    CHECK_EQ_U64(n, TURN); /* head - tail up to the limit, then one more */
    CHECK(ring_is_full(&r.rv));
    for (uint64_t pos = 0; pos < n * EVENT_SIZE; pos += EVENT_SIZE) {
        CHECK(read_at(&r, pos, n * EVENT_SIZE, &ev, &size) == RING_READY);
        CHECK(ev.tsc == 77 && ev.slot == 0x7000 && ev.ret == 0x401234 && ev.func == 4);
    }
    memcpy(r.rv.ctl + CTL_TAIL, &(uint64_t){EVENT_SIZE}, 8);
    CHECK(!ring_is_full(&r.rv));
    CHECK(ring_append(&r.rv, &in));
    ring_fini(&r);
}

int main(void)
{
    test_committed_and_pending();
    test_overwritten_and_wrap();
    test_data();
    test_bad_lengths();
    test_span_and_writer();
    return unit_finish("test_ring_reader");
}
