/* Packed entries and exits (REC_CALLS): each event packs and unpacks to itself, damaged bytes
 * are refused, and a record the recorder writes reads back as exactly the events it was given,
 * in their order among the other records, whatever threads and block boundaries come between. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/call_pack.h"
#include "record/reader.h"
#include "record/writer.h"
#include "unit.h"

static void roundtrip_one(uint8_t type, unsigned flags, uint32_t func, uint64_t ticks,
                          uint64_t prev)
{
    uint8_t buf[CALL_PACK_EVENT_MAX];
    size_t n = call_pack_event(buf, type, flags, func, ticks, prev);
    CHECK(n > 0 && n <= CALL_PACK_EVENT_MAX);
    struct rec_call c = {0};
    uint64_t t = prev;
    CHECK_EQ_U64(call_unpack_event(buf, n, &c, &t), n);
    CHECK_EQ_U64(c.hdr.type, type);
    CHECK_EQ_U64(c.hdr.flags, flags);
    CHECK_EQ_U64(c.func, func);
    CHECK_EQ_U64(c.ticks, ticks);
    CHECK_EQ_U64(t, ticks);
    /* every shorter prefix is cut short */
    for (size_t k = 0; k < n; k++) {
        t = prev;
        CHECK_EQ_U64(call_unpack_event(buf, k, &c, &t), 0);
    }
}

static void test_events(void)
{
    static const uint32_t funcs[] = {0, 1, 31, 32, 4095, 4096, 1u << 20, UINT32_MAX};
    static const uint64_t deltas[] = {
        0, 1, 63, 64, 8191, 1u << 20, 1ull << 40, UINT64_MAX, (uint64_t)-1000, (uint64_t)INT64_MIN};
    for (size_t f = 0; f < sizeof(funcs) / sizeof(*funcs); f++)
        for (size_t d = 0; d < sizeof(deltas) / sizeof(*deltas); d++) {
            uint64_t prev = 1000000007u;
            roundtrip_one(REC_ENTER, 0, funcs[f], prev + deltas[d], prev);
            roundtrip_one(REC_EXIT, 0, funcs[f], prev + deltas[d], prev);
            roundtrip_one(REC_EXIT, EXIT_UNWOUND, funcs[f], prev + deltas[d], prev);
            roundtrip_one(REC_EXIT, EXIT_INHERITED | EXIT_UNFINISHED, funcs[f], prev - deltas[d],
                          prev);
        }
    /* the common case is small: a low function id and a delta of a few hundred ticks */
    uint8_t buf[CALL_PACK_EVENT_MAX];
    CHECK_EQ_U64(call_pack_event(buf, REC_ENTER, 0, 5, 1100, 1000), 3);
    CHECK_EQ_U64(call_pack_event(buf, REC_EXIT, 0, 5, 1020, 1000), 2);
}

