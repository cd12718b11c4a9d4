#include "util/json_string.h"

#include <errno.h>
#include <stdint.h>
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

static void escape_into(struct sink *s, const char *bytes, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)bytes;
    size_t i = 0;
    sink_put(s, "\"", 1);
    while (i < len) {
        size_t run = i;
        while (run < len && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' && p[run] != '\\')
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
        } else if (c < 0x20) {
            char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            sink_put(s, esc, 6);
            i++;
        } else {
            size_t n = utf8_valid_len(p + i, len - i);
            if (n) {
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
