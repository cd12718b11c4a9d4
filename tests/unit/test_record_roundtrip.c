/* The binary record written by the recorder reads back into the trace.json expected: pairing,
 * nesting, unfinished and inherited frames, process and thread metadata, a truncated record. */
#include <cJSON.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/trace_file.h"
#include "record/reader.h"
#include "record/writer.h"
#include "unit.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[n] = '\0';
    fclose(f);
    return buf;
}

static cJSON *find_call(cJSON *events, const char *name, int nth)
{
    cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        cJSON *ph = cJSON_GetObjectItem(e, "ph");
        cJSON *n = cJSON_GetObjectItem(e, "name");
        if (ph && strcmp(ph->valuestring, "X") == 0 && strcmp(n->valuestring, name) == 0 &&
            nth-- == 0)
            return e;
    }
    return NULL;
}

static double num(cJSON *e, const char *key)
{
    cJSON *v = cJSON_GetObjectItem(e, key);
    return v ? v->valuedouble : -1;
}

static void write_sample(const char *record, struct clock_calibration *clock)
{
    struct recorder rec;
    CHECK(recorder_open(&rec, AT_FDCWD, record, 0644, clock) == 0);
    uint64_t t = clock->start.ticks;
    uint64_t us = (uint64_t)(1000.0 / clock->ns_per_tick); /* ticks per microsecond */
    rec_image(&rec, 0, 100, 0, "/bin/prog");
    rec_func(&rec, 0, 0, 0x1000, 16, "outer");
    rec_func(&rec, 1, 0, 0x2000, 16, "inner \"quoted\"");
    rec_process(&rec, 100, 1, t, "prog a b", false);
    rec_thread(&rec, 100, 100, t);
    rec_enter(&rec, 100, 100, 0, t + 10 * us);
    rec_enter(&rec, 100, 100, 1, t + 20 * us);
    rec_exit(&rec, 100, 100, 1, t + 30 * us, 0);
    rec_exit(&rec, 100, 100, 0, t + 40 * us, 0);
    rec_process(&rec, 101, 100, t + 41 * us, "prog a b", false);
    rec_thread(&rec, 101, 101, t + 41 * us);
    rec_enter(&rec, 101, 101, 0, t + 10 * us); /* the parent's open call, inherited */
    rec_exit(&rec, 101, 101, 0, t + 55 * us, EXIT_INHERITED);
    rec_enter(&rec, 100, 100, 0, t + 60 * us);
    rec_thread_end(&rec, 100, 100, t + 70 * us); /* outer left open: unfinished */
    rec_process_end(&rec, 100, 0, t + 71 * us);
    rec_process(&rec, 100, 1, t + 80 * us, "reused pid", false); /* a new process, same pid */
    rec_thread(&rec, 100, 100, t + 80 * us);
    rec_enter(&rec, 100, 100, 1, t + 81 * us);
    rec_exit(&rec, 100, 100, 1, t + 82 * us, 0);
    CHECK(recorder_close(&rec) == 0);
}

static void test_roundtrip(const char *dir)
{
    char record[512], json[512];
    snprintf(record, sizeof(record), "%s/events.ctr", dir);
    snprintf(json, sizeof(json), "%s/trace.json", dir);
    struct clock_calibration clock;
    clock_calibrate(&clock);
    write_sample(record, &clock);
    struct trace_stats stats;
    struct trace_file_options json_only = {.format = TRACE_JSON};
    struct run_dir run;
    CHECK(run_dir_open(dir, &run) == 0);
    CHECK(trace_export(&run, &json_only, &stats) == 0);
    run_dir_close(&run);
    CHECK_EQ_U64(stats.calls, 4);
    CHECK_EQ_U64(stats.unfinished, 1);
    /* those that made calls: process 100 and its thread, then the process that got pid 100
     * again and its thread; not 101, which only has its parent's call, inherited */
    CHECK_EQ_U64(stats.processes, 2);
    CHECK_EQ_U64(stats.threads, 2);
    char *text = slurp(json);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    CHECK(root != NULL);
    cJSON *events = cJSON_GetObjectItem(root, "traceEvents");
    CHECK(cJSON_IsArray(events));
    cJSON *outer = find_call(events, "outer", 0);
    cJSON *inner = find_call(events, "inner \"quoted\"", 0);
    CHECK(outer && inner);
    if (outer && inner) {
        CHECK(num(inner, "ts") >= num(outer, "ts"));
        CHECK(num(inner, "ts") + num(inner, "dur") <= num(outer, "ts") + num(outer, "dur"));
        CHECK(num(outer, "dur") > 29.0 && num(outer, "dur") < 31.0);
        CHECK_EQ_U64(num(outer, "pid"), 100);
    }
    /* the child's copy of the parent's open call is shown marked, and not counted as a call */
    cJSON *inherited = find_call(events, "outer", 1);
    CHECK(inherited &&
          cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(inherited, "args"), "inherited")));
    CHECK(inherited && num(inherited, "pid") == 101);
    cJSON *again = find_call(events, "outer", 2);
    CHECK(again &&
          cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(again, "args"), "unfinished")));
    /* the reused pid gets a track of its own */
    cJSON *reused = find_call(events, "inner \"quoted\"", 1);
    CHECK(reused && num(reused, "pid") == 100 + (1 << 22));
    cJSON_Delete(root);
    free(text);
}

