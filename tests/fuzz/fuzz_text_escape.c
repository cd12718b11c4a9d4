/* Fuzz target: the escaping of names for text output (util/text_escape.c) and of cJSON's text
 * (json_text_safe), on arbitrary bytes, the way a traced program's symbols and DWARF can hold
 * them. The escaped text must be valid UTF-8 without a control character (C0, DEL, C1) or a
 * bidirectional formatting character, decode back to the input (TEXT_NAME), and a short buffer
 * must get a prefix of it (snprintf contract). */
#include <string.h>

#include "fuzz.h"
#include "util/json_string.h"
#include "util/text_escape.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The code point of the valid sequence s[0..n). */
static uint32_t code_point(const unsigned char *s, size_t n)
{
    uint32_t cp = n == 1 ? s[0] : s[0] & (0x7f >> n);
    for (size_t i = 1; i < n; i++)
        cp = cp << 6 | (s[i] & 0x3f);
    return cp;
}

/* Written apart from src/util so it can check it. */
static bool terminal_safe(const char *text, size_t len, bool tabs_and_newlines)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        size_t n = fuzz_utf8_len(s + i, len - i);
        if (!n)
            return false;
        uint32_t cp = code_point(s + i, n);
        bool layout = tabs_and_newlines && (cp == '\n' || cp == '\t');
        if ((cp < 0x20 && !layout) || (cp >= 0x7f && cp <= 0x9f) || cp == 0x61c || cp == 0x200e ||
            cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
            return false;
        i += n;
    }
    return true;
}

/* Inverse of TEXT_NAME: \\ and \xNN; the length, or -1 for text it cannot make. */
static long unescape(const char *text, uint8_t *out)
{
    long n = 0;
    for (const char *p = text; *p;) {
        if (*p != '\\') {
            out[n++] = (uint8_t)*p++;
        } else if (p[1] == '\\') {
            out[n++] = '\\', p += 2;
        } else if (p[1] == 'x' && p[2] && p[3]) {
            char hex[3] = {p[2], p[3], 0};
            out[n++] = (uint8_t)strtoul(hex, NULL, 16), p += 4;
        } else {
            return -1;
        }
    }
    return n;
}

static void check_kind(const uint8_t *data, size_t size, enum text_kind kind)
{
    const char *in = (const char *)data;
    size_t need = text_escape(NULL, 0, in, size, kind);
    FUZZ_ASSERT(need <= 4 * size);
    char *full = malloc(need + 1);
    FUZZ_ASSERT(full);
    FUZZ_ASSERT(text_escape(full, need + 1, in, size, kind) == need && strlen(full) == need);
    FUZZ_ASSERT(terminal_safe(full, need, false));
    if (kind == TEXT_NAME) {
        uint8_t *back = malloc(size + 1);
        FUZZ_ASSERT(back);
        FUZZ_ASSERT(unescape(full, back) == (long)size && memcmp(back, data, size) == 0);
        free(back);
    }
    size_t cap = size ? (data[0] % (need + 1)) + 1 : 1;
    char *part = malloc(cap);
    FUZZ_ASSERT(part);
    FUZZ_ASSERT(text_escape(part, cap, in, size, kind) == need);
    FUZZ_ASSERT(strlen(part) == cap - 1 && memcmp(part, full, cap - 1) == 0);
    free(part);
    free(full);
}

/* json_text_safe gets cJSON's text, a C string: tabs and newlines are its layout. */
static void check_json_text(const uint8_t *data, size_t size)
{
    size_t len = strnlen((const char *)data, size);
    char *text = strndup((const char *)data, len);
    FUZZ_ASSERT(text);
    char *safe = json_text_safe(text);
    FUZZ_ASSERT(safe && terminal_safe(safe, strlen(safe), true));
    if (terminal_safe(text, len, true))
        FUZZ_ASSERT(strcmp(safe, text) == 0);
    free(safe);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_kind(data, size, TEXT_NAME);
    check_kind(data, size, TEXT_VALUE);
    check_json_text(data, size);
    return 0;
}
