#include "record/call_pack.h"

/* A varint of at most max_bits bits from in[0..len); 0 when cut short or too long. */
static size_t unpack_varint(const uint8_t *in, size_t len, unsigned max_bits, uint64_t *v)
{
    uint64_t x = 0;
    for (size_t i = 0; i < len && i * 7 < max_bits; i++) {
        x |= (uint64_t)(in[i] & 0x7f) << (i * 7);
        if (!(in[i] & 0x80)) {
            if (max_bits < 64 && x >> max_bits)
                return 0;
            *v = x;
            return i + 1;
        }
    }
    return 0;
}

static uint64_t unzigzag_add(uint64_t base, uint64_t zigzag)
{
    int64_t delta = (int64_t)(zigzag >> 1) ^ -(int64_t)(zigzag & 1);
    return base + (uint64_t)delta;
}

size_t call_unpack_site(const uint8_t *in, size_t len, uint64_t *addr)
{
    uint64_t zigzag;
    size_t n = unpack_varint(in, len, 64, &zigzag);
    if (n)
        *addr = unzigzag_add(*addr, zigzag);
    return n;
}

size_t call_unpack_event(const uint8_t *in, size_t len, struct rec_call *call, uint64_t *ticks)
{
    uint64_t tag, zigzag;
    size_t n = unpack_varint(in, len, 34, &tag);
    if (!n || (tag & 3) == 3)
        return 0;
    unsigned flags = 0;
    if ((tag & 3) == 2) {
        if (n == len || in[n] == 0)
            return 0;
        flags = in[n++];
    }
    size_t d = unpack_varint(in + n, len - n, 64, &zigzag);
    if (!d)
        return 0;
    *ticks = unzigzag_add(*ticks, zigzag);
    call->hdr.type = (tag & 3) == 0 ? REC_ENTER : REC_EXIT;
    call->hdr.flags = (uint8_t)flags;
    call->func = (uint32_t)(tag >> 2);
    call->ticks = *ticks;
    return n + d;
}
