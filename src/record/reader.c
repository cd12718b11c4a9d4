#include "record/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_BUFFER (1 << 20)

int rec_reader_open(struct rec_reader *r, const char *path, char *why, size_t whylen)
{
    memset(r, 0, sizeof(*r));
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        return -1;
    }
    ssize_t n = pread(r->fd, &r->header, sizeof(r->header), 0);
    if (n != (ssize_t)sizeof(r->header) || memcmp(r->header.magic, REC_MAGIC, 8) != 0) {
        snprintf(why, whylen, "not a calltrace record (bad header)");
        goto fail;
    }
    if (r->header.version != REC_VERSION) {
        snprintf(why, whylen, "record version %u, this calltrace reads version %u",
                 r->header.version, REC_VERSION);
        goto fail;
    }
    r->buf = malloc(READ_BUFFER);
    if (!r->buf) {
        snprintf(why, whylen, "out of memory");
        goto fail;
    }
    r->cap = READ_BUFFER;
    r->offset = sizeof(r->header);
    r->last_anchor = r->header.start;
    if (lseek(r->fd, (off_t)sizeof(r->header), SEEK_SET) < 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        goto fail;
    }
    return 0;
fail:
    close(r->fd);
    free(r->buf);
    r->buf = NULL;
    r->fd = -1;
    return -1;
}

static int refill(struct rec_reader *r)
{
    memmove(r->buf, r->buf + r->pos, r->len - r->pos);
    r->offset += r->pos;
    r->len -= r->pos;
    r->pos = 0;
    while (r->len < r->cap && !r->eof) {
        ssize_t n = read(r->fd, r->buf + r->len, r->cap - r->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            r->eof = true;
            break;
        }
        r->len += (size_t)n;
    }
    return 0;
}

static size_t min_size(uint8_t type)
{
    switch (type) {
    case REC_FUNC:
        return sizeof(struct rec_func);
    case REC_IMAGE:
        return sizeof(struct rec_image);
    case REC_PROCESS:
        return sizeof(struct rec_process);
    case REC_THREAD:
        return sizeof(struct rec_thread);
    case REC_ENTER:
    case REC_EXIT:
        return sizeof(struct rec_call);
    case REC_THREAD_END:
    case REC_PROCESS_END:
        return sizeof(struct rec_end);
    case REC_CLOCK:
        return sizeof(struct rec_clock);
    default:
        return sizeof(struct rec_hdr);
    }
}

static bool name_fits(const struct rec_hdr *h)
{
    uint32_t len;
    size_t fixed = h->type == REC_FUNC    ? sizeof(struct rec_func)
                   : h->type == REC_IMAGE ? sizeof(struct rec_image)
                                          : sizeof(struct rec_process);
    rec_name(h, &len);
    return len <= REC_MAX_NAME && fixed + len <= h->size;
}

const struct rec_hdr *rec_reader_next(struct rec_reader *r)
{
    if (r->corrupt)
        return NULL;
    if (!r->eof && r->len - r->pos < 65536)
        refill(r);
    if (r->len == r->pos)
        return NULL;
    if (r->len - r->pos < sizeof(struct rec_hdr)) {
        r->truncated = true;
        return NULL;
    }
    const struct rec_hdr *h = (const struct rec_hdr *)(r->buf + r->pos);
    if (h->size < min_size(h->type) || h->size % 8) {
        r->corrupt = true;
        return NULL;
    }
    if (r->len - r->pos < h->size) {
        r->truncated = true;
        return NULL;
    }
    if ((h->type == REC_FUNC || h->type == REC_PROCESS || h->type == REC_IMAGE) && !name_fits(h)) {
        r->corrupt = true;
        return NULL;
    }
    if (h->type == REC_CLOCK)
        r->last_anchor = ((const struct rec_clock *)h)->anchor;
    r->pos += h->size;
    return h;
}

const char *rec_name(const struct rec_hdr *h, uint32_t *len)
{
    if (h->type == REC_FUNC) {
        const struct rec_func *f = (const struct rec_func *)h;
        *len = f->name_len;
        return (const char *)(f + 1);
    }
    if (h->type == REC_IMAGE) {
        const struct rec_image *i = (const struct rec_image *)h;
        *len = i->name_len;
        return (const char *)(i + 1);
    }
    const struct rec_process *p = (const struct rec_process *)h;
    *len = p->name_len;
    return (const char *)(p + 1);
}

void rec_reader_close(struct rec_reader *r)
{
    if (r->fd >= 0)
        close(r->fd);
    free(r->buf);
    r->buf = NULL;
    r->fd = -1;
}
