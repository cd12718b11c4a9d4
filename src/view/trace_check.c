#include "view/trace_check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define SCAN_CHUNK (1 << 20)
#define MAX_DEPTH 4096
#define KEY_MAX 16

/* State of the scanner between chunks: enough to follow the structure, nothing of the values. */
struct json_scan {
    unsigned depth;
    uint8_t open[MAX_DEPTH]; /* '{' or '[' at each level */
    bool started, ended, in_string, escaped;
    char key[KEY_MAX]; /* a string at depth 1, while it may be a key of the top object */
    size_t keylen;
    bool key_is_events, has_events;
    const char *error;
};

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void scan_string_byte(struct json_scan *s, char c)
{
    if (s->escaped) {
        s->escaped = false;
    } else if (c == '\\') {
        s->escaped = true;
    } else if (c == '"') {
        s->in_string = false;
        s->key_is_events = s->depth == 1 && s->keylen == 11 && !memcmp(s->key, "traceEvents", 11);
        return;
    }
    if (s->depth == 1 && s->keylen < KEY_MAX)
        s->key[s->keylen++] = c;
}

static void scan_open(struct json_scan *s, char c)
{
    if (s->depth == MAX_DEPTH) {
        s->error = "nested too deeply to be a trace";
        return;
    }
    s->open[s->depth++] = (uint8_t)c;
    s->started = true;
}

static void scan_close(struct json_scan *s, char c)
{
    char want = c == '}' ? '{' : '[';
    if (!s->depth || s->open[s->depth - 1] != want) {
        s->error = "not valid JSON (unbalanced brackets)";
        return;
    }
    if (--s->depth == 0)
        s->ended = true;
}

static void scan_byte(struct json_scan *s, char c)
{
    if (s->in_string) {
        scan_string_byte(s, c);
        return;
    }
    if (is_space(c))
        return;
    if (s->ended) {
        s->error = "not a trace (more data after the JSON value)";
        return;
    }
    if (!s->started && c != '{' && c != '[') {
        s->error = "not a JSON trace (it does not start with { or [)";
        return;
    }
    if (c == ':' && s->depth == 1 && s->key_is_events && s->open[0] == '{')
        s->has_events = true;
    s->key_is_events = false;
    if (c == '"') {
        s->in_string = true;
        s->keylen = 0;
    } else if (c == '{' || c == '[') {
        scan_open(s, c);
    } else if (c == '}' || c == ']') {
        scan_close(s, c);
    }
}

static const char *scan_verdict(const struct json_scan *s)
{
    if (s->error)
        return s->error;
    if (!s->started)
        return "empty, not a trace";
    if (!s->ended)
        return "truncated (the JSON ends in the middle)";
    if (s->open[0] == '{' && !s->has_events)
        return "not a trace (a JSON object without \"traceEvents\")";
    return NULL;
}

static int read_magic(int fd, bool *gzip, char *why, size_t whylen)
{
    unsigned char magic[2] = {0, 0};
    ssize_t n = pread(fd, magic, sizeof(magic), 0);
    if (n < 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        return -1;
    }
    *gzip = n == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    return 0;
}

/* gzread reads a plain file as it is: one reader for both forms. zlib reads from the file
 * position of a duplicate of fd (they share it), from the start; the server never depends on
 * that position: it sends with explicit offsets. */
static gzFile open_trace(int fd, char *why, size_t whylen)
{
    int dup_fd = -1;
    gzFile f = NULL;
    if (lseek(fd, 0, SEEK_SET) == 0 && (dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) >= 0)
        f = gzdopen(dup_fd, "rb");
    if (!f) {
        snprintf(why, whylen, "%s", errno ? strerror(errno) : "cannot read");
        if (dup_fd >= 0)
            close(dup_fd);
    }
    return f;
}

/* zlib's messages start with the name it knows the file by, "<fd:N>: ". */
static const char *zlib_reason(const char *msg)
{
    const char *after = msg && !strncmp(msg, "<fd:", 4) ? strstr(msg, ">: ") : NULL;
    return after ? after + 3 : msg;
}

int trace_check(int fd, bool *gzip, char *why, size_t whylen)
{
    if (read_magic(fd, gzip, why, whylen) < 0)
        return -1;
    gzFile f = open_trace(fd, why, whylen);
    if (!f)
        return -1;
    gzbuffer(f, SCAN_CHUNK);
    char *buf = malloc(SCAN_CHUNK);
    struct json_scan *s = calloc(1, sizeof(*s));
    if (!buf || !s) {
        free(buf);
        free(s);
        gzclose(f);
        snprintf(why, whylen, "%s", strerror(ENOMEM));
        return -1;
    }
    int n;
    while (!s->error && (n = gzread(f, buf, SCAN_CHUNK)) > 0)
        for (int i = 0; i < n && !s->error; i++)
            scan_byte(s, buf[i]);
    int zerr = Z_OK, saved_errno = errno;
    const char *zmsg = s->error ? NULL : zlib_reason(gzerror(f, &zerr));
    /* zlib passes through what it cannot take for gzip: with the magic, that is damage. */
    bool direct = *gzip && gzdirect(f);
    if (zerr == Z_OK && direct) {
        zerr = Z_DATA_ERROR;
        zmsg = "not a complete gzip header";
    }
    /* The message lives in f: copy it before closing. */
    if (zerr == Z_BUF_ERROR)
        snprintf(why, whylen, "truncated (the gzip data ends in the middle)");
    else if (zerr == Z_ERRNO)
        snprintf(why, whylen, "%s", strerror(saved_errno));
    else if (zerr != Z_OK)
        snprintf(why, whylen, "damaged gzip data (%s)", zmsg);
    gzclose(f);
    free(buf);
    const char *verdict = scan_verdict(s);
    free(s);
    if (zerr != Z_OK)
        return -1;
    if (verdict) {
        snprintf(why, whylen, "%s", verdict);
        return -1;
    }
    return 0;
}

