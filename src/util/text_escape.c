#include "util/text_escape.h"

#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

/* 0x5c, the backslash, is left out: a name doubles it, a value keeps it. */
const bool text_plain_byte[256] = {[0x20 ... 0x5b] = true, [0x5d ... 0x7e] = true};

/* Where escaped text goes: a FILE, or a buffer that counts what does not fit. */
struct sink {
    FILE *file;
    char *dst;
    size_t cap;
    size_t len;
};

static void sink_put(struct sink *s, const void *p, size_t n)
{
    if (s->file) {
        fwrite(p, 1, n, s->file);
    } else if (s->len < s->cap) {
        size_t room = s->cap - s->len;
        memcpy(s->dst + s->len, p, n < room ? n : room);
    }
    s->len += n;
}

/* The unit at p: a run of plain bytes, or one character, or one byte; *as_is says whether it is
 * shown as it is or byte by byte escaped. */
static size_t next_unit(const unsigned char *p, size_t avail, enum text_kind kind, bool *as_is)
{
    size_t n = 0;
    while (n < avail && text_plain_byte[p[n]])
        n++;
    if (n) {
        *as_is = true;
        return n;
    }
    if (p[0] < 0x80) { /* a C0 control, DEL or the backslash */
        *as_is = p[0] == '\\' && kind == TEXT_VALUE;
        return 1;
    }
    n = utf8_valid_len(p, avail);
    *as_is = n && !utf8_is_control(p, n);
    return n ? n : 1;
}

static void escape_into(struct sink *s, const unsigned char *p, size_t len, enum text_kind kind)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < len;) {
        bool as_is;
        size_t n = next_unit(p + i, len - i, kind, &as_is);
        if (as_is) {
            sink_put(s, p + i, n);
        } else {
            for (size_t k = i; k < i + n; k++) {
                char esc[4] = {'\\', 'x', hex[p[k] >> 4], hex[p[k] & 15]};
                if (p[k] == '\\')
                    sink_put(s, "\\\\", 2);
                else
                    sink_put(s, esc, 4);
            }
        }
        i += n;
    }
}

size_t text_escape(char *dst, size_t cap, const char *bytes, size_t len, enum text_kind kind)
{
    struct sink s = {.dst = dst, .cap = cap};
    escape_into(&s, (const unsigned char *)bytes, len, kind);
    if (cap)
        dst[s.len < cap ? s.len : cap - 1] = '\0';
    return s.len;
}

char *text_escape_dup(const char *s, enum text_kind kind)
{
    size_t len = strlen(s);
    size_t need = text_escape(NULL, 0, s, len, kind);
    char *copy = malloc(need + 1);
    if (copy)
        text_escape(copy, need + 1, s, len, kind);
    return copy;
}

void fputs_escaped(const char *s, FILE *out, enum text_kind kind)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = 0;
    while (text_plain_byte[p[n]]) /* the NUL is not plain: it ends the scan */
        n++;
    if (!p[n]) {
        fwrite(s, 1, n, out);
        return;
    }
    struct sink k = {.file = out};
    escape_into(&k, p, n + strlen(s + n), kind);
}
