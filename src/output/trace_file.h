/* The viewable trace of a run, derived from its record (RUN/events.ctr):
 *   trace.json     Chrome's Trace Event Format, ~100 bytes a call: every viewer reads it, but
 *                  Perfetto's browser UI cannot open one much beyond 1 GB;
 *   trace.pftrace  Perfetto's protobuf, ~25 bytes a call, several times faster to write and
 *                  to load: what opens a run of any size.
 * Either may be gzip-compressed (-z: .gz). The default (TRACE_AUTO) writes trace.json while
 * the run is small enough for the browser and trace.pftrace beyond, and says which and why.
 *
 * A window (struct call_window) selects the calls shown, so that any part of a huge run can be
 * looked at: the record keeps everything, the window only applies to what is written. */
#ifndef CALLTRACE_OUTPUT_TRACE_FILE_H
#define CALLTRACE_OUTPUT_TRACE_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "output/call_window.h"
#include "output/process_tracks.h"
#include "output/run_dir.h"
#include "util/progress.h"

#define TRACE_JSON_NAME "trace.json"
#define TRACE_JSON_GZ_NAME "trace.json.gz"
#define TRACE_PFTRACE_NAME "trace.pftrace"
#define TRACE_PFTRACE_GZ_NAME "trace.pftrace.gz"

enum trace_format {
    TRACE_AUTO, /* json up to TRACE_AUTO_JSON_MAX_CALLS calls, perfetto beyond */
    TRACE_JSON,
    TRACE_PERFETTO,
    TRACE_BOTH,
};

/* About 1 GB of trace.json with short names and no arguments: near the browser UI's limit. */
#define TRACE_AUTO_JSON_MAX_CALLS 8000000ull

/* Parses "json", "perfetto" or "both" (also "pftrace"); -1 for anything else. */
int trace_format_parse(const char *text, enum trace_format *format);

/* --format F of record, export, merge and view. Returns 0, or -1 after one error line. */
int trace_format_option(const char *arg, enum trace_format *format);

struct trace_file_options {
    enum trace_format format;
    bool compress;
    struct call_window window;
    const struct run_dir *out; /* where to write the trace files; NULL: the run directory */
    struct progress *progress; /* NULL, or the line that shows how far the writing got */
    bool quiet;                /* no line saying which format TRACE_AUTO chose and why */
    bool srcline;              /* each call's arguments say where its function is: "src" */
};

struct trace_stats {
    uint64_t calls;
    uint64_t threads;
    uint64_t processes;
    uint64_t unfinished;
    uint64_t left_out;  /* calls of the record the window did not show */
    int record_damaged; /* 1 truncated, 2 corrupt */
    char files[64];     /* what was written: "trace.json", "trace.json and trace.pftrace" */
    const char *why;    /* with TRACE_AUTO: why this format, for one line to the user */
};

/* What a trace writer reads and makes: the record record_name in the directory record_dir, and
 * the new file out_name in out_dir, with mode (AT_FDCWD: the names are paths). The paths are
 * for messages. */
struct trace_io {
    int record_dir;
    const char *record_name, *record_path;
    int out_dir;
    const char *out_name, *out_path;
    mode_t mode;
};

/* Writes the trace files of the run from its events.ctr, each through a temporary name so that
 * nobody ever reads half a trace. A trace file of another format or compression left by an
 * earlier export is removed: the viewer never picks a stale one. Returns 0, or -1 after one
 * error line. */
int trace_export(const struct run_dir *run, const struct trace_file_options *opts,
                 struct trace_stats *stats);

/* Past this, a viewable trace is more than any viewer opens whole: said once, with the ways
 * to make it smaller. */
#define TRACE_SIZE_WARNING (4ull << 30)

struct trace_size_guard {
    uint64_t limit; /* TRACE_SIZE_WARNING, or $CALLTRACE_SIZE_WARNING bytes (the tests') */
    bool warned;
};

void trace_size_guard_init(struct trace_size_guard *g);

void trace_size_warn(struct trace_size_guard *g, const char *name);
/* Called as a trace file grows (cheap: a compare) with the bytes made so far; name is its
 * file name. */
static inline void trace_size_check(struct trace_size_guard *g, uint64_t written, const char *name)
{
    if (__builtin_expect(written > g->limit && !g->warned, 0))
        trace_size_warn(g, name);
}

/* A writer's call is over: whether it shows it (1; 0 when the window does not, negative to
 * stop), counted in stats alike by both formats (a forked child's copy of its parent's
 * open calls is shown but not counted: the child did not make them). */
static inline int trace_call_over(struct window_reader *wr, const struct call_done *c,
                                  window_begin_fn begin, void *ctx, struct trace_stats *stats,
                                  struct process_tracks *pids)
{
    /* The frame is the reader's, still on its thread's stack: the window marks it. */
    int shown = window_exit(wr, c->thread, (struct call_frame *)c->frame, c->end_ns, begin, ctx);
    bool counted = !(c->flags & EXIT_INHERITED);
    if (shown <= 0) {
        stats->left_out += shown == 0 && counted;
        return shown;
    }
    stats->calls += counted;
    stats->unfinished += counted && (c->flags & EXIT_UNFINISHED);
    /* the threads and processes counted are those that made calls shown (a wrapper's process,
     * a thread that only waits: none); the thread is the reader's, as the frame */
    if (counted && ((struct call_thread *)c->thread)->calls_shown++ == 0) {
        stats->threads++;
        stats->processes += process_tracks_first_call(pids, c->thread->pid);
    }
    return 1;
}

/* The number of calls the record name in dir holds, from its size: what TRACE_AUTO decides by,
 * without reading it. */
uint64_t trace_estimated_calls(int dir, const char *name);

#endif
