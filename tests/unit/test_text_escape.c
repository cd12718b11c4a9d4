/* The escaping of names in text output (util/text_escape.c): every byte value, UTF-8 kept or
 * escaped, C1 and bidirectional controls, overlong and broken sequences, long names; the
 * escaped text is valid UTF-8 without a control character and decodes back to the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/text_escape.h"
#include "util/utf8.h"
#include "unit.h"

static void check_kind(const char *in, size_t len, enum text_kind kind, const char *expected)
{
    char out[512];
    size_t n = text_escape(out, sizeof(out), in, len, kind);
    CHECK_EQ_U64(n, strlen(expected));
    CHECK(strcmp(out, expected) == 0);
    if (strcmp(out, expected) != 0)
        fprintf(stderr, "  got \"%s\", expected \"%s\"\n", out, expected);
}

static void check(const char *in, size_t len, const char *expected)
{
    check_kind(in, len, TEXT_NAME, expected);
}

/* Each byte alone: printable ASCII as it is, the backslash doubled, anything else \xNN (a lone
 * byte from 0x80 up is never valid UTF-8). */
static void test_every_byte(void)
{
    for (unsigned b = 0; b < 256; b++) {
        char in[1] = {(char)b}, want[8];
        if (b == '\\')
            strcpy(want, "\\\\");
        else if (b >= 0x20 && b < 0x7f)
            snprintf(want, sizeof(want), "%c", b);
        else
            snprintf(want, sizeof(want), "\\x%02x", b);
        check(in, 1, want);
        if (b != '\\')
            check_kind(in, 1, TEXT_VALUE, want);
    }
    check_kind("\\", 1, TEXT_VALUE, "\\");
}

static void test_controls(void)
{
    check("ctl\x01\x1b[31mred\t", 13, "ctl\\x01\\x1b[31mred\\x09");
    check("\x1b]0;title\x07", 10, "\\x1b]0;title\\x07");
    check("a\nb", 3, "a\\x0ab");
    check("a\0b", 3, "a\\x00b");
    check("del\x7f", 4, "del\\x7f");
    check("back\\x1b", 8, "back\\\\x1b"); /* a literal "\x1b" cannot pass for an escape */
    check_kind("\"ctl\\001\x1b\"", 10, TEXT_VALUE, "\"ctl\\001\\x1b\"");
    check("", 0, "");
}

static void test_utf8(void)
{
    check("h\xc3\xa9", 3, "h\xc3\xa9");                               /* é */
    check("\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80");                 /* 4 bytes */
    check("\xe6\x97\xa5\xe6\x9c\xac", 6, "\xe6\x97\xa5\xe6\x9c\xac"); /* CJK */
    check("\xc2\xa0", 2, "\xc2\xa0");                                 /* U+00A0: printable */
    check("\xc2\x80", 2, "\\xc2\\x80");                               /* U+0080: C1 */
    check("\xc2\x9b"
          "2J",
          4, "\\xc2\\x9b2J");                    /* U+009B: CSI */
    check("\xc2\x9f", 2, "\\xc2\\x9f");          /* U+009F */
    check("\xd8\x9c", 2, "\\xd8\\x9c");          /* U+061C: bidi mark */
    check("\xe2\x80\x8e", 3, "\\xe2\\x80\\x8e"); /* U+200E */
    check("\xe2\x80\xae"
          "evil",
          7, "\\xe2\\x80\\xaeevil");                  /* U+202E: right-to-left */
    check("\xe2\x81\xa9", 3, "\\xe2\\x81\\xa9");      /* U+2069 */
    check("\xe2\x80\x90", 3, "\xe2\x80\x90");         /* U+2010, a hyphen: kept */
    check("\xe2\x81\xaa", 3, "\xe2\x81\xaa");         /* U+206A: kept */
    check("\xef\xbf\xbd", 3, "\xef\xbf\xbd");         /* U+FFFD */
    check("\xf4\x8f\xbf\xbf", 4, "\xf4\x8f\xbf\xbf"); /* U+10FFFF */
}

