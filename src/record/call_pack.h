/* REC_CALLS: consecutive entries and exits of one thread, packed. They are nearly all of a
 * record, and writing them costs the run more than anything else the recorder does (the kernel
 * copies every byte into the page cache, on the traced program's CPU when calltrace shares it):
 * packed, an event takes 2-4 bytes instead of a 24-byte struct rec_call.
 *
 *   struct rec_calls {hdr, pid, count, ticks}   then count events, each:
 *     tag    varint  func << 2 | kind   (kind 0: REC_ENTER, 1: REC_EXIT, 2: REC_EXIT + flags)
 *     flags  byte    only for kind 2
 *     delta  varint  zigzag(ticks - the previous event's ticks; the first: the header's)
 *   zero bytes pad the record to a multiple of 8.
 *
 * With --callsites a REC_CALLSITES record follows (struct rec_callsites {hdr, pid, count}), with
 * one varint per entry: zigzag(its return address - the one before; the first: from 0).
 *
 * Varints are little-endian base 128 (7 bits a byte, the top bit set on all but the last).
 * Pure functions, unit-tested (tests/unit/test_call_pack.c) and fuzzed through the reader. */
#ifndef CALLTRACE_RECORD_CALL_PACK_H
#define CALLTRACE_RECORD_CALL_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/format.h"
#include "util/protobuf.h" /* pb_put_varint: the same LEB128 varints */

/* The most bytes one event packs into: a 34-bit tag (5), flags (1), a 64-bit delta (10). */
#define CALL_PACK_EVENT_MAX 16

/* Packs one event (type REC_ENTER or REC_EXIT) at out; returns its length. */
static inline size_t call_pack_event(uint8_t *out, uint8_t type, unsigned flags, uint32_t func,
                                     uint64_t ticks, uint64_t prev_ticks)
{
    unsigned kind = type == REC_ENTER ? 0 : flags ? 2 : 1;
    size_t n = pb_put_varint(out, (uint64_t)func << 2 | kind);
    if (kind == 2)
        out[n++] = (uint8_t)flags;
    int64_t delta = (int64_t)(ticks - prev_ticks);
    return n + pb_put_varint(out + n, ((uint64_t)delta << 1) ^ (uint64_t)(delta >> 63));
}

/* The most bytes one return address packs into: a 64-bit delta. */
#define CALL_PACK_SITE_MAX 10

/* Packs the return address ret_addr of an entry after prev, the one before (REC_CALLSITES);
 * returns its length. */
static inline size_t call_pack_site(uint8_t *out, uint64_t ret_addr, uint64_t prev)
{
    int64_t delta = (int64_t)(ret_addr - prev);
    return pb_put_varint(out, ((uint64_t)delta << 1) ^ (uint64_t)(delta >> 63));
}

/* One return address unpacked from in[0..len) into *addr (from *addr, the one before). Returns
 * the bytes it took, or 0 when cut short or too long. */
size_t call_unpack_site(const uint8_t *in, size_t len, uint64_t *addr);

/* One event unpacked from in[0..len) into *call (its type, flags and func) and *ticks (from
 * *ticks, the previous event's). Returns the bytes it took, or 0 when they are not a packed
 * event (cut short, an unknown kind, a varint too long). */
size_t call_unpack_event(const uint8_t *in, size_t len, struct rec_call *call, uint64_t *ticks);

#endif
