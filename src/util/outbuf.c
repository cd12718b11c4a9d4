#include "util/outbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

int outbuf_open(struct outbuf *out, int dir, const char *name, mode_t mode, size_t cap)
{
    memset(out, 0, sizeof(*out));
    out->data = malloc(cap);
    if (!out->data)
        return -ENOMEM;
    out->cap = cap;
    out->fd = openat(dir, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
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

int outbuf_open_gzip(struct outbuf *out, int dir, const char *name, mode_t mode, size_t cap)
{
    int rc = outbuf_open(out, dir, name, mode, cap);
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
        unlinkat(dir, name, 0);
        return -ENOMEM;
    }
    return 0;
}

/* outbuf_close ends with fsync, which would wait for the whole file to reach the disk (half
 * the time of writing a large trace): writeback is started as the file grows instead, so that
 * it overlaps with making the rest, and fsync waits for the last part only.
 *
 * What reached the disk then leaves the page cache: a trace is written once and read later, if
 * at all, and gigabytes of it should not push out what the machine had cached. The pages freed
 * are the next ones a write takes, while they are still warm: on these VMs a page the kernel
 * had not used for a while costs ~10 us at its first touch (the host hands it back), which
 * made writing a new file 0.25 GB/s rather than 2.5 GB/s. Nothing waits for the disk: pages
 * still being written are left for the next step to drop (the recorder writes while the
 * program runs, and a slow disk must not stall it). */
#define WRITEBACK_STEP (8u << 20)

static void start_writeback(struct outbuf *out)
{
    if (out->written - out->flushed < WRITEBACK_STEP)
        return;
    /* not every file system or file supports these: fsync does the work then */
    if (out->dropped < out->flushed)
        (void)posix_fadvise(out->fd, (off_t)out->dropped, (off_t)(out->flushed - out->dropped),
                            POSIX_FADV_DONTNEED);
    out->dropped = out->flushed > WRITEBACK_STEP ? out->flushed - WRITEBACK_STEP : 0;
    (void)sync_file_range(out->fd, (off_t)out->flushed, (off_t)(out->written - out->flushed),
                          SYNC_FILE_RANGE_WRITE);
    out->flushed = out->written;
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
    start_writeback(out);
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

void outbuf_write_slow(struct outbuf *out, const void *data, size_t len)
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

/* Numbers are most of a trace's bytes: two digits at a time, written in place. */
static const char digit_pairs[] = "00010203040506070809101112131415161718192021222324252627282930"
                                  "31323334353637383940414243444546474849505152535455565758596061"
                                  "62636465666768697071727374757677787980818283848586878889909192"
                                  "93949596979899";

/* Writes v's digits ending at end; returns where they start. */
static char *digits_before(char *end, uint64_t v)
{
    while (v >= 100) {
        end -= 2;
        memcpy(end, digit_pairs + v % 100 * 2, 2);
        v /= 100;
    }
    if (v >= 10) {
        end -= 2;
        memcpy(end, digit_pairs + v * 2, 2);
    } else {
        *--end = (char)('0' + v);
    }
    return end;
}

void outbuf_put_u64(struct outbuf *out, uint64_t v)
{
    char digits[24];
    char *start = digits_before(digits + sizeof(digits), v);
    outbuf_write(out, start, (size_t)(digits + sizeof(digits) - start));
}

void outbuf_put_usec(struct outbuf *out, int64_t ns)
{
    /* The magnitude in unsigned arithmetic: -INT64_MIN does not fit an int64. */
    uint64_t mag = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
    char text[32];
    char *end = text + sizeof(text);
    unsigned frac = (unsigned)(mag % 1000);
    end -= 4;
    end[0] = '.';
    end[1] = (char)('0' + frac / 100);
    memcpy(end + 2, digit_pairs + frac % 100 * 2, 2);
    char *start = digits_before(end, mag / 1000);
    if (ns < 0)
        *--start = '-';
    outbuf_write(out, start, (size_t)(text + sizeof(text) - start));
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
