/* Fuzz target: reading back the binary record (RUN/events.ctr) into trace.json, as
 * `calltrace export` does with a record left by a killed, full-disk or damaged run, and into the
 * profile `report` and `graph` print: both read calls through record/call_reader.h. Whatever
 * the bytes, it must give either one error or a trace.json that is valid JSON of valid UTF-8
 * with its traceEvents array, a profile whose times are never negative and whose call sites
 * (record --callsites) count no more calls than were made, and never use memory out of
 * proportion to the input. */
#include <cJSON.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "analysis/profile.h"
#include "output/trace_json.h"
#include "output/trace_pftrace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char dir[256], record[300], json[300], pftrace[300];

/* libFuzzer ends by exit() after -max_total_time or -runs: the scratch files go with it. */
static void remove_scratch(void)
{
    unlink(record);
    unlink(json);
    unlink(pftrace);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fuzz_silence_stderr();
    /* In memory when possible: trace_json_write fsyncs what it writes. */
    const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/ct-fuzz-record.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        abort();
    snprintf(record, sizeof(record), "%s/events.ctr", dir);
    snprintf(json, sizeof(json), "%s/trace.json", dir);
    snprintf(pftrace, sizeof(pftrace), "%s/trace.pftrace", dir);
    atexit(remove_scratch);
    return 0;
}

static void write_file(const char *path, const uint8_t *data, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FUZZ_ASSERT(fd >= 0);
    FUZZ_ASSERT(write(fd, data, size) == (ssize_t)size);
    close(fd);
}

static char *read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    FUZZ_ASSERT(fd >= 0);
    struct stat st;
    FUZZ_ASSERT(fstat(fd, &st) == 0);
    char *buf = malloc((size_t)st.st_size + 1);
    FUZZ_ASSERT(buf);
    FUZZ_ASSERT(read(fd, buf, (size_t)st.st_size) == st.st_size);
    buf[st.st_size] = '\0';
    close(fd);
    *len = (size_t)st.st_size;
    return buf;
}

static void check_trace(void)
{
    size_t len;
    char *text = read_file(json, &len);
    FUZZ_ASSERT(fuzz_json_text_ok(text, len));
    cJSON *root = cJSON_ParseWithLength(text, len);
    FUZZ_ASSERT(root && cJSON_IsObject(root));
    FUZZ_ASSERT(cJSON_IsArray(cJSON_GetObjectItem(root, "traceEvents")));
    cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "traceEvents"))
    {
        FUZZ_ASSERT(cJSON_IsString(cJSON_GetObjectItem(e, "name")));
        FUZZ_ASSERT(cJSON_IsString(cJSON_GetObjectItem(e, "ph")));
    }
    cJSON_Delete(root);
    free(text);
}

/* One protobuf message: every field a varint or a length-delimited run within it (the writer
 * uses no other wire type), ending exactly at its end. */
static bool message_ok(const uint8_t *p, size_t len)
{
    size_t i = 0;
    while (i < len) {
        uint64_t key = 0, v = 0;
        for (int shift = 0;; shift += 7) {
            if (i >= len || shift > 63)
                return false;
            key |= (uint64_t)(p[i] & 0x7f) << shift;
            if (!(p[i++] & 0x80))
                break;
        }
        if ((key >> 3) == 0)
            return false;
        for (int shift = 0;; shift += 7) {
            if (i >= len || shift > 63)
                return false;
            v |= (uint64_t)(p[i] & 0x7f) << shift;
            if (!(p[i++] & 0x80))
                break;
        }
        if ((key & 7) == 0)
            continue;
        if ((key & 7) != 2 || v > len - i)
            return false;
        i += v;
    }
    return true;
}

/* The trace is a run of Trace.packet fields (tag 0x0a), each a well-formed message. */
static void check_pftrace(void)
{
    size_t len;
    uint8_t *data = (uint8_t *)read_file(pftrace, &len);
    size_t i = 0;
    while (i < len) {
        FUZZ_ASSERT(data[i++] == 0x0a);
        uint64_t n = 0;
        for (int shift = 0;; shift += 7) {
            FUZZ_ASSERT(i < len && shift <= 63);
            n |= (uint64_t)(data[i] & 0x7f) << shift;
            if (!(data[i++] & 0x80))
                break;
        }
        FUZZ_ASSERT(n <= len - i);
        FUZZ_ASSERT(message_ok(data + i, n));
        i += n;
    }
    free(data);
}

/* Call sites (record --callsites), as report --callers counts them: no function has more calls
 * from its sites than calls. */
static void check_sites(const struct profile *p)
{
    size_t n;
    struct profile_site **sites = profile_sites(p, &n);
    FUZZ_ASSERT(sites);
    uint64_t from_sites = 0;
    for (size_t i = 0; i < n; i++) {
        FUZZ_ASSERT(sites[i]->sym < p->replay.nsyms && sites[i]->ret_addr);
        from_sites += sites[i]->calls;
        bool last = i + 1 == n || sites[i + 1]->sym != sites[i]->sym;
        if (last) {
            FUZZ_ASSERT(from_sites <= p->stats[sites[i]->sym].calls);
            from_sites = 0;
        }
    }
    free(sites);
}

static void check_profile(void)
{
    struct profile p;
    if (profile_build(&p, record, NULL, PROFILE_EDGES | PROFILE_SITES) == 0) {
        for (size_t s = 0; s < p.replay.nsyms; s++) {
            const struct func_stats *st = &p.stats[s];
            FUZZ_ASSERT(st->min_ns >= 0 && st->self_ns >= 0 && st->total_ns >= 0);
            FUZZ_ASSERT(st->unfinished <= st->calls);
        }
        check_sites(&p);
    }
    profile_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    write_file(record, data, size);
    unlink(json);
    struct trace_stats stats = {0};
    struct trace_io io = {AT_FDCWD, record, record, AT_FDCWD, json, json, 0644};
    if (trace_json_write(&io, NULL, &stats) == 0)
        check_trace();
    unlink(pftrace);
    stats = (struct trace_stats){0};
    io.out_name = io.out_path = pftrace;
    if (trace_pftrace_write(&io, NULL, &stats) == 0)
        check_pftrace();
    check_profile();
    return 0;
}
