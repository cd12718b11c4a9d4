#include "util/outbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

int outbuf_open(struct outbuf *out, const char *path, size_t cap)
{
    memset(out, 0, sizeof(*out));
    out->data = malloc(cap);
    if (!out->data)
        return -ENOMEM;
    out->cap = cap;
    out->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (out->fd < 0) {
        int e = errno;
        free(out->data);
        out->data = NULL;
        return -e;
    }
    return 0;
}

/* Level 1: JSON traces still shrink about tenfold, and compressing must not take much longer
 * than writing the plain file would. */
#define GZIP_LEVEL 1
#define GZIP_WINDOW (15 + 16) /* 15-bit window, +16 asks zlib for a gzip header and trailer */
#define GZIP_CHUNK (256 * 1024)

int outbuf_open_gzip(struct outbuf *out, const char *path, size_t cap)
{
    int rc = outbuf_open(out, path, cap);
    if (rc < 0)
        return rc;
    out->gzip = calloc(1, sizeof(*out->gzip));
    out->zdata = malloc(GZIP_CHUNK);
    if (!out->gzip || !out->zdata ||
        deflateInit2(out->gzip, GZIP_LEVEL, Z_DEFLATED, GZIP_WINDOW, 8, Z_DEFAULT_STRATEGY) !=
            Z_OK) {
        free(out->gzip);
        out->gzip = NULL; /* nothing to end in outbuf_close */
        out->error = ENOMEM;
        outbuf_close(out);
        unlink(path);
        return -ENOMEM;
    }
    return 0;
}

static void write_all(struct outbuf *out, const char *data, size_t len)
{
    size_t off = 0;
    while (off < len && !out->error) {
        ssize_t n = write(out->fd, data + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            out->error = n < 0 ? errno : ENOSPC;
            break;
        }
        off += (size_t)n;
        out->written += (uint64_t)n;
    }
}

/* Feeds the buffer to deflate and writes what comes out; Z_FINISH also ends the stream. */
static void deflate_out(struct outbuf *out, int flush)
{
    z_stream *z = out->gzip;
    z->next_in = (Bytef *)out->data;
    z->avail_in = (uInt)out->len;
    do {
        z->next_out = (Bytef *)out->zdata;
        z->avail_out = GZIP_CHUNK;
        if (deflate(z, flush) == Z_STREAM_ERROR) {
            out->error = EIO;
            return;
        }
        write_all(out, out->zdata, GZIP_CHUNK - z->avail_out);
    } while (z->avail_out == 0 && !out->error);
}

int outbuf_flush(struct outbuf *out)
{
    if (out->gzip && !out->error)
        deflate_out(out, Z_NO_FLUSH);
    else
        write_all(out, out->data, out->len);
    out->len = 0;
    return out->error ? -out->error : 0;
}

void outbuf_write(struct outbuf *out, const void *data, size_t len)
{
    if (out->error)
        return;
    if (out->len + len > out->cap) {
        outbuf_flush(out);
        if (len > out->cap) {
            size_t off = 0;
            while (off < len && !out->error) {
                size_t chunk = len - off < out->cap ? len - off : out->cap;
                memcpy(out->data, (const char *)data + off, chunk);
                out->len = chunk;
                outbuf_flush(out);
                off += chunk;
            }
            return;
        }
    }
    memcpy(out->data + out->len, data, len);
    out->len += len;
}

void outbuf_puts(struct outbuf *out, const char *s)
{
    outbuf_write(out, s, strlen(s));
}

void outbuf_printf(struct outbuf *out, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof(small)) {
        outbuf_write(out, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        out->error = ENOMEM;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    outbuf_write(out, big, (size_t)n);
    free(big);
}

void outbuf_put_u64(struct outbuf *out, uint64_t v)
{
    char digits[24];
    int i = sizeof(digits);
    do {
        digits[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    outbuf_write(out, digits + i, sizeof(digits) - (size_t)i);
}

void outbuf_put_usec(struct outbuf *out, int64_t ns)
{
    /* The magnitude in unsigned arithmetic: -INT64_MIN does not fit an int64. */
    uint64_t mag = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
    if (ns < 0)
        outbuf_write(out, "-", 1);
    outbuf_put_u64(out, mag / 1000);
    char frac[4] = {'.', (char)('0' + mag / 100 % 10), (char)('0' + mag / 10 % 10),
                    (char)('0' + mag % 10)};
    outbuf_write(out, frac, sizeof(frac));
}

int outbuf_close(struct outbuf *out)
{
    if (out->gzip) {
        if (!out->error)
            deflate_out(out, Z_FINISH);
        out->len = 0;
        deflateEnd(out->gzip);
        free(out->gzip);
        out->gzip = NULL;
    }
    free(out->zdata);
    out->zdata = NULL;
    outbuf_flush(out);
    if (!out->error && fsync(out->fd) < 0 && errno != EINVAL)
        out->error = errno;
    if (close(out->fd) < 0 && !out->error)
        out->error = errno;
    out->fd = -1;
    free(out->data);
    out->data = NULL;
    return out->error ? -out->error : 0;
}
