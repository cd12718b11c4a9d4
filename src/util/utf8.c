#include "util/utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t utf8_valid_len(const unsigned char *s, size_t avail)
{
    unsigned char c = s[0];
    size_t need;
    uint32_t min, cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        need = 2, min = 0x80, cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        need = 3, min = 0x800, cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        need = 4, min = 0x10000, cp = c & 0x07;
    } else {
        return 0;
    }
    if (avail < need)
        return 0;
    for (size_t i = 1; i < need; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return need;
}

bool utf8_is_control(const unsigned char *s, size_t n)
{
    if (n == 2)
        return (s[0] == 0xc2 && s[1] < 0xa0) || (s[0] == 0xd8 && s[1] == 0x9c);
    if (n != 3 || s[0] != 0xe2)
        return false;
    uint32_t cp = 0x2000 | ((uint32_t)(s[1] & 0x3f) << 6) | (s[2] & 0x3f);
    return cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

char *utf8_valid_copy(const char *bytes, size_t len, size_t *outlen)
{
    const unsigned char *p = (const unsigned char *)bytes;
    char *copy = malloc(len * 3 + 1); /* each invalid byte may become 3 */
    if (!copy)
        return NULL;
    size_t out = 0;
    for (size_t i = 0; i < len;) {
        size_t n = utf8_valid_len(p + i, len - i);
        if (n) {
            memcpy(copy + out, bytes + i, n);
            out += n, i += n;
        } else {
            memcpy(copy + out, "\xef\xbf\xbd", 3);
            out += 3, i++;
        }
    }
    copy[out] = '\0';
    if (outlen)
        *outlen = out;
    return copy;
}
