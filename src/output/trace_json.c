#include "output/trace_json.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "output/call_values.h"
#include "output/run_dir.h"
#include "record/call_reader.h"
#include "util/addr_map.h"
#include "util/json_string.h"
#include "util/log.h"
#include "util/outbuf.h"

#define JSON_BUFFER (1 << 20)

struct json_writer {
    struct outbuf out;
    /* By id: a hash map, not an array, because a damaged record may hold any 32-bit id and
     * memory must stay in proportion to the record. */
    struct addr_map func_names; /* id -> struct call_head */
    struct addr_map pid_reuse;  /* pid -> ((generation << 1) | ended) + 1 */
    struct run_funcs *funcs;    /* images and functions, to format -A / -R values */
    uint64_t process_order;
    uint32_t last_pid; /* track_pid's last answer, for a run of calls of one process */
    uint64_t last_track;
    bool first_event;
    struct trace_json_stats *stats;
};

static void begin_event(struct json_writer *w)
{
    outbuf_puts(&w->out, w->first_event ? "\n" : ",\n");
    w->first_event = false;
}

/* pid_max never exceeds 2^22: a pid reused by a later process gets a track of its own at
 * pid + generation * 2^22, so two processes never share one. */
#define PID_SPACE (1ull << 22)

static uint64_t track_pid(struct json_writer *w, uint32_t pid)
{
    if (pid && pid == w->last_pid)
        return w->last_track;
    uintptr_t v = (uintptr_t)addr_map_get(&w->pid_reuse, pid);
    w->last_pid = pid;
    w->last_track = v ? pid + ((v - 1) >> 1) * PID_SPACE : pid;
    return w->last_track;
}

static void process_started(struct json_writer *w, uint32_t pid)
{
    uintptr_t v = (uintptr_t)addr_map_get(&w->pid_reuse, pid);
    uintptr_t gen = v ? ((v - 1) >> 1) + ((v - 1) & 1) : 0;
    w->last_pid = 0;
    addr_map_put(&w->pid_reuse, pid, (void *)((gen << 1) + 1));
}

static void process_ended(struct json_writer *w, uint32_t pid)
{
    uintptr_t v = (uintptr_t)addr_map_get(&w->pid_reuse, pid);
    if (v)
        addr_map_put(&w->pid_reuse, pid, (void *)(((v - 1) | 1) + 1));
    w->last_pid = 0;
}

static void put_ids(struct json_writer *w, uint32_t pid, uint32_t tid)
{
    outbuf_puts(&w->out, ",\"pid\":");
    outbuf_put_u64(&w->out, track_pid(w, pid));
    outbuf_puts(&w->out, ",\"tid\":");
    outbuf_put_u64(&w->out, tid);
}

static void put_metadata(struct json_writer *w, const char *what, uint32_t pid, uint32_t tid,
                         const char *key, const char *value, size_t len)
{
    begin_event(w);
    outbuf_printf(&w->out, "{\"name\":\"%s\",\"ph\":\"M\"", what);
    put_ids(w, pid, tid);
    outbuf_printf(&w->out, ",\"args\":{\"%s\":", key);
    json_put_string(&w->out, value, len);
    outbuf_puts(&w->out, "}}");
}

/* What every call of a function starts with, its name escaped once: a trace holds millions of
 * calls of a few functions. */
#define CALL_HEAD_START "{\"name\":"
#define CALL_HEAD_END ",\"cat\":\"function\",\"ph\":\"X\",\"ts\":"
struct call_head {
    size_t len;
    char text[];
};

static struct call_head *call_head_new(const char *name, size_t name_len)
{
    size_t start = strlen(CALL_HEAD_START), end = strlen(CALL_HEAD_END);
    size_t escaped = json_escape(NULL, 0, name, name_len);
    struct call_head *h = malloc(sizeof(*h) + start + escaped + end + 1);
    if (!h)
        return NULL;
    memcpy(h->text, CALL_HEAD_START, start);
    json_escape(h->text + start, escaped + 1, name, name_len);
    memcpy(h->text + start + escaped, CALL_HEAD_END, end + 1);
    h->len = start + escaped + end;
    return h;
}

static void put_call_head(struct json_writer *w, uint32_t func)
{
    const struct call_head *h = addr_map_get(&w->func_names, func);
    if (h) {
        outbuf_write(&w->out, h->text, h->len);
        return;
    }
    outbuf_puts(&w->out, CALL_HEAD_START "\"??\"" CALL_HEAD_END);
}

static void put_string_member(struct json_writer *w, const char *sep, const char *key,
                              const char *value)
{
    outbuf_puts(&w->out, sep);
    json_put_string(&w->out, key, strlen(key));
    outbuf_puts(&w->out, ":");
    json_put_string(&w->out, value, strlen(value));
}

