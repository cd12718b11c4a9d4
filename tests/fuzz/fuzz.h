/* Shared by the fuzz targets: silencing calltrace's own error lines, and a strict UTF-8 check
 * for what the JSON writers produce. */
#ifndef CALLTRACE_TESTS_FUZZ_H
#define CALLTRACE_TESTS_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Corrupt inputs make the loaders print one "calltrace: ..." line each: at thousands of runs a
 * second that drowns libFuzzer's output. libFuzzer keeps the FILE it captured at start-up and
 * the sanitizers write to fd 2 directly, so only calltrace's messages (through the stderr
 * variable) go to /dev/null. */
static inline void fuzz_silence_stderr(void)
{
    FILE *null = fopen("/dev/null", "w");
    if (null)
        stderr = null;
}

/* The length of the valid UTF-8 sequence at s, 0 if invalid (overlong, surrogate, > U+10FFFF,
 * truncated): written independently of src/util/json_string.c so it can check it. */
static inline size_t fuzz_utf8_len(const unsigned char *s, size_t avail)
{
    if (s[0] < 0x80)
        return 1;
    size_t n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
    if (!n || n > avail || s[0] > 0xf4)
        return 0;
    uint32_t cp = s[0] & (0x7f >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/* Valid UTF-8 without raw control characters (which JSON forbids inside strings, and which
 * calltrace's writers never emit outside them except newlines). */
static inline bool fuzz_json_text_ok(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        if (s[i] < 0x20 && s[i] != '\n')
            return false;
        size_t n = fuzz_utf8_len(s + i, len - i);
        if (!n)
            return false;
        i += n;
    }
    return true;
}

#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stdout, "%s:%d: fuzz assertion failed: %s\n", __FILE__, __LINE__, #cond);      \
            fflush(stdout);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#endif
