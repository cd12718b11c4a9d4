/* The pure reader (and the one C writer) of the inject engine's rings (arch/ring_abi.h): given a
 * thread's control block and ring, as mapped in calltrace, it tells what is at a position. All of
 * that memory is the traced program's to write: nothing read from it is trusted, every length and
 * position is checked before it is used, without overflow, and every read stays inside the ring
 * and its slack. No process, no session: the drain (drain.c) decides what the events mean. */
#ifndef CALLTRACE_TRACER_INJECT_RING_READER_H
#define CALLTRACE_TRACER_INJECT_RING_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/ring_abi.h"

struct ring_view {
    uint8_t *ctl;  /* the control block: CTL_SIZE bytes */
    uint8_t *ring; /* size bytes, then INJECT_RECORD_MAX bytes of slack */
    size_t size;   /* a power of two, at least EVENT_SIZE */
};

enum ring_state {
    RING_READY,       /* committed: the record was copied out */
    RING_PENDING,     /* reserved, not committed yet (its writer interrupted, or gone) */
    RING_OVERWRITTEN, /* written over by a writer a whole turn ahead (a full ring) */
    RING_CORRUPT,     /* committed, but its length makes no sense */
};

/* Can [tail, head) be what is left to read in a ring of size bytes? When not, the program wrote
 * over its indexes and the ring is to be given up. */
static inline bool ring_span_ok(uint64_t tail, uint64_t head, size_t size)
{
    return head >= tail && head - tail <= size && (head - tail) % EVENT_SIZE == 0;
}

/* The record at position pos, pos < head (the head read at the start of the drain): its event
 * into *ev and, when data is not NULL, its data (-A/-R) into data[0..INJECT_RECORD_MAX). *size:
 * its bytes in the ring (EVENT_SIZE when its length cannot be told), the step to the next
 * record, never more than head - pos. */
enum ring_state ring_read(const struct ring_view *rv, uint64_t pos, uint64_t head,
                          struct inject_event *ev, uint8_t *data, size_t *size);

/* The fast path's read (drain.c drain_common): the event at pos when it is committed, without
 * its data; false when it is not committed yet or was written over meanwhile. */
static inline bool ring_take(const uint8_t *ring, uint64_t mask, uint64_t pos,
                             struct inject_event *ev)
{
    const uint8_t *e = ring + (pos & mask);
    const uint32_t *stamp = (const uint32_t *)(e + EV_STAMP), want = ring_stamp(pos);
    if (__atomic_load_n(stamp, __ATOMIC_ACQUIRE) != want)
        return false;
    __builtin_memcpy(ev, e, sizeof(*ev));
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return __atomic_load_n(stamp, __ATOMIC_RELAXED) == want;
}

/* The writer on calltrace's side (tracer/inject/unwind.c): appends ev, as the trampolines would,
 * to the ring of a thread that is stopped (so no trampoline of its own runs meanwhile). False
 * when the ring is full. */
bool ring_is_full(const struct ring_view *rv);
bool ring_append(const struct ring_view *rv, const struct inject_event *ev);

#endif
