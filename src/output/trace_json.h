/* Derives trace.json (Chrome Trace Event Format, one "X" event per call) from a binary record.
 * Streams: memory holds the function names and each thread's open calls, never the events. */
#ifndef CALLTRACE_OUTPUT_TRACE_JSON_H
#define CALLTRACE_OUTPUT_TRACE_JSON_H

#include <stdbool.h>

#include "output/trace_file.h"

/* Writes json_path from record_path, gzip-compressed with opts->compress, the calls of opts->window
 * (opts may be NULL: all, plain), with the calls window shows. Returns 0, or -1 after printing one
 * error line. */
int trace_json_write(const struct trace_io *io, const struct trace_file_options *opts,
                     struct trace_stats *stats);

#endif
