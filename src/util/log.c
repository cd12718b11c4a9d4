#include "util/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/text_escape.h"

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

/* The message of fmt, escaped as a whole: it may quote any name, path or string that
 * calltrace did not choose, and a terminal must not take their bytes as commands
 * (util/text_escape.h). NULL when out of memory. */
static char *escaped_message(const char *fmt, va_list ap)
{
    int saved_errno = errno; /* for %m */
    char small[1024], *text = small;
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    if (n >= (int)sizeof(small) && (text = malloc((size_t)n + 1))) {
        errno = saved_errno;
        vsnprintf(text, (size_t)n + 1, fmt, again);
    }
    va_end(again);
    char *escaped = n < 0 ? NULL : text_escape_dup(text ? text : small, TEXT_NAME);
    if (text != small)
        free(text);
    errno = saved_errno; /* callers may still report it */
    return escaped;
}

/* One write: stderr is unbuffered, and other processes may write to it too. */
static void vmsg(const char *hint, const char *fmt, va_list ap)
{
    char *msg = escaped_message(fmt, ap);
    char *why = hint ? text_escape_dup(hint, TEXT_NAME) : NULL;
    fprintf(stderr, "calltrace: %s%s%s%s\n", msg ? msg : fmt, why ? " (" : "", why ? why : "",
            why ? ")" : "");
    free(why);
    free(msg);
}

void err_msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(NULL, fmt, ap);
    va_end(ap);
}

void note_msg(const char *fmt, ...)
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
    char *msg = escaped_message(fmt, ap);
    fprintf(stderr, "calltrace[%s]: %s\n", domain_names[domain], msg ? msg : fmt);
    free(msg);
    va_end(ap);
}
