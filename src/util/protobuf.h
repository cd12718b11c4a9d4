/* Protocol buffers' wire format, the part a writer of a few small messages needs: varints,
 * tags, and length-delimited fields built inside out.
 *
 * Hand-written rather than taken from protobuf-c: the Perfetto writer emits two packets of
 * about a dozen bytes for every traced call, millions a second. A generated encoder fills a
 * struct per message and walks it twice (sizes, then bytes), which costs more than the call
 * itself; here a packet is a few stores into a stack buffer. The rare, larger messages (track
 * descriptors, interned names, argument values) go through struct pb_buf. */
#ifndef CALLTRACE_UTIL_PROTOBUF_H
#define CALLTRACE_UTIL_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pb_wire_type {
    PB_VARINT = 0,
    PB_LEN = 2, /* strings, bytes, nested messages */
};

#define PB_VARINT_MAX 10 /* bytes of the longest varint: 64 bits, 7 a byte */

/* Writes v as a varint at p; returns the bytes written (1 to PB_VARINT_MAX). */
static inline size_t pb_put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

static inline size_t pb_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline size_t pb_put_tag(uint8_t *p, uint32_t field, enum pb_wire_type type)
{
    return pb_put_varint(p, ((uint64_t)field << 3) | type);
}

/* A varint field: tag and value. */
static inline size_t pb_put_uint(uint8_t *p, uint32_t field, uint64_t v)
{
    size_t n = pb_put_tag(p, field, PB_VARINT);
    return n + pb_put_varint(p + n, v);
}

/* A growable message under construction. Allocation failures are remembered (failed) and
 * checked once, when the message is used. */
struct pb_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
    bool failed;
};

void pb_buf_free(struct pb_buf *b);
static inline void pb_buf_clear(struct pb_buf *b)
{
    b->len = 0;
}

/* Bytes already in wire format (fields encoded with the pb_put_* helpers). */
void pb_raw(struct pb_buf *b, const void *data, size_t len);
void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v);
/* int32/int64 fields: negative numbers as the 10-byte two's complement varint. */
void pb_int(struct pb_buf *b, uint32_t field, int64_t v);
void pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len);
/* A string field from bytes that may not be UTF-8 (a traced program's): invalid sequences
 * become U+FFFD, as protobuf's string type requires. */
void pb_text(struct pb_buf *b, uint32_t field, const char *bytes, size_t len);
/* A nested message: msg's bytes as a length-delimited field. */
void pb_message(struct pb_buf *b, uint32_t field, const struct pb_buf *msg);

#endif