static void test_truncated_record_still_gives_valid_json(const char *dir)
{
    char record[512], json[512];
    snprintf(record, sizeof(record), "%s/events.ctr", dir);
    snprintf(json, sizeof(json), "%s/trace.json", dir);
    struct stat st;
    CHECK(stat(record, &st) == 0);
    CHECK(truncate(record, st.st_size - 30) == 0);
    struct trace_stats stats;
    struct trace_file_options json_only = {.format = TRACE_JSON};
    struct run_dir run;
    CHECK(run_dir_open(dir, &run) == 0);
    CHECK(trace_export(&run, &json_only, &stats) == 0);
    run_dir_close(&run);
    CHECK(stats.record_damaged != 0);
    char *text = slurp(json);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    CHECK(root != NULL);
    cJSON_Delete(root);
    free(text);
}

/* The return address of entry i of thread tid: far apart and close together, up and down, as
 * deltas of every length. */
static uint64_t site_of(unsigned i, pid_t tid)
{
    return i % 7 == 0 ? 0 : 0x7f0000000000ULL + (uint64_t)tid * 0x1000 + (i % 13) * (i % 5) * 977;
}

/* --callsites: each entry's return address reads back with it (a struct rec_call_from), across
 * REC_CALLS records cut by two threads taking turns and by their size; an entry of 0 (not
 * known) is a plain struct rec_call, as is every exit. */
static void test_call_sites(const char *dir)
{
    char record[512];
    snprintf(record, sizeof(record), "%s/sites.ctr", dir);
    struct clock_calibration clock;
    clock_calibrate(&clock);
    struct recorder rec;
    CHECK(recorder_open(&rec, AT_FDCWD, record, 0644, &clock) == 0);
    CHECK(recorder_keep_call_sites(&rec) == 0);
    uint64_t t = clock.start.ticks;
    enum { CALLS = 40000 };
    for (unsigned i = 0; i < CALLS; i++) {
        pid_t tid = i % 1000 < 500 ? 100 : 101;
        rec_enter_from(&rec, 100, tid, i % 3, t + 2 * i, site_of(i, tid));
        rec_exit(&rec, 100, tid, i % 3, t + 2 * i + 1, 0);
    }
    CHECK(recorder_close(&rec) == 0);
    struct rec_reader r;
    char why[256];
    CHECK(rec_reader_open(&r, AT_FDCWD, record, why, sizeof(why)) == 0);
    unsigned entries = 0, wrong = 0;
    for (const struct rec_hdr *h; (h = rec_reader_next(&r));) {
        if (h->type == REC_EXIT && h->size != sizeof(struct rec_call))
            wrong++;
        if (h->type != REC_ENTER)
            continue;
        uint64_t want = site_of(entries, (pid_t)h->tid), got = 0;
        if (h->size == sizeof(struct rec_call_from))
            got = ((const struct rec_call_from *)h)->ret_addr;
        wrong += got != want || (h->size == sizeof(struct rec_call)) != (want == 0);
        entries++;
    }
    CHECK(!r.corrupt && !r.truncated);
    rec_reader_close(&r);
    CHECK_EQ_U64(entries, CALLS);
    CHECK_EQ_U64(wrong, 0);
}

int main(void)
{
    char dir[] = "/tmp/calltrace-unit-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    test_roundtrip(dir);
    test_truncated_record_still_gives_valid_json(dir);
    test_call_sites(dir);
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return 1;
    return unit_finish("record_roundtrip");
}
