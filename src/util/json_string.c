#include "util/json_string.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

struct sink {
    char *dst;
    size_t cap;
    size_t len;
};

static void sink_put(struct sink *s, const char *p, size_t n)
{
    if (s->len < s->cap) {
        size_t room = s->cap - s->len;
        memcpy(s->dst + s->len, p, n < room ? n : room);
    }
    s->len += n;
}

/* DEL, or a valid UTF-8 character that a terminal acts on (utf8_is_control), as \uXXXX: the same
 * string to a JSON reader, nothing to `cat trace.json`. */
static void put_control(struct sink *s, const unsigned char *p, size_t n)
{
    static const unsigned char lead_bits[] = {0, 0x7f, 0x1f, 0x0f};
    uint32_t cp = p[0] & lead_bits[n];
    for (size_t i = 1; i < n; i++)
        cp = cp << 6 | (p[i] & 0x3f);
    char esc[8];
    sink_put(s, esc, (size_t)snprintf(esc, sizeof(esc), "\\u%04x", (unsigned)cp));
}

static void escape_into(struct sink *s, const char *bytes, size_t len)
{
    const unsigned char *p = (const unsigned char *)bytes;
    size_t i = 0;
    sink_put(s, "\"", 1);
    while (i < len) {
        size_t run = i;
        while (run < len && p[run] >= 0x20 && p[run] < 0x7f && p[run] != '"' && p[run] != '\\')
            run++;
        if (run > i) {
            sink_put(s, bytes + i, run - i);
            i = run;
            continue;
        }
        unsigned char c = p[i];
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            sink_put(s, esc, 2);
            i++;
        } else if (c == '\n') {
            sink_put(s, "\\n", 2), i++;
        } else if (c == '\t') {
            sink_put(s, "\\t", 2), i++;
        } else if (c == '\r') {
            sink_put(s, "\\r", 2), i++;
        } else if (c <= 0x7f) { /* C0 and DEL */
            put_control(s, p + i, 1);
            i++;
        } else {
            size_t n = utf8_valid_len(p + i, len - i);
            if (n && utf8_is_control(p + i, n)) {
                put_control(s, p + i, n);
                i += n;
            } else if (n) {
                sink_put(s, bytes + i, n);
                i += n;
            } else {
                sink_put(s, "\xef\xbf\xbd", 3);
                i++;
            }
        }
    }
    sink_put(s, "\"", 1);
}

size_t json_escape(char *dst, size_t cap, const char *bytes, size_t len)
{
    struct sink s = {dst, cap, 0};
    escape_into(&s, bytes, len);
    if (cap)
        dst[s.len < cap ? s.len : cap - 1] = '\0';
    return s.len;
}

void json_put_string(struct outbuf *out, const char *bytes, size_t len)
{
    char small[512];
    size_t need = json_escape(small, sizeof(small), bytes, len);
    if (need < sizeof(small)) {
        outbuf_write(out, small, need);
        return;
    }
    char *big = malloc(need + 1);
    if (!big) {
        out->error = ENOMEM;
        return;
    }
    json_escape(big, need + 1, bytes, len);
    outbuf_write(out, big, need);
    free(big);
}

char *json_utf8_copy(const char *bytes, size_t len)
{
    return utf8_valid_copy(bytes, len, NULL);
}

char *json_text_safe(const char *text)
{
    size_t len = strlen(text);
    struct sink s = {NULL, 0, 0};
    for (int pass = 0; pass < 2; pass++) { /* measure, then write */
        const unsigned char *p = (const unsigned char *)text;
        for (size_t i = 0; i < len;) {
            size_t n = utf8_valid_len(p + i, len - i);
            bool layout = p[i] == '\n' || p[i] == '\t';
            if ((p[i] < 0x20 && !layout) || p[i] == 0x7f || (n && utf8_is_control(p + i, n))) {
                put_control(&s, p + i, n);
            } else if (n) {
                sink_put(&s, text + i, n);
            } else {
                sink_put(&s, "\xef\xbf\xbd", 3);
                n = 1;
            }
            i += n;
        }
        if (pass == 0) {
            if (!(s.dst = malloc(s.len + 1)))
                return NULL;
            s.cap = s.len + 1;
            s.len = 0;
        }
    }
    s.dst[s.len] = '\0';
    return s.dst;
}
