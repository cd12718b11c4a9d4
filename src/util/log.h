/* Error and debug messages: "calltrace: WHAT: WHY", debug output by domain for -v. */
#ifndef CALLTRACE_UTIL_LOG_H
#define CALLTRACE_UTIL_LOG_H

#include <stdbool.h>

enum log_domain {
    DBG_SYMBOLS,
    DBG_PROBE,
    DBG_ENGINE,
    DBG_RECORD,
    DBG_INJECT, /* the inject backend: its region, threads, patches, unwinding */
    DBG_DOMAIN_COUNT,
};

/* Set once from the command line before any work starts. */
void log_set_verbosity(int level);
bool log_enabled(enum log_domain domain, int level);

void err_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A line of calltrace's own account ("calltrace: trace in RUN/trace.json: ..."), escaped like
 * the errors: the run directory's name may be anyone's. */
void note_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void err_hint(const char *hint, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dbg(enum log_domain domain, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
