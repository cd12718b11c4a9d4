#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>

/* The name in brackets after "calltrace" that says which part of calltrace speaks. */
static const char *const domain_names[DBG_DOMAIN_COUNT] = {
    [DBG_SYMBOLS] = "symbols", /* reading images, choosing functions */
    [DBG_PROBE] = "probe",     /* the breakpoint backend's breakpoints */
    [DBG_ENGINE] = "engine",   /* the controller: processes, threads, stops */
    [DBG_RECORD] = "record",   /* the recorder */
    [DBG_INJECT] = "inject",   /* the inject backend: its region, threads, patches, unwinding */
};

/* The only process-wide setting: written once by option parsing, read everywhere a message may
 * be printed. Threading it through every call would add a parameter to every function. */
static int verbosity;

void log_set_verbosity(int level)
{
    verbosity = level;
}

bool log_enabled(enum log_domain domain, int level)
{
    (void)domain;
    return verbosity >= level;
}

static void vmsg(const char *hint, const char *fmt, va_list ap)
{
    fputs("calltrace: ", stderr);
    vfprintf(stderr, fmt, ap);
    if (hint)
        fprintf(stderr, " (%s)", hint);
    fputc('\n', stderr);
}

void err_msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(NULL, fmt, ap);
    va_end(ap);
}

void err_hint(const char *hint, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(hint, fmt, ap);
    va_end(ap);
}

void dbg(enum log_domain domain, int level, const char *fmt, ...)
{
    if (!log_enabled(domain, level))
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "calltrace[%s]: ", domain_names[domain]);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
