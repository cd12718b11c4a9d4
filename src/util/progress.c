#include "util/progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void progress_init(struct progress *p, bool quiet)
{
    *p = (struct progress){.enabled = !quiet && isatty(STDERR_FILENO)};
    p->start_ns = p->last_ns = now_ns();
}

bool progress_due(struct progress *p)
{
    if (!p || !p->enabled)
        return false;
    uint64_t now = now_ns();
    if (now - p->start_ns < PROGRESS_AFTER_NS || now - p->last_ns < PROGRESS_EVERY_NS)
        return false;
    p->last_ns = now;
    return true;
}

void progress_show(struct progress *p, const char *fmt, ...)
{
    char line[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    /* \r and erase-to-end: the line rewrites itself in place */
    fprintf(stderr, "\rcalltrace: %s\033[K", line);
    fflush(stderr);
    p->shown = true;
}

void progress_end(struct progress *p)
{
    if (p && p->shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        p->shown = false;
    }
}

double progress_seconds(const struct progress *p)
{
    return (double)(now_ns() - p->start_ns) / 1e9;
}
