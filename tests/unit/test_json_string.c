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

/* What a terminal acts on becomes \u: DEL, C1 controls, bidirectional formatting. */
static void test_terminal_controls(void)
{
    check_escape("a\x7f", 2, "\"a\\u007f\"");
    check_escape("\xc2\x9b"
                 "2J",
                 4, "\"\\u009b2J\"");
    check_escape("\xc2\x80\xc2\x9f\xc2\xa0", 6, "\"\\u0080\\u009f\xc2\xa0\"");
    check_escape("\xe2\x80\xae", 3, "\"\\u202e\"");
    check_escape("\xd8\x9c", 2, "\"\\u061c\"");
}

/* cJSON's output made safe: same JSON, controls escaped, invalid UTF-8 replaced. */
static void test_text_safe(void)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "n", "x\x1b\x7f\xc2\x9b\xff\xe2\x80\xae\xc3\xa9");
    char *raw = cJSON_PrintUnformatted(o), *safe = json_text_safe(raw);
    CHECK(safe &&
          strcmp(safe, "{\"n\":\"x\\u001b\\u007f\\u009b\xef\xbf\xbd\\u202e\xc3\xa9\"}") == 0);
    cJSON *back = safe ? cJSON_Parse(safe) : NULL;
    const cJSON *n = cJSON_GetObjectItem(back, "n");
    CHECK(cJSON_IsString(n) &&
          strcmp(n->valuestring, "x\x1b\x7f\xc2\x9b\xef\xbf\xbd\xe2\x80\xae\xc3\xa9") == 0);
    cJSON_Delete(back);
    free(safe);
    free(raw);
    char *pretty = cJSON_Print(o), *same = json_text_safe(pretty); /* tabs and newlines kept */
    CHECK(same && strchr(same, '\n') && strchr(same, '\t'));
    free(same);
    free(pretty);
    cJSON_Delete(o);
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
    test_terminal_controls();
    test_text_safe();
    test_random_bytes_parse();
    return unit_finish("json_string");
}
