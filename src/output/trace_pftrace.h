/* Derives trace.pftrace (Perfetto's protobuf trace format) from a binary record: a track per
 * thread under a track per process, and a SLICE_BEGIN / SLICE_END pair per call, about 25
 * bytes a call where trace.json takes 100. Perfetto's UI and trace_processor open it at any
 * size. Streams like trace.json: memory holds the function names, each thread's open calls
 * and the names each thread's packets have interned, never the events. */
#ifndef CALLTRACE_OUTPUT_TRACE_PFTRACE_H
#define CALLTRACE_OUTPUT_TRACE_PFTRACE_H

#include <stdbool.h>

#include "output/trace_file.h"

/* Writes path from record_path, gzip-compressed with opts->compress, the calls of opts->window
 * (opts may be NULL: all, plain). Returns 0, or -1 after printing one error line. */
int trace_pftrace_write(const struct trace_io *io, const struct trace_file_options *opts,
                        struct trace_stats *stats);

#endif
