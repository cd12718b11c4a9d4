/* JSON escaping of arbitrary bytes: always a valid JSON string of valid UTF-8. */
#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_string.h"
#include "unit.h"

static void check_escape(const char *in, size_t len, const char *expected)
{
    char out[256];
    size_t n = json_escape(out, sizeof(out), in, len);
    CHECK_EQ_U64(n, strlen(expected));
    CHECK(strcmp(out, expected) == 0);
    if (strcmp(out, expected) != 0)
        fprintf(stderr, "  got %s, expected %s\n", out, expected);
}

static void test_specials(void)
{
    check_escape("a\"b\\c", 5, "\"a\\\"b\\\\c\"");
    check_escape("l1\nl2\t\r", 7, "\"l1\\nl2\\t\\r\"");
    check_escape("\x01\x1f", 2, "\"\\u0001\\u001f\"");
    check_escape("", 0, "\"\"");
    check_escape("a\0b", 3, "\"a\\u0000b\"");
}

static void test_utf8(void)
{
    check_escape("h\xc3\xa9", 3, "\"h\xc3\xa9\"");               /* valid 2-byte kept */
    check_escape("\xf0\x9f\x98\x80", 4, "\"\xf0\x9f\x98\x80\""); /* valid 4-byte kept */
    check_escape("\xff", 1, "\"\xef\xbf\xbd\"");                 /* invalid byte */
    check_escape("\xc3", 1, "\"\xef\xbf\xbd\"");                 /* truncated sequence */
    check_escape("\xed\xa0\x80", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""); /* surrogate */
    check_escape("\xc0\xaf", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\"");                 /* overlong */
}

/* Every byte string must parse back as JSON: a pseudo-random sweep. */
static void test_random_bytes_parse(void)
{
    unsigned seed = 12345;
    for (int round = 0; round < 2000; round++) {
        char in[64];
        size_t len = (size_t)(rand_r(&seed) % sizeof(in));
        for (size_t i = 0; i < len; i++)
            in[i] = (char)rand_r(&seed);
        char out[64 * 6 + 3];
        json_escape(out, sizeof(out), in, len);
        cJSON *parsed = cJSON_Parse(out);
        CHECK(parsed && cJSON_IsString(parsed));
        cJSON_Delete(parsed);
    }
}

int main(void)
{
    test_specials();
    test_utf8();
    test_random_bytes_parse();
    return unit_finish("json_string");
}
