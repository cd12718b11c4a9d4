/* The viewer's "is this a whole trace?" check, on plain and gzip files (the gzip ones written
 * through the gzip output buffer that -z uses). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "util/outbuf.h"
#include "view/trace_check.h"
#include "unit.h"

static char dir[] = "/tmp/ct-unit-trace-check.XXXXXX";

static void write_file(const char *path, const char *text, size_t len, int gzip)
{
    struct outbuf out;
    unlink(path);
    CHECK((gzip ? outbuf_open_gzip(&out, AT_FDCWD, path, 0644, 16)
                : outbuf_open(&out, AT_FDCWD, path, 0644, 16)) == 0);
    outbuf_write(&out, text, len); /* a small buffer: many flushes through deflate */
    CHECK(outbuf_close(&out) == 0);
}

/* expect NULL for a valid trace, or a word the reason must contain */
static void check_text(const char *text, int gzip, const char *expect)
{
    char path[256], why[256] = "";
    snprintf(path, sizeof(path), "%s/t%s", dir, gzip ? ".gz" : "");
    write_file(path, text, strlen(text), gzip);
    bool is_gzip = !gzip;
    int rc = trace_check(path, &is_gzip, why, sizeof(why));
    CHECK(is_gzip == (gzip != 0));
    if (!expect) {
        CHECK(rc == 0);
    } else {
        CHECK(rc < 0 && strstr(why, expect));
    }
    if ((rc == 0) != !expect || (expect && !strstr(why, expect)))
        fprintf(stderr, "  %s%s: rc %d, why '%s'\n", text, gzip ? " (gzip)" : "", rc, why);
}

static void test_texts(int gzip)
{
    check_text("{\"traceEvents\":[]}", gzip, NULL);
    check_text(" \n{\"displayTimeUnit\":\"ns\",\"traceEvents\":[{\"name\":\"a}]\\\"{\"}]}\n", gzip,
               NULL);
    check_text("[{\"ph\":\"X\"}]", gzip, NULL);
    check_text("{\"other\":{\"traceEvents\":[]}}", gzip, "traceEvents");
    check_text("{\"x\":\"traceEvents\"}", gzip, "traceEvents");
    check_text("{\"traceEvents\":[", gzip, "truncated");
    check_text("{\"traceEvents\":[{\"name\":\"a", gzip, "truncated");
    check_text("{\"traceEvents\":[}]", gzip, "unbalanced");
    check_text("{\"traceEvents\":[]} {}", gzip, "more data");
    check_text("hello", gzip, "does not start");
    check_text("", gzip, "empty");
}

static void test_gzip_roundtrip_and_truncation(void)
{
    char path[256], why[256];
    snprintf(path, sizeof(path), "%s/big.gz", dir);
    size_t n = 1 << 20;
    char *text = malloc(n + 64);
    CHECK(text != NULL);
    if (!text)
        return;
    size_t len = (size_t)snprintf(text, 64, "{\"traceEvents\":[");
    while (len < n)
        len += (size_t)snprintf(text + len, 64, "{\"ph\":\"X\",\"ts\":%zu},", len);
    strcpy(text + len - 1, "]}");
    len++;
    write_file(path, text, len, 1);
    gzFile f = gzopen(path, "rb");
    char *back = malloc(len + 1);
    int got = f && back ? gzread(f, back, (unsigned)len + 1) : -1;
    CHECK(got == (int)len && memcmp(back, text, len) == 0);
    if (f)
        gzclose(f);
    bool gzip;
    CHECK(trace_check(path, &gzip, why, sizeof(why)) == 0 && gzip);
    CHECK(truncate(path, 100) == 0);
    CHECK(trace_check(path, &gzip, why, sizeof(why)) < 0 && strstr(why, "truncated"));
    free(back);
    free(text);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_texts(0);
    test_texts(1);
    test_gzip_roundtrip_and_truncation();
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    return unit_finish("test_trace_check");
}