static void test_invalid_utf8(void)
{
    check("\xc0\xaf", 2, "\\xc0\\xaf");                   /* overlong '/' */
    check("\xc1\xbf", 2, "\\xc1\\xbf");                   /* overlong */
    check("\xe0\x80\xaf", 3, "\\xe0\\x80\\xaf");          /* overlong, 3 bytes */
    check("\xf0\x80\x80\xaf", 4, "\\xf0\\x80\\x80\\xaf"); /* overlong, 4 bytes */
    check("\xe0\x82\x9b", 3, "\\xe0\\x82\\x9b");          /* overlong U+009B */
    check("\xed\xa0\x80", 3, "\\xed\\xa0\\x80");          /* surrogate */
    check("\xf4\x90\x80\x80", 4, "\\xf4\\x90\\x80\\x80"); /* past U+10FFFF */
    check("\xf8\x88\x80\x80\x80", 5, "\\xf8\\x88\\x80\\x80\\x80");
    check("a\xc3", 2, "a\\xc3");               /* cut at the end */
    check("\xc3(", 2, "\\xc3(");               /* cut by ASCII */
    check("\xe2\x80", 2, "\\xe2\\x80");        /* cut 3-byte */
    check("\x80\xbf", 2, "\\x80\\xbf");        /* continuations alone */
    check("\xc3\xc3\xa9", 3, "\\xc3\xc3\xa9"); /* bad, then good */
    check("bad\xff\xfeutf8\xc3", 10, "bad\\xff\\xfeutf8\\xc3");
}

/* Inverse of the TEXT_NAME escaping; -1 when text is not something it makes. */
static long unescape(const char *text, unsigned char *out)
{
    long n = 0;
    for (const char *p = text; *p;) {
        if (*p != '\\') {
            out[n++] = (unsigned char)*p++;
        } else if (p[1] == '\\') {
            out[n++] = '\\', p += 2;
        } else if (p[1] == 'x' && p[2] && p[3]) {
            char hex[3] = {p[2], p[3], 0};
            out[n++] = (unsigned char)strtoul(hex, NULL, 16), p += 4;
        } else {
            return -1;
        }
    }
    return n;
}

/* Safe for a terminal: valid UTF-8, no C0, DEL or C1 control, no bidi character. */
static bool terminal_safe(const char *text)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t len = strlen(text);
    for (size_t i = 0; i < len;) {
        size_t n = utf8_valid_len(p + i, len - i);
        if (!n || p[i] < 0x20 || p[i] == 0x7f || (p[i] == 0xc2 && p[i + 1] < 0xa0) ||
            (p[i] == 0xe2 && p[i + 1] == 0x80 && p[i + 2] == 0xae))
            return false;
        i += n;
    }
    return true;
}

/* Random bytes, biased to the interesting ones: always safe, and reversible. */
static void test_random(void)
{
    static const unsigned char pool[] = {'a',  '\\', 'x',  '0',  0x1b, 0x00, 0x7f, 0xc2, 0x9b,
                                         0xa0, 0xc3, 0xa9, 0xe2, 0x80, 0xae, 0xf0, 0x9f, 0xff};
    uint32_t seed = 12345;
    for (int round = 0; round < 20000; round++) {
        unsigned char in[40], back[40];
        size_t len = round % 40;
        for (size_t i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            in[i] = (seed >> 16) & 1 ? pool[(seed >> 17) % sizeof(pool)] : (seed >> 20) & 0xff;
        }
        char out[200];
        size_t n = text_escape(out, sizeof(out), (const char *)in, len, TEXT_NAME);
        bool ok = n < sizeof(out) && terminal_safe(out) && unescape(out, back) == (long)len &&
                  memcmp(in, back, len) == 0;
        CHECK(ok);
        if (!ok)
            break;
    }
}

/* A long name: the length it needs, cut like snprintf, and the FILE and heap writers agree. */
static void test_long_and_writers(void)
{
    size_t len = 5000;
    char *name = malloc(len + 1);
    for (size_t i = 0; i < len; i++)
        name[i] = i % 100 == 99 ? '\x1b' : 'B';
    name[len] = '\0';
    size_t need = text_escape(NULL, 0, name, len, TEXT_NAME);
    CHECK_EQ_U64(need, len + 3 * 50);
    char small[8];
    CHECK_EQ_U64(text_escape(small, sizeof(small), name, len, TEXT_NAME), need);
    CHECK(strcmp(small, "BBBBBBB") == 0);
    char *dup = text_escape_dup(name, TEXT_NAME);
    CHECK(dup && strlen(dup) == need && strncmp(dup + 99, "\\x1b", 4) == 0);
    for (int plain = 0; plain < 2; plain++) {
        if (plain) { /* the fast path: one write */
            memset(name, 'A', len);
            free(dup);
            dup = strdup(name);
        }
        FILE *f = tmpfile();
        CHECK(f != NULL);
        if (!f)
            break;
        fputs_name(name, f);
        long size = ftell(f);
        CHECK_EQ_U64(size, strlen(dup));
        char *back = calloc(1, (size_t)size + 1);
        rewind(f);
        CHECK(fread(back, 1, (size_t)size, f) == (size_t)size && strcmp(back, dup) == 0);
        free(back);
        fclose(f);
    }
    free(dup);
    free(name);
}

int main(void)
{
    test_every_byte();
    test_controls();
    test_utf8();
    test_invalid_utf8();
    test_random();
    test_long_and_writers();
    return unit_finish("text_escape");
}
