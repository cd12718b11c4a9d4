/* Derives trace.json (Chrome Trace Event Format, one "X" event per call) from a binary record.
 * Streams: memory holds the function names and each thread's open calls, never the events. */
#ifndef CALLTRACE_OUTPUT_TRACE_JSON_H
#define CALLTRACE_OUTPUT_TRACE_JSON_H

#include <stdbool.h>
#include <stdint.h>

struct trace_json_stats {
    uint64_t calls;
    uint64_t threads;
    uint64_t processes;
    uint64_t unfinished;
    int record_damaged;    /* 1 truncated, 2 corrupt */
    const char *file_name; /* TRACE_JSON_NAME or TRACE_JSON_GZ_NAME: what was written */
};

/* Writes json_path from record_path, gzip-compressed when gzip is set. Returns 0, or -1 after
 * printing one error line. */
int trace_json_write(const char *record_path, const char *json_path, bool gzip,
                     struct trace_json_stats *stats);

/* Writes RUN/trace.json (RUN/trace.json.gz when compress is set) from RUN/events.ctr through a
 * temporary name, so that nobody ever reads half a trace. The other form, left by an earlier
 * export, is removed: a run holds one trace, and the viewer never picks a stale one. */
int trace_json_export(const char *run, bool compress, struct trace_json_stats *stats);
/* trace_json_export(run, false, stats) */
int trace_json_export_run(const char *run, struct trace_json_stats *stats);

#endif
