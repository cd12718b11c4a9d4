/* outbuf's number writers (two digits at a time, in place) against printf, at every length and
 * sign, and across a buffer boundary. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/outbuf.h"
#include "unit.h"

static char path[] = "/tmp/ct-unit-outbuf.XXXXXX";

/* Values of every digit count, with their neighbours, and the extremes. */
static size_t sample_values(int64_t *v, size_t cap)
{
    size_t n = 0;
    uint64_t p = 1; /* 10^d; unsigned: the step after the last, 10^19, still fits */
    for (int d = 0; d < 19 && n + 3 <= cap; d++, p *= 10) {
        v[n++] = (int64_t)p - 1;
        v[n++] = (int64_t)p;
        v[n++] = (int64_t)p + 7;
    }
    v[n++] = INT64_MAX;
    v[n++] = INT64_MIN;
    v[n++] = INT64_MIN + 1;
    return n;
}

static void test_against_printf(void)
{
    int64_t values[80];
    size_t n = sample_values(values, 70);
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    unlink(path);
    struct outbuf out;
    CHECK(outbuf_open(&out, AT_FDCWD, path, 0644, 64) == 0); /* small: numbers cross its end */
    char *expected = NULL;
    size_t expected_len = 0;
    FILE *want = open_memstream(&expected, &expected_len);
    for (size_t i = 0; i < n; i++) {
        for (int sign = 1; sign >= -1; sign -= 2) {
            int64_t ns = sign > 0 ? values[i] : (values[i] == INT64_MIN ? 0 : -values[i]);
            uint64_t mag = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
            outbuf_put_usec(&out, ns);
            outbuf_write(&out, " ", 1);
            fprintf(want, "%s%" PRIu64 ".%03u ", ns < 0 ? "-" : "", mag / 1000,
                    (unsigned)(mag % 1000));
        }
        outbuf_put_u64(&out, (uint64_t)values[i]);
        outbuf_write(&out, "\n", 1);
        fprintf(want, "%" PRIu64 "\n", (uint64_t)values[i]);
    }
    outbuf_put_u64(&out, UINT64_MAX);
    fprintf(want, "%" PRIu64, UINT64_MAX);
    fclose(want);
    CHECK(outbuf_close(&out) == 0);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    char *got = calloc(1, expected_len + 2);
    size_t got_len = f ? fread(got, 1, expected_len + 1, f) : 0;
    if (f)
        fclose(f);
    unlink(path);
    CHECK_EQ_U64(got_len, expected_len);
    CHECK(memcmp(got, expected, expected_len) == 0);
    if (got_len != expected_len || memcmp(got, expected, expected_len) != 0)
        fprintf(stderr, "  got:\n%s\n  expected:\n%s\n", got, expected);
    free(got);
    free(expected);
}

int main(void)
{
    test_against_printf();
    return unit_finish("outbuf_numbers");
}
