/* A buffered output file that remembers its first write error, so writers can emit freely and
 * check once (disk full is reported with what was being written, and earlier data stays valid). */
#ifndef CALLTRACE_UTIL_OUTBUF_H
#define CALLTRACE_UTIL_OUTBUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

struct z_stream_s;

struct outbuf {
    int fd;
    struct z_stream_s *gzip; /* NULL for a plain file */
    char *zdata;             /* compressed bytes on their way to fd */
    int error;               /* first errno, 0 while all is well */
    size_t len;
    size_t cap;
    char *data;
    uint64_t written; /* bytes handed to the kernel */
    uint64_t flushed; /* bytes whose writeback to the disk was started */
    uint64_t dropped; /* where the pages to drop from the page cache start */
};

/* Creates the new file name in the directory dir (AT_FDCWD: name is a path), never an
 * existing one and never through a link. Returns 0 or -errno. */
int outbuf_open(struct outbuf *out, int dir, const char *name, mode_t mode, size_t cap);
/* The same, but what is written is stored gzip-compressed (a .gz file that gunzip and Perfetto
 * read). `written` then counts compressed bytes. */
int outbuf_open_gzip(struct outbuf *out, int dir, const char *name, mode_t mode, size_t cap);
int outbuf_flush(struct outbuf *out);
/* What outbuf_write does when the bytes do not fit in the buffer (or after an error). */
void outbuf_write_slow(struct outbuf *out, const void *data, size_t len);
/* Room for len bytes at the end of the buffer, which the caller fills in at once; NULL when they
 * do not fit (write them with outbuf_write) or after an error. */
static inline void *outbuf_room(struct outbuf *out, size_t len)
{
    if (__builtin_expect(out->len + len > out->cap || out->error, 0))
        return NULL;
    void *at = out->data + out->len;
    out->len += len;
    return at;
}

/* Room for up to max bytes at the end of the buffer, flushing it first when needed, to be
 * filled in place and kept with outbuf_commit: a writer of small variable-length items (the
 * protobuf trace's packets) encodes them straight into the buffer. NULL after an error or when
 * max is more than the buffer holds. */
static inline void *outbuf_reserve(struct outbuf *out, size_t max)
{
    if (__builtin_expect(out->len + max > out->cap, 0) && !out->error && max <= out->cap)
        outbuf_flush(out);
    if (__builtin_expect(out->len + max > out->cap || out->error, 0))
        return NULL;
    return out->data + out->len;
}

static inline void outbuf_commit(struct outbuf *out, size_t len)
{
    out->len += len;
}

/* Inline: the recorder writes two small records per traced call, and a call to memcpy with a
 * length known here costs more than the copy. */
static inline void outbuf_write(struct outbuf *out, const void *data, size_t len)
{
    if (__builtin_expect(out->len + len <= out->cap && !out->error, 1)) {
        memcpy(out->data + out->len, data, len);
        out->len += len;
        return;
    }
    outbuf_write_slow(out, data, len);
}

static inline void outbuf_puts(struct outbuf *out, const char *s)
{
    outbuf_write(out, s, strlen(s));
}
void outbuf_printf(struct outbuf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Microseconds with 3 decimals from nanoseconds, without printf's float formatting. */
void outbuf_put_usec(struct outbuf *out, int64_t ns);
void outbuf_put_u64(struct outbuf *out, uint64_t v);
/* Flushes, fsyncs and closes; returns 0 or the first errno seen. */
int outbuf_close(struct outbuf *out);

#endif
