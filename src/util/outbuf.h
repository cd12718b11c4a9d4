/* A buffered output file that remembers its first write error, so writers can emit freely and
 * check once (disk full is reported with what was being written, and earlier data stays valid). */
#ifndef CALLTRACE_UTIL_OUTBUF_H
#define CALLTRACE_UTIL_OUTBUF_H

#include <stddef.h>
#include <stdint.h>

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
};

int outbuf_open(struct outbuf *out, const char *path, size_t cap);
/* The same, but what is written is stored gzip-compressed (a .gz file that gunzip and Perfetto
 * read). `written` then counts compressed bytes. */
int outbuf_open_gzip(struct outbuf *out, const char *path, size_t cap);
void outbuf_write(struct outbuf *out, const void *data, size_t len);
void outbuf_puts(struct outbuf *out, const char *s);
void outbuf_printf(struct outbuf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Microseconds with 3 decimals from nanoseconds, without printf's float formatting. */
void outbuf_put_usec(struct outbuf *out, int64_t ns);
void outbuf_put_u64(struct outbuf *out, uint64_t v);
int outbuf_flush(struct outbuf *out);
/* Flushes, fsyncs and closes; returns 0 or the first errno seen. */
int outbuf_close(struct outbuf *out);

#endif