static void test_damage(void)
{
    struct rec_call c;
    uint64_t t = 0;
    static const uint8_t kind3[] = {0x03, 0x00};
    CHECK_EQ_U64(call_unpack_event(kind3, sizeof(kind3), &c, &t), 0);
    static const uint8_t no_flags[] = {0x06, 0x00, 0x00}; /* kind 2 with a flags byte of 0 */
    CHECK_EQ_U64(call_unpack_event(no_flags, sizeof(no_flags), &c, &t), 0);
    static const uint8_t long_tag[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x00};
    CHECK_EQ_U64(call_unpack_event(long_tag, sizeof(long_tag), &c, &t), 0);
    static const uint8_t wide_tag[] = {0x80, 0x80, 0x80, 0x80, 0x40, 0x00}; /* 35 bits */
    CHECK_EQ_U64(call_unpack_event(wide_tag, sizeof(wide_tag), &c, &t), 0);
    static const uint8_t long_delta[] = {0x00, 0x80, 0x80, 0x80, 0x80, 0x80,
                                         0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    CHECK_EQ_U64(call_unpack_event(long_delta, sizeof(long_delta), &c, &t), 0);
}

/* What the test wrote, in order: calls and the other records (rec_thread here). */
struct expect {
    uint8_t type, flags;
    uint32_t tid, pid, func;
    uint64_t ticks;
};

#define NEXPECT 200000

static struct expect *expected;
static size_t nexpected;

static void expect_call(struct recorder *rec, uint8_t type, unsigned flags, uint32_t pid,
                        uint32_t tid, uint32_t func, uint64_t ticks)
{
    if (type == REC_ENTER)
        rec_enter(rec, (pid_t)pid, (pid_t)tid, func, ticks);
    else
        rec_exit(rec, (pid_t)pid, (pid_t)tid, func, ticks, flags);
    expected[nexpected++] = (struct expect){type, (uint8_t)flags, tid, pid, func, ticks};
}

static void expect_thread(struct recorder *rec, uint32_t pid, uint32_t tid, uint64_t ticks)
{
    rec_thread(rec, (pid_t)pid, (pid_t)tid, ticks);
    expected[nexpected++] = (struct expect){REC_THREAD, 0, tid, pid, 0, ticks};
}

/* Two threads: long runs of one (many REC_CALLS records of the most it holds), then the two
 * alternating (a record each), a thread start between, times going back now and then, with
 * the packer of the inject engine's drain writing some of them. */
static void write_calls(const char *path, struct clock_calibration *clock)
{
    struct recorder rec;
    CHECK(recorder_open(&rec, AT_FDCWD, path, 0644, clock) == 0);
    uint64_t t = 1u << 30;
    uint32_t seed = 1;
    for (int i = 0; i < 60000; i++) {
        seed = seed * 1103515245u + 12345u;
        uint32_t func = seed >> 20;
        expect_call(&rec, REC_ENTER, 0, 10, 11, func, t += seed % 300);
        expect_call(&rec, REC_EXIT, i % 97 ? 0 : EXIT_UNWOUND, 10, 11, func, t += seed % 7);
    }
    expect_thread(&rec, 10, 12, t);
    for (int i = 0; i < 5000; i++) {
        uint32_t tid = 11 + (uint32_t)(i & 1);
        expect_call(&rec, REC_ENTER, 0, 10, tid, (uint32_t)i, t += 100);
        expect_call(&rec, REC_EXIT, 0, 10, tid, (uint32_t)i, i % 13 ? t + 5 : t - 50);
    }
    struct rec_packer pk;
    CHECK(rec_packer_begin(&rec, 10, 12, t, &pk));
    for (int i = 0; i < 30000; i++) {
        if (rec_packer_full(&pk)) {
            rec_packer_end(&rec, &pk);
            CHECK(rec_packer_begin(&rec, 10, 12, t, &pk));
        }
        rec_packer_add(&pk, REC_ENTER, 0, 7, t += 40);
        rec_packer_add(&pk, REC_EXIT, 0, 7, t += 9);
        expected[nexpected++] = (struct expect){REC_ENTER, 0, 12, 10, 7, t - 9};
        expected[nexpected++] = (struct expect){REC_EXIT, 0, 12, 10, 7, t};
    }
    rec_packer_end(&rec, &pk);
    expect_call(&rec, REC_EXIT, EXIT_INHERITED, 10, 12, 3, t += 1);
    CHECK_EQ_U64(rec.calls, 60000 + 5000 + 30000);
    CHECK(recorder_close(&rec) == 0);
}

/* Reads path back: every call and thread start is the one expected, in order. Returns how many
 * matched before the end (or the first difference). */
static size_t read_back(const char *path, struct rec_reader *r)
{
    char why[256];
    CHECK(rec_reader_open(r, AT_FDCWD, path, why, sizeof(why)) == 0);
    size_t i = 0;
    bool same = true;
    for (const struct rec_hdr *h; same && (h = rec_reader_next(r));) {
        if (h->type != REC_ENTER && h->type != REC_EXIT && h->type != REC_THREAD)
            continue;
        const struct expect *e = &expected[i];
        if (h->type == REC_THREAD) {
            const struct rec_thread *th = (const struct rec_thread *)h;
            same = i < nexpected && e->type == REC_THREAD && th->pid == e->pid &&
                   h->tid == e->tid && th->ticks == e->ticks;
        } else {
            const struct rec_call *c = (const struct rec_call *)h;
            same = i < nexpected && e->type == h->type && e->flags == h->flags &&
                   e->tid == h->tid && e->pid == c->pid && e->func == c->func &&
                   e->ticks == c->ticks && h->size == sizeof(*c);
        }
        if (!same)
            fprintf(stderr, "record %zu differs from what was written\n", i);
        else
            i++;
    }
    return i;
}

static void test_record(const char *dir)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/packed.ctr", dir);
    struct clock_calibration clock;
    clock_calibrate(&clock);
    expected = calloc(NEXPECT, sizeof(*expected));
    write_calls(path, &clock);
    struct stat st;
    CHECK(stat(path, &st) == 0);
    /* 190,000 events: as rec_call structs they would take 4.5 MB */
    CHECK(st.st_size < 800000);

    struct rec_reader r;
    CHECK_EQ_U64(read_back(path, &r), nexpected);
    CHECK(!r.truncated && !r.corrupt);
    CHECK_EQ_U64(r.header.version, REC_VERSION);
    rec_reader_close(&r);

    /* cut inside the last records: what comes before is read, the cut is said */
    CHECK(truncate(path, st.st_size - 100) == 0);
    size_t got = read_back(path, &r);
    CHECK(got > 0 && got < nexpected);
    CHECK(r.truncated);
    rec_reader_close(&r);

    /* the first packed event damaged (an unknown kind): the reader stops there and says so */
    CHECK(truncate(path, 0) == 0);
    nexpected = 0;
    unlink(path);
    write_calls(path, &clock);
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    uint8_t bad = 0x03;
    CHECK(pwrite(fd, &bad, 1, sizeof(struct rec_header) + sizeof(struct rec_calls)) == 1);
    close(fd);
    CHECK_EQ_U64(read_back(path, &r), 0);
    CHECK(r.corrupt);
    rec_reader_close(&r);
    free(expected);
}

int main(void)
{
    char dir[] = "/tmp/calltrace-unit-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    test_events();
    test_damage();
    test_record(dir);
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return 1;
    return unit_finish("test_call_pack");
}
