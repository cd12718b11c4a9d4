#include "util/protobuf.h"

#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

void pb_buf_free(struct pb_buf *b)
{
    free(b->data);
    *b = (struct pb_buf){0};
}

/* Room for len more bytes; NULL (and failed set) when memory runs out. */
static uint8_t *pb_room(struct pb_buf *b, size_t len)
{
    if (b->failed)
        return NULL;
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + len)
            cap *= 2;
        uint8_t *data = realloc(b->data, cap);
        if (!data) {
            b->failed = true;
            return NULL;
        }
        b->data = data;
        b->cap = cap;
    }
    return b->data + b->len;
}

void pb_raw(struct pb_buf *b, const void *data, size_t len)
{
    uint8_t *p = pb_room(b, len);
    if (p && len) {
        memcpy(p, data, len);
        b->len += len;
    }
}

void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v)
{
    uint8_t *p = pb_room(b, 2 * PB_VARINT_MAX);
    if (p)
        b->len += pb_put_uint(p, field, v);
}

void pb_int(struct pb_buf *b, uint32_t field, int64_t v)
{
    pb_uint(b, field, (uint64_t)v);
}

void pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len)
{
    uint8_t *p = pb_room(b, 2 * PB_VARINT_MAX + len);
    if (!p)
        return;
    size_t n = pb_put_tag(p, field, PB_LEN);
    n += pb_put_varint(p + n, len);
    if (len) /* memcpy from NULL is undefined even for 0 bytes */
        memcpy(p + n, data, len);
    b->len += n + len;
}

void pb_text(struct pb_buf *b, uint32_t field, const char *bytes, size_t len)
{
    size_t valid_len;
    char *valid = utf8_valid_copy(bytes, len, &valid_len);
    if (!valid) {
        b->failed = true;
        return;
    }
    pb_bytes(b, field, valid, valid_len);
    free(valid);
}

void pb_message(struct pb_buf *b, uint32_t field, const struct pb_buf *msg)
{
    if (msg->failed)
        b->failed = true;
    else
        pb_bytes(b, field, msg->data, msg->len);
}
