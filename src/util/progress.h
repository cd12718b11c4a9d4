/* One updating line on stderr for long work (recording, writing a trace), as pv or curl show:
 * only when stderr is a terminal and the work has gone on for a couple of seconds, at most a
 * few times a second, and wiped before anything else is printed. */
#ifndef CALLTRACE_UTIL_PROGRESS_H
#define CALLTRACE_UTIL_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#define PROGRESS_AFTER_NS 2000000000ull /* quiet work shorter than this shows nothing */
#define PROGRESS_EVERY_NS 250000000ull  /* the line's refresh */

struct progress {
    bool enabled;
    bool shown; /* a line is on the terminal */
    uint64_t start_ns, last_ns;
};

/* enabled when not quiet and stderr is a terminal */
void progress_init(struct progress *p, bool quiet);
/* Whether the line is due for a refresh now; cheap enough to ask often. */
bool progress_due(struct progress *p);
void progress_show(struct progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Wipes the line, if one is shown. */
void progress_end(struct progress *p);
/* Seconds since progress_init, for rates. */
double progress_seconds(const struct progress *p);

#endif