/* -A / -R: each argument by name, and "return", as gdb prints them. */
static void put_values(struct json_writer *w, const struct call_frame *call, const char *sep)
{
    struct call_values cv;
    if (!w->funcs || (!call->args && !call->ret))
        return;
    if (call_values_decode(w->funcs, call->func, call->args, call->ret, &cv) < 0) {
        call_values_free(&cv);
        return;
    }
    if (cv.raw) {
        put_string_member(w, sep, "registers",
                          "raw: no DWARF for this function, or its file changed");
        sep = ",";
    }
    for (size_t i = 0; i < cv.nargs; i++, sep = ",")
        put_string_member(w, sep, cv.args[i].name, cv.args[i].value);
    if (cv.has_result)
        put_string_member(w, sep, "return", cv.result.value);
    call_values_free(&cv);
}

static int put_call(void *ctx, struct call_reader *cr, const struct call_done *call)
{
    struct json_writer *w = ctx;
    (void)cr;
    begin_event(w);
    put_call_head(w, call->frame->func);
    outbuf_put_usec(&w->out, call->frame->start_ns);
    outbuf_puts(&w->out, ",\"dur\":");
    outbuf_put_usec(&w->out, call->total_ns);
    put_ids(w, call->thread->pid, call->thread->tid);
    outbuf_puts(&w->out, ",\"args\":{");
    const char *sep = "";
    static const struct {
        unsigned flag;
        const char *key;
    } marks[] = {
        {EXIT_UNFINISHED, "unfinished"}, {EXIT_UNWOUND, "unwound"}, {EXIT_INHERITED, "inherited"}};
    for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
        if (call->flags & marks[i].flag) {
            outbuf_printf(&w->out, "%s\"%s\":true", sep, marks[i].key);
            sep = ",";
        }
    }
    put_values(w, call->frame, sep);
    outbuf_puts(&w->out, "}}");
    /* A forked child's copy of its parent's open calls is shown, but was not called by it. */
    if (call->flags & EXIT_INHERITED)
        return 0;
    w->stats->calls++;
    if (call->flags & EXIT_UNFINISHED)
        w->stats->unfinished++;
    return 0;
}

/* Every value is kept: -A / -R are shown with their call. */
static int keep_values(void *ctx, struct call_reader *cr, struct call_thread *t,
                       struct call_frame *f, const struct rec_hdr *h)
{
    (void)ctx, (void)cr, (void)t, (void)f, (void)h;
    return 1;
}

static int remember_func(struct json_writer *w, const struct rec_func *f)
{
    uint32_t len;
    const char *name = rec_name(&f->hdr, &len);
    struct call_head *copy = call_head_new(name, len);
    struct call_head *old = addr_map_get(&w->func_names, f->func);
    if (!copy || addr_map_put(&w->func_names, f->func, copy) < 0) {
        free(copy);
        return -1;
    }
    free(old);
    return 0;
}

static void on_process(struct json_writer *w, const struct rec_process *p)
{
    uint32_t len;
    const char *name = rec_name(&p->hdr, &len);
    if (!(p->hdr.flags & PROCESS_EXEC))
        process_started(w, p->hdr.tid);
    put_metadata(w, "process_name", p->hdr.tid, p->hdr.tid, "name", name, len);
    if (p->hdr.flags & PROCESS_EXEC)
        return; /* the process keeps its place; only its name changes */
    begin_event(w);
    outbuf_puts(&w->out, "{\"name\":\"process_sort_index\",\"ph\":\"M\"");
    put_ids(w, p->hdr.tid, p->hdr.tid);
    outbuf_printf(&w->out, ",\"args\":{\"sort_index\":%llu}}",
                  (unsigned long long)w->process_order++);
    w->stats->processes++;
}

static void on_thread(struct json_writer *w, const struct rec_thread *t)
{
    char name[32];
    int len =
        snprintf(name, sizeof(name), t->hdr.tid == t->pid ? "main %u" : "thread %u", t->hdr.tid);
    put_metadata(w, "thread_name", t->pid, t->hdr.tid, "name", name, (size_t)len);
    w->stats->threads++;
}

static int handle(void *ctx, struct call_reader *cr, const struct rec_hdr *h)
{
    struct json_writer *w = ctx;
    (void)cr;
    switch (h->type) {
    case REC_FUNC:
        if (run_funcs_note(w->funcs, h) < 0)
            return -1;
        return remember_func(w, (const struct rec_func *)h);
    case REC_IMAGE:
        return run_funcs_note(w->funcs, h);
    case REC_PROCESS:
        on_process(w, (const struct rec_process *)h);
        break;
    case REC_THREAD:
        on_thread(w, (const struct rec_thread *)h);
        break;
    case REC_PROCESS_END:
        process_ended(w, h->tid);
        break;
    default:
        break;
    }
    return 0;
}

