/* The inject engine's ring reader: see ring_reader.h. */
#include "tracer/inject/ring_reader.h"

#include <string.h>

static uint64_t load_u64(const uint8_t *at, int order)
{
    return __atomic_load_n((const uint64_t *)at, order);
}

static uint32_t load_u32(const uint8_t *at, int order)
{
    return __atomic_load_n((const uint32_t *)at, order);
}

/* A stamp that is not the one expected at its position: one of a later turn, a whole number of
 * turns ahead, says a writer went over this event; anything else is an event not committed yet,
 * whose words still hold what the ring's last turn left there (an event's, or the values of a
 * record with data that covered them) or 0, and say nothing of this event. (Stale values read
 * as a stamp ahead, or as a length, made such events lost under valgrind.) */
static enum ring_state uncommitted(uint32_t stamp, uint32_t want, size_t size)
{
    uint32_t ahead = stamp - want;
    uint64_t turn = size / EVENT_SIZE;
    return turn && (int32_t)ahead > 0 && ahead % turn == 0 ? RING_OVERWRITTEN : RING_PENDING;
}

/* The data length of a record with data at pos (written right after its reservation, long
 * before its stamp), or 0 with *ok false when it cannot be one: not a whole number of events,
 * more than a record holds, or past what was reserved. */
static uint64_t data_len(const uint8_t *at, uint64_t pos, uint64_t head, bool *ok)
{
    uint64_t len = load_u64(at + EV_DATA_LEN, __ATOMIC_RELAXED);
    *ok = len % EVENT_SIZE == 0 && len <= INJECT_RECORD_MAX - EVENT_SIZE &&
          head - pos >= EVENT_SIZE && len <= head - pos - EVENT_SIZE;
    return *ok ? len : 0;
}

enum ring_state ring_read(const struct ring_view *rv, uint64_t pos, uint64_t head,
                          struct inject_event *ev, uint8_t *data, size_t *size)
{
    const uint8_t *at = rv->ring + (pos & (rv->size - 1));
    uint32_t want = ring_stamp(pos);
    uint32_t stamp = load_u32(at + EV_STAMP, __ATOMIC_ACQUIRE);
    uint32_t func = load_u32(at + EV_FUNC, __ATOMIC_RELAXED);
    bool len_ok = true;
    uint64_t len = func & INJECT_EVENT_DATA ? data_len(at, pos, head, &len_ok) : 0;
    *size = EVENT_SIZE + len;
    if (stamp != want)
        return uncommitted(stamp, want, rv->size);
    if (!len_ok)
        return RING_CORRUPT;
    memcpy(ev, at, sizeof(*ev));
    if (len && data)
        memcpy(data, at + EVENT_SIZE, len);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (load_u32(at + EV_STAMP, __ATOMIC_RELAXED) != want)
        return RING_OVERWRITTEN; /* meanwhile, by a writer a whole turn ahead (a full ring) */
    /* its data may have been: only positions past pos + size reach it */
    uint64_t head_now = load_u64(rv->ctl + CTL_HEAD, __ATOMIC_ACQUIRE);
    if (len && head_now > pos && head_now - pos > rv->size)
        return RING_OVERWRITTEN;
    if (len && !data)
        ev->func &= ~INJECT_EVENT_DATA; /* no room to copy it: the call without its values */
    return RING_READY;
}

bool ring_is_full(const struct ring_view *rv)
{
    uint64_t head = load_u64(rv->ctl + CTL_HEAD, __ATOMIC_ACQUIRE);
    return head - load_u64(rv->ctl + CTL_TAIL, __ATOMIC_ACQUIRE) >
           load_u64(rv->ctl + CTL_LIMIT, __ATOMIC_ACQUIRE);
}

bool ring_append(const struct ring_view *rv, const struct inject_event *ev)
{
    if (ring_is_full(rv))
        return false;
    uint64_t head = load_u64(rv->ctl + CTL_HEAD, __ATOMIC_ACQUIRE);
    uint8_t *at = rv->ring + (head & (rv->size - 1));
    memcpy(at, ev, EV_STAMP);
    __atomic_store_n((uint32_t *)(at + EV_STAMP), ring_stamp(head), __ATOMIC_RELEASE);
    __atomic_store_n((uint64_t *)(rv->ctl + CTL_HEAD), head + EVENT_SIZE, __ATOMIC_RELEASE);
    return true;
}
