#include "record/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/call_pack.h"

#define READ_BUFFER (1 << 20)

int rec_reader_open(struct rec_reader *r, int dir, const char *name, char *why, size_t whylen)
{
    memset(r, 0, sizeof(*r));
    r->fd = openat(dir, name, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        return -1;
    }
    ssize_t n = pread(r->fd, &r->header, sizeof(r->header), 0);
    if (n != (ssize_t)sizeof(r->header) || memcmp(r->header.magic, REC_MAGIC, 8) != 0) {
        snprintf(why, whylen, "not a calltrace record (bad header)");
        goto fail;
    }
    if (r->header.version < REC_VERSION_MIN || r->header.version > REC_VERSION) {
        snprintf(why, whylen, "record version %u, this calltrace reads versions %u to %u",
                 r->header.version, REC_VERSION_MIN, REC_VERSION);
        goto fail;
    }
    r->buf = malloc(READ_BUFFER);
    r->calls.bytes = malloc(REC_MAX_SIZE);
    if (!r->buf || !r->calls.bytes) {
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
    free(r->calls.bytes);
    r->buf = NULL;
    r->calls.bytes = NULL;
    r->fd = -1;
    return -1;
}

static const struct rec_hdr *next_record(struct rec_reader *r);

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
    case REC_CALLS:
        return sizeof(struct rec_calls);
    case REC_CALLSITES:
        return sizeof(struct rec_callsites);
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

/* The return address of the entry being handed out, from the REC_CALLSITES record; damaged
 * addresses are left out (the calls are whole without them). */
static void next_site(struct rec_reader *r)
{
    size_t n = call_unpack_site(r->calls.sites + r->calls.sites_pos,
                                r->calls.sites_len - r->calls.sites_pos, &r->calls.site);
    if (!n) {
        r->calls.sites_left = 0;
        return;
    }
    r->calls.sites_pos += n;
    r->calls.sites_left--;
    if (r->calls.site) {
        r->calls.call.call.hdr.size = sizeof(struct rec_call_from);
        r->calls.call.ret_addr = r->calls.site;
    }
}

/* The next event of the REC_CALLS record being read, or NULL once it is done (or damaged:
 * every event must unpack, and only padding may follow the last). */
static const struct rec_hdr *next_packed(struct rec_reader *r)
{
    if (!r->calls.left) {
        if (r->calls.len - r->calls.pos >= 8)
            r->corrupt = true;
        for (size_t i = r->calls.pos; i < r->calls.len; i++)
            r->corrupt |= r->calls.bytes[i] != 0;
        r->calls.len = r->calls.pos = 0;
        return NULL;
    }
    size_t n = call_unpack_event(r->calls.bytes + r->calls.pos, r->calls.len - r->calls.pos,
                                 &r->calls.call.call, &r->calls.ticks);
    if (!n) {
        r->corrupt = true;
        r->calls.left = 0;
        return NULL;
    }
    r->calls.pos += n;
    r->calls.left--;
    r->calls.call.call.hdr.size = sizeof(struct rec_call);
    r->calls.call.ret_addr = 0;
    if (r->calls.call.call.hdr.type == REC_ENTER && r->calls.sites_left)
        next_site(r);
    return &r->calls.call.call.hdr;
}

/* A REC_CALLS record h: its events are copied out, to be handed out from the next call on. */
static void start_packed(struct rec_reader *r, const struct rec_hdr *h)
{
    const struct rec_calls *c = (const struct rec_calls *)h;
    r->calls.len = h->size - sizeof(*c);
    r->calls.pos = 0;
    memcpy(r->calls.bytes, c + 1, r->calls.len);
    r->calls.left = c->count;
    r->calls.ticks = c->ticks;
    r->calls.call.call = (struct rec_call){{0, 0, sizeof(struct rec_call), h->tid}, 0, c->pid, 0};
    r->calls.sites_left = 0;
}

/* The REC_CALLSITES record of the REC_CALLS record just started (copied out already), when it
 * comes next: taken in. */
static void take_sites(struct rec_reader *r, uint32_t tid)
{
    if (!r->eof && r->len - r->pos < sizeof(struct rec_hdr))
        refill(r);
    const struct rec_hdr *next = (const struct rec_hdr *)(r->buf + r->pos);
    if (r->len - r->pos < sizeof(*next) || next->type != REC_CALLSITES || next->tid != tid)
        return;
    const struct rec_hdr *h = next_record(r);
    if (!h)
        return;
    if (!r->calls.sites && !(r->calls.sites = malloc(REC_MAX_SIZE)))
        return; /* the calls without their addresses */
    const struct rec_callsites *c = (const struct rec_callsites *)h;
    r->calls.sites_len = h->size - sizeof(*c);
    r->calls.sites_pos = 0;
    memcpy(r->calls.sites, c + 1, r->calls.sites_len);
    r->calls.sites_left = c->count;
    r->calls.site = 0;
}

const struct rec_hdr *rec_reader_next(struct rec_reader *r)
{
    for (;;) {
        if (r->corrupt)
            return NULL;
        if (r->calls.len) {
            const struct rec_hdr *h = next_packed(r);
            if (h || r->corrupt)
                return h;
        }
        const struct rec_hdr *h = next_record(r);
        if (!h || h->type != REC_CALLS)
            return h;
        start_packed(r, h);
        if (!r->calls.len && r->calls.left)
            r->corrupt = true;
        take_sites(r, h->tid);
    }
}

/* The next whole record in the file. */
static const struct rec_hdr *next_record(struct rec_reader *r)
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
    free(r->calls.bytes);
    free(r->calls.sites);
    r->buf = NULL;
    r->calls.bytes = NULL;
    r->calls.sites = NULL;
    r->fd = -1;
}