/* The first or last non-blank byte of a window, or 0. */
static char edge_byte(const char *buf, ssize_t n, bool last)
{
    for (ssize_t i = 0; i < n; i++) {
        char c = buf[last ? n - 1 - i : i];
        if (!is_space(c))
            return c;
    }
    return 0;
}

static int check_plain_edges(int fd, off_t size, char *why, size_t whylen)
{
    char buf[4096];
    ssize_t n = pread(fd, buf, sizeof(buf), 0);
    char first = n > 0 ? edge_byte(buf, n, false) : 0;
    off_t tail = size > (off_t)sizeof(buf) ? size - (off_t)sizeof(buf) : 0;
    n = pread(fd, buf, sizeof(buf), tail);
    char last = n > 0 ? edge_byte(buf, n, true) : 0;
    if (!first) {
        snprintf(why, whylen, "empty, not a trace");
    } else if (first != '{' && first != '[') {
        snprintf(why, whylen, "not a JSON trace (it does not start with { or [)");
    } else if (last != (first == '{' ? '}' : ']')) {
        snprintf(why, whylen, "truncated (the JSON ends in the middle)");
    } else {
        return 0;
    }
    return -1;
}

int trace_check_quick(int fd, bool *gzip, char *why, size_t whylen)
{
    if (read_magic(fd, gzip, why, whylen) < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        return -1;
    }
    if (*gzip && st.st_size < 18) { /* 10 bytes of header and 8 of trailer at least */
        snprintf(why, whylen, "truncated (the gzip data ends in the middle)");
        return -1;
    }
    return *gzip ? 0 : check_plain_edges(fd, st.st_size, why, whylen);
}

/* The first bytes of the trace itself (gunzipped): a JSON trace starts with { or [ after
 * blanks, a Perfetto protobuf trace with the tag of Trace.packet (field 1, length-delimited). */
int trace_sniff(int fd, bool *gzip, bool *protobuf, char *why, size_t whylen)
{
    if (read_magic(fd, gzip, why, whylen) < 0)
        return -1;
    gzFile f = open_trace(fd, why, whylen);
    if (!f)
        return -1;
    unsigned char first = 0;
    int n = gzread(f, &first, 1);
    gzclose(f);
    if (n != 1) {
        snprintf(why, whylen, "empty, not a trace");
        return -1;
    }
    *protobuf = first == PFTRACE_FIRST_BYTE;
    return 0;
}

/* Walks the packets of a protobuf trace: each a Trace.packet tag and a length, until the file
 * ends exactly at a packet's end. */
static const char *walk_packets(gzFile f)
{
    for (;;) {
        int tag = gzgetc(f);
        if (tag < 0)
            return NULL; /* the end, between two packets */
        if (tag != PFTRACE_FIRST_BYTE)
            return "not a Perfetto trace (a packet does not start with its tag)";
        uint64_t len = 0;
        int shift = 0, c;
        do {
            if ((c = gzgetc(f)) < 0)
                return "truncated (the trace ends in the middle of a packet)";
            len |= (uint64_t)(c & 0x7f) << shift;
            shift += 7;
        } while ((c & 0x80) && shift < 64);
        if (c & 0x80)
            return "damaged (a packet length is not a varint)";
        if (len > (1u << 30))
            return "damaged (a packet longer than 1 GB)";
        if (gzseek(f, (z_off_t)len, SEEK_CUR) < 0)
            return "truncated (the trace ends in the middle of a packet)";
        /* gzseek past the end of a plain file succeeds: the next read says so */
        if (len && gzeof(f))
            return "truncated (the trace ends in the middle of a packet)";
    }
}

int trace_check_pftrace(int fd, char *why, size_t whylen)
{
    gzFile f = open_trace(fd, why, whylen);
    if (!f)
        return -1;
    gzbuffer(f, SCAN_CHUNK);
    const char *verdict = walk_packets(f);
    int zerr = Z_OK;
    gzerror(f, &zerr);
    gzclose(f);
    if (!verdict && zerr != Z_OK)
        verdict = zerr == Z_BUF_ERROR ? "truncated (the gzip data ends in the middle)"
                                      : "damaged gzip data";
    if (verdict) {
        snprintf(why, whylen, "%s", verdict);
        return -1;
    }
    return 0;
}
