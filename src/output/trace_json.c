#include "output/trace_json.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "output/call_marks.h"
#include "output/call_values.h"
#include "output/process_tracks.h"
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
    struct process_tracks pids;
    struct window_reader window;
    struct trace_size_guard size;
    struct run_funcs *funcs; /* images and functions, to format -A / -R values */
    bool srcline;            /* "src": where each call's function is defined */
    uint64_t process_order;
    bool first_event;
    struct trace_stats *stats;
};

static void begin_event(struct json_writer *w)
{
    outbuf_puts(&w->out, w->first_event ? "\n" : ",\n");
    w->first_event = false;
}

static void put_ids(struct json_writer *w, uint32_t pid, uint32_t tid)
{
    outbuf_puts(&w->out, ",\"pid\":");
    outbuf_put_u64(&w->out, process_track(&w->pids, pid));
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
    bool breakpoint; /* FUNC_BREAKPOINT: its calls say "traced_by":"breakpoint" */
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

/* Returns the function's head, NULL when the record never named it. */
static const struct call_head *put_call_head(struct json_writer *w, uint32_t func)
{
    const struct call_head *h = addr_map_get(&w->func_names, func);
    if (h) {
        outbuf_write(&w->out, h->text, h->len);
        return h;
    }
    outbuf_puts(&w->out, CALL_HEAD_START "\"??\"" CALL_HEAD_END);
    return NULL;
}

static void put_string_member(struct json_writer *w, const char *sep, const char *key,
                              const char *value)
{
    outbuf_puts(&w->out, sep);
    json_put_string(&w->out, key, strlen(key));
    outbuf_puts(&w->out, ":");
    json_put_string(&w->out, value, strlen(value));
}

/* -A / -R: each argument by name, and "return", as gdb prints them. *sep goes before the
 * first member written, "," before the others. */
static void put_values(struct json_writer *w, const struct call_frame *call, const char **sep)
{
    struct call_values cv;
    if (!w->funcs || (!call->args && !call->ret))
        return;
    if (call_values_decode(w->funcs, call->func, call->args, call->ret, &cv) < 0) {
        call_values_free(&cv);
        return;
    }
    if (cv.raw) {
        put_string_member(w, *sep, "registers",
                          "raw: no DWARF for this function, or its file changed");
        *sep = ",";
    }
    for (size_t i = 0; i < cv.nargs; i++, *sep = ",")
        put_string_member(w, *sep, cv.args[i].name, cv.args[i].value);
    if (cv.has_result) {
        put_string_member(w, *sep, "return", cv.result.value);
        *sep = ",";
    }
    call_values_free(&cv);
}

static int on_enter(void *ctx, struct call_reader *cr, struct call_thread *t, struct call_frame *f)
{
    struct json_writer *w = ctx;
    (void)cr;
    return window_enter(&w->window, t, f, NULL, NULL);
}

static int put_call(void *ctx, struct call_reader *cr, const struct call_done *call)
{
    struct json_writer *w = ctx;
    (void)cr;
    int shown = trace_call_over(&w->window, call, NULL, NULL, w->stats, &w->pids);
    if (shown <= 0)
        return shown;
    begin_event(w);
    const struct call_head *head = put_call_head(w, call->frame->func);
    outbuf_put_usec(&w->out, call->frame->start_ns);
    outbuf_puts(&w->out, ",\"dur\":");
    outbuf_put_usec(&w->out, call->total_ns);
    put_ids(w, call->thread->pid, call->thread->tid);
    /* Most calls have no args: no "args":{} for them (a tenth of a call's bytes). */
    static const char args_open[] = ",\"args\":{";
    const char *sep = args_open;
    for (size_t i = 0; i < CALL_MARKS; i++) {
        if (call->flags & call_marks[i].flag) {
            outbuf_printf(&w->out, "%s\"%s\":true", sep, call_marks[i].name);
            sep = ",";
        }
    }
    if (head && head->breakpoint) {
        outbuf_printf(&w->out, "%s\"traced_by\":\"breakpoint\"", sep);
        sep = ",";
    }
    put_values(w, call->frame, &sep);
    const char *src = w->srcline ? run_funcs_srcline(w->funcs, call->frame->func) : NULL;
    if (src) {
        put_string_member(w, sep, "src", src);
        sep = ",";
    }
    char from[PATH_MAX + 16];
    if (w->srcline && run_funcs_call_site(w->funcs, call->thread->pid, call->frame->ret_addr, from,
                                          sizeof(from))) {
        put_string_member(w, sep, "called_from", from);
        sep = ",";
    }
    outbuf_puts(&w->out, sep == args_open ? "}" : "}}");
    trace_size_check(&w->size, w->out.written + w->out.len, TRACE_JSON_NAME);
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
    copy->breakpoint = f->hdr.flags & FUNC_BREAKPOINT;
    free(old);
    return window_note_func(&w->window, f->func, name, len);
}

static void on_process(struct json_writer *w, const struct rec_process *p)
{
    uint32_t len;
    const char *name = rec_name(&p->hdr, &len);
    if (!(p->hdr.flags & PROCESS_EXEC))
        process_tracks_started(&w->pids, p->hdr.tid);
    put_metadata(w, "process_name", p->hdr.tid, p->hdr.tid, "name", name, len);
    if (p->hdr.flags & PROCESS_EXEC)
        return; /* the process keeps its place; only its name changes */
    begin_event(w);
    outbuf_puts(&w->out, "{\"name\":\"process_sort_index\",\"ph\":\"M\"");
    put_ids(w, p->hdr.tid, p->hdr.tid);
    outbuf_printf(&w->out, ",\"args\":{\"sort_index\":%llu}}",
                  (unsigned long long)w->process_order++);
}

static void on_thread(struct json_writer *w, const struct rec_thread *t)
{
    char name[32];
    int len =
        snprintf(name, sizeof(name), t->hdr.tid == t->pid ? "main %u" : "thread %u", t->hdr.tid);
    put_metadata(w, "thread_name", t->pid, t->hdr.tid, "name", name, (size_t)len);
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
        process_tracks_ended(&w->pids, h->tid);
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
    process_tracks_free(&w->pids);
    window_reader_free(&w->window);
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
    .record = handle, .enter = on_enter, .values = keep_values, .exit = put_call};

int trace_json_write(const struct trace_io *io, const struct trace_file_options *opts,
                     struct trace_stats *stats)
{
    const char *json_path = io->out_path;
    bool gzip = opts && opts->compress;
    const struct call_window *window = opts ? &opts->window : NULL;
    char why[256];
    struct call_reader cr;
    struct json_writer w = {.first_event = true, .stats = stats, .srcline = opts && opts->srcline};
    if (call_reader_open(&cr, io->record_dir, io->record_name, &json_calls, &w, why, sizeof(why)) <
        0) {
        err_msg("%s: %s", io->record_path, why);
        return -1;
    }
    int rc = gzip ? outbuf_open_gzip(&w.out, io->out_dir, io->out_name, io->mode, JSON_BUFFER)
                  : outbuf_open(&w.out, io->out_dir, io->out_name, io->mode, JSON_BUFFER);
    if (rc < 0) {
        err_msg("cannot create %s: %s", json_path, strerror(-rc));
        call_reader_close(&cr);
        return -1;
    }
    if (addr_map_init(&w.func_names, 1024) < 0 || process_tracks_init(&w.pids) < 0 ||
        window_reader_init(&w.window, window, (int64_t)cr.time.start.mono_ns) < 0 ||
        !(w.funcs = run_funcs_new())) {
        err_msg("%s: out of memory", json_path);
        outbuf_close(&w.out);
        free_writer(&w);
        call_reader_close(&cr);
        return -1;
    }
    trace_size_guard_init(&w.size);
    put_header(&w);
    cr.progress = opts ? opts->progress : NULL;
    cr.progress_what = "writing " TRACE_JSON_NAME;
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
