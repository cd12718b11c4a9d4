/* Is a file a whole trace, Chrome JSON or Perfetto protobuf? Checked before it is served, so
 * that a wrong or truncated file is an error on the terminal instead of a blank Perfetto tab.
 * Each check reads the open file the server then sends (fd, from its start), never a path
 * again: what was checked is what is served. The checks move fd's file position. */
#ifndef CALLTRACE_VIEW_TRACE_CHECK_H
#define CALLTRACE_VIEW_TRACE_CHECK_H

#include <stdbool.h>
#include <stddef.h>

/* Streams the whole file (gzip or plain) through a JSON structure scanner: it must be one
 * object with a top-level "traceEvents" key, or one array, with balanced brackets and strings,
 * and nothing after it. Returns 0, or -1 with the reason in why. *gzip says which it was. */
int trace_check(int fd, bool *gzip, char *why, size_t whylen);

/* The same verdict from the first and last bytes only, for listing many runs at once: catches
 * files that are not JSON traces and most truncated ones, without reading gigabytes. */
int trace_check_quick(int fd, bool *gzip, char *why, size_t whylen);

/* The tag of Trace.packet (field 1, length-delimited): the first byte of a protobuf trace. */
#define PFTRACE_FIRST_BYTE 0x0a

/* Which kind of trace a file holds, from its first byte (gunzipped). Returns 0, or -1 with why
 * filled (unreadable, empty). */
int trace_sniff(int fd, bool *gzip, bool *protobuf, char *why, size_t whylen);

/* A protobuf trace (gzip or plain) is a whole number of packets: walks their lengths. Returns
 * 0, or -1 with the reason in why. */
int trace_check_pftrace(int fd, char *why, size_t whylen);

#endif
