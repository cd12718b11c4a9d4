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

/* The checks read an open file, the one the viewer then serves. */
static int check_path(const char *path, bool *gzip, char *why, size_t whylen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    CHECK(fd >= 0);
    int rc = fd < 0 ? -1 : trace_check(fd, gzip, why, whylen);
    if (fd >= 0)
        close(fd);
    return rc;
}

/* expect NULL for a valid trace, or a word the reason must contain */
static void check_text(const char *text, int gzip, const char *expect)
{
    char path[256], why[256] = "";
    snprintf(path, sizeof(path), "%s/t%s", dir, gzip ? ".gz" : "");
    write_file(path, text, strlen(text), gzip);
    bool is_gzip = !gzip;
    int rc = check_path(path, &is_gzip, why, sizeof(why));
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
    CHECK(check_path(path, &gzip, why, sizeof(why)) == 0 && gzip);
    CHECK(truncate(path, 100) == 0);
    CHECK(check_path(path, &gzip, why, sizeof(why)) < 0 && strstr(why, "truncated"));
    free(back);
    free(text);
}

/* The verdict is on the open file, whatever the path names by then; zlib's name for a
 * descriptor ("<fd:N>: ") stays out of the reason. */
static void test_checks_the_open_file(void)
{
    char path[256], other[256], why[256] = "";
    snprintf(path, sizeof(path), "%s/held.json", dir);
    snprintf(other, sizeof(other), "%s/other.json", dir);
    write_file(path, "{\"traceEvents\":[]}", 18, 0);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    CHECK(fd >= 0);
    write_file(other, "not a trace", 11, 0);
    CHECK(rename(other, path) == 0);
    bool gzip = true;
    CHECK(fd >= 0 && trace_check(fd, &gzip, why, sizeof(why)) == 0 && !gzip);
    CHECK(fd >= 0 && trace_check(fd, &gzip, why, sizeof(why)) == 0); /* again, from the start */
    if (fd >= 0)
        close(fd);

    const char *text = "{\"traceEvents\":[{\"ph\":\"X\"},{\"ph\":\"X\"},{\"ph\":\"X\"}]}";
    write_file(path, text, strlen(text), 1);
    fd = open(path, O_RDWR | O_CLOEXEC);
    CHECK(fd >= 0);
    char junk[8];
    memset(junk, 0x55, sizeof(junk));
    CHECK(fd >= 0 && pwrite(fd, junk, sizeof(junk), 12) == (ssize_t)sizeof(junk));
    CHECK(fd >= 0 && trace_check(fd, &gzip, why, sizeof(why)) < 0 && gzip);
    CHECK(!strstr(why, "<fd:"));
    if (strstr(why, "<fd:"))
        fprintf(stderr, "  damaged gzip: why '%s'\n", why);
    if (fd >= 0)
        close(fd);
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
    test_checks_the_open_file();
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    return unit_finish("test_trace_check");
}