static void free_writer(struct json_writer *w)
{
    ADDR_MAP_FOREACH(&w->func_names, slot)
    free(slot->value);
    addr_map_free(&w->func_names);
    addr_map_free(&w->pid_reuse);
    run_funcs_free(w->funcs);
}

static void put_header(struct json_writer *w)
{
    outbuf_puts(&w->out, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
}

static void put_footer(struct json_writer *w, const struct rec_reader *r)
{
    outbuf_puts(&w->out, "\n],\"otherData\":{\"producer\":\"calltrace\",\"clock\":");
    outbuf_puts(&w->out, (r->header.flags & REC_F_TSC) ? "\"tsc\"" : "\"monotonic\"");
    bool complete = (r->header.flags & REC_F_COMPLETE) && !r->truncated && !r->corrupt;
    outbuf_printf(&w->out, ",\"calls\":%llu,\"dropped_calls\":%llu,\"complete\":%s}}\n",
                  (unsigned long long)w->stats->calls, (unsigned long long)r->header.dropped_calls,
                  complete ? "true" : "false");
}

static const struct call_reader_ops json_calls = {
    .record = handle, .values = keep_values, .exit = put_call};

int trace_json_write(const char *record_path, const char *json_path, bool gzip,
                     struct trace_json_stats *stats)
{
    char why[256];
    struct call_reader cr;
    struct json_writer w = {.first_event = true, .stats = stats};
    memset(stats, 0, sizeof(*stats));
    if (call_reader_open(&cr, record_path, &json_calls, &w, why, sizeof(why)) < 0) {
        err_msg("%s: %s", record_path, why);
        return -1;
    }
    int rc = gzip ? outbuf_open_gzip(&w.out, json_path, JSON_BUFFER)
                  : outbuf_open(&w.out, json_path, JSON_BUFFER);
    if (rc < 0) {
        err_msg("cannot create %s: %s", json_path, strerror(-rc));
        call_reader_close(&cr);
        return -1;
    }
    if (addr_map_init(&w.func_names, 1024) < 0 || addr_map_init(&w.pid_reuse, 64) < 0 ||
        !(w.funcs = run_funcs_new())) {
        err_msg("%s: out of memory", json_path);
        outbuf_close(&w.out);
        free_writer(&w);
        call_reader_close(&cr);
        return -1;
    }
    put_header(&w);
    int failed = call_reader_run(&cr);
    stats->record_damaged = cr.damaged;
    put_footer(&w, &cr.file);
    rc = outbuf_close(&w.out);
    free_writer(&w);
    call_reader_close(&cr);
    if (failed) {
        err_msg("%s: out of memory while writing the trace", json_path);
        return -1;
    }
    if (rc < 0) {
        err_hint(rc == -ENOSPC ? "free some space, then run `calltrace export RUN`" : NULL,
                 "cannot write %s: %s", json_path, strerror(-rc));
        return -1;
    }
    return 0;
}

int trace_json_export(const char *run, bool compress, struct trace_json_stats *stats)
{
    const char *name = compress ? TRACE_JSON_GZ_NAME : TRACE_JSON_NAME;
    const char *other_name = compress ? TRACE_JSON_NAME : TRACE_JSON_GZ_NAME;
    char record[PATH_MAX], json[PATH_MAX], tmp[PATH_MAX], other[PATH_MAX];
    if (run_path(record, sizeof(record), run, REC_FILE_NAME) < 0 ||
        run_path(json, sizeof(json), run, name) < 0 ||
        run_path(other, sizeof(other), run, other_name) < 0 ||
        snprintf(tmp, sizeof(tmp), "%s.tmp", json) >= (int)sizeof(tmp)) {
        err_msg("%s: path too long", run);
        return -1;
    }
    unlink(tmp);
    if (trace_json_write(record, tmp, compress, stats) < 0) {
        unlink(tmp);
        return -1;
    }
    stats->file_name = name;
    if (rename(tmp, json) < 0) {
        err_msg("cannot rename %s to %s: %s", tmp, json, strerror(errno));
        return -1;
    }
    if (unlink(other) < 0 && errno != ENOENT)
        err_msg("cannot remove the older %s: %s", other, strerror(errno));
    return 0;
}

int trace_json_export_run(const char *run, struct trace_json_stats *stats)
{
    return trace_json_export(run, false, stats);
}
