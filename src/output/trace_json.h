/* Derives trace.json (Chrome Trace Event Format, one "X" event per call) from a binary record.
 * Streams: memory holds the function names and each thread's open calls, never the events. */
#ifndef CALLTRACE_OUTPUT_TRACE_JSON_H
#define CALLTRACE_OUTPUT_TRACE_JSON_H

#include <stdint.h>

struct trace_json_stats {
    uint64_t calls;
    uint64_t threads;
    uint64_t processes;
    uint64_t unfinished;
    int record_damaged; /* 1 truncated, 2 corrupt */
};

/* Writes json_path from record_path. Returns 0, or -1 after printing one error line. */
int trace_json_write(const char *record_path, const char *json_path,
                     struct trace_json_stats *stats);

/* Writes RUN/trace.json from RUN/events.ctr through a temporary name, so that nobody ever
 * reads half a trace. */
int trace_json_export_run(const char *run, struct trace_json_stats *stats);

#endif
