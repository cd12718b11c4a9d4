/* Fuzz target: JSON escaping of arbitrary bytes (function names, command lines, later string
 * arguments all come from the traced program). Whatever the input, the output must be one
 * valid JSON string of valid UTF-8, decode back to the input when the input was valid UTF-8
 * without NUL, and a short buffer must get a prefix of it (snprintf contract). json_utf8_copy
 * (names handed to cJSON) must give valid UTF-8, the input itself when it was valid. */
#include <cJSON.h>
#include <string.h>

#include "fuzz.h"
#include "util/json_string.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool is_plain_utf8(const uint8_t *data, size_t size)
{
    for (size_t i = 0; i < size;) {
        size_t n = data[i] ? fuzz_utf8_len(data + i, size - i) : 0;
        if (!n)
            return false;
        i += n;
    }
    return true;
}

static void check_round_trip(const char *json, const uint8_t *data, size_t size)
{
    cJSON *parsed = cJSON_Parse(json);
    FUZZ_ASSERT(parsed && cJSON_IsString(parsed));
    if (is_plain_utf8(data, size)) {
        FUZZ_ASSERT(strlen(parsed->valuestring) == size);
        FUZZ_ASSERT(memcmp(parsed->valuestring, data, size) == 0);
    }
    cJSON_Delete(parsed);
}

static void check_utf8_copy(const uint8_t *data, size_t size)
{
    size_t len = 0;
    while (len < size && data[len]) /* the callers pass C strings */
        len++;
    char *copy = json_utf8_copy((const char *)data, len);
    FUZZ_ASSERT(copy);
    size_t out = strlen(copy);
    FUZZ_ASSERT(is_plain_utf8((const uint8_t *)copy, out));
    if (is_plain_utf8(data, len))
        FUZZ_ASSERT(out == len && memcmp(copy, data, len) == 0);
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_utf8_copy(data, size);
    const char *in = (const char *)data;
    size_t need = json_escape(NULL, 0, in, size);
    FUZZ_ASSERT(need >= 2 && need <= 2 + 6 * size);
    char *full = malloc(need + 1);
    FUZZ_ASSERT(full);
    FUZZ_ASSERT(json_escape(full, need + 1, in, size) == need);
    FUZZ_ASSERT(strlen(full) == need);
    FUZZ_ASSERT(full[0] == '"' && full[need - 1] == '"');
    FUZZ_ASSERT(fuzz_json_text_ok(full, need) && !memchr(full, '\n', need));
    check_round_trip(full, data, size);
    /* A buffer too small by any amount still gets a terminated prefix. */
    size_t cap = size ? (data[0] % need) + 1 : 1;
    char *part = malloc(cap);
    FUZZ_ASSERT(part);
    FUZZ_ASSERT(json_escape(part, cap, in, size) == need);
    FUZZ_ASSERT(strlen(part) == cap - 1 && memcmp(part, full, cap - 1) == 0);
    free(part);
    free(full);
    return 0;
}
