#include "cmd/cli_util.h"
#include "record/clock.h"

#include <bsd/stdlib.h>
#include <bsd/string.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/duration.h"
#include "util/log.h"

int cli_number(const char *opt, const char *value, long long min, long long max, long long *out)
{
    const char *why = NULL;
    *out = strtonum(value, min, max, &why);
    if (why) {
        err_hint("see --help", "%s '%s': %s", opt, value, why);
        return -1;
    }
    return 0;
}

int cli_bad_option(char **argv, int c, const char *cmd)
{
    char hint[64];
    snprintf(hint, sizeof(hint), "see calltrace %s --help", cmd);
    if (c == ':')
        err_hint(hint, "%s: missing value", argv[optind - 1]);
    else if (optopt)
        err_hint(hint, "-%c: unknown option", optopt);
    else
        err_hint(hint, "%s: unknown option", argv[optind - 1]);
    return -1;
}

int cli_missing_tid(const struct replay *r, const char *run, uint32_t tid)
{
    char list[256] = "";
    size_t shown = 0;
    ADDR_MAP_FOREACH(&r->calls.threads, slot)
    {
        const struct call_thread *t = slot->value;
        char one[24];
        if (shown++ == 16) {
            strlcat(list, ", ...", sizeof(list));
            break;
        }
        snprintf(one, sizeof(one), "%s%u", shown > 1 ? ", " : "its threads: ", t->tid);
        strlcat(list, one, sizeof(list));
    }
    err_hint(list[0] ? list : "the run has no threads", "--tid %u: no calls on that thread in %s",
             tid, run);
    return -1;
}

/* VmHWM: the peak resident set, which is what "memory independent of the run" is about. */
static long peak_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

void cli_print_stats(const char *cmd, uint64_t events, uint64_t start_ns)
{
    if (!getenv("CALLTRACE_STATS"))
        return;
    double secs = (double)(clock_mono_ns() - start_ns) / 1e9;
    fprintf(stderr, "calltrace: %s: %llu events in %.3f s, %.0f events/s, peak RSS %ld KiB\n", cmd,
            (unsigned long long)events, secs, secs > 0 ? (double)events / secs : 0.0,
            peak_rss_kib());
}

int cli_trace_format(const char *arg, enum trace_format *format)
{
    if (trace_format_parse(arg, format) == 0)
        return 0;
    err_hint("give json, perfetto or both", "--format %s: not a trace format", arg);
    return -1;
}

static int window_time(const char *opt, const char *arg, int64_t *ns)
{
    uint64_t v;
    if (duration_parse(arg, &v) < 0) {
        err_hint("give a time from the run's start with a unit: 1.5s, 250ms, 40us",
                 "%s %s: not a time", opt, arg);
        return -1;
    }
    *ns = (int64_t)v;
    return 0;
}

static int window_glob(struct call_window *w, int c, const char *glob)
{
    struct func_filter *f = &w->filter;
    const char **list = c == 'F' ? f->only : f->exclude;
    size_t *n = c == 'F' ? &f->nonly : &f->nexclude;
    if (!*glob) {
        err_msg("-%c: empty pattern", c);
        return -1;
    }
    if (*n == FUNC_FILTER_MAX) {
        err_hint("combine them into fewer patterns", "-%c: more than %d patterns", c,
                 FUNC_FILTER_MAX);
        return -1;
    }
    list[(*n)++] = glob;
    return 0;
}

int cli_window_option(struct call_window *w, int c, const char *arg)
{
    long long n;
    switch (c) {
    case CLI_WINDOW_FROM:
        return window_time("--from", arg, &w->from_ns) < 0 ? -1 : 1;
    case CLI_WINDOW_TO:
        if (window_time("--to", arg, &w->to_ns) < 0)
            return -1;
        if (!w->to_ns) {
            err_hint("give a time after the run's start", "--to %s: the window would be empty",
                     arg);
            return -1;
        }
        return 1;
    case CLI_WINDOW_TID:
        if (cli_number("--tid", arg, 1, UINT32_MAX, &n) < 0)
            return -1;
        w->tid = (uint32_t)n;
        return 1;
    case CLI_WINDOW_MAX_CALLS:
        if (cli_number("--max-calls", arg, 1, INT64_MAX, &n) < 0)
            return -1;
        w->max_calls = (uint64_t)n;
        return 1;
    case 'F':
    case 'N':
        return window_glob(w, c, arg) < 0 ? -1 : 1;
    default:
        return 0;
    }
}

int cli_window_check(const struct call_window *w)
{
    if (w->to_ns && w->from_ns > w->to_ns) {
        err_hint("give --from before --to", "--from is after --to: the window is empty");
        return -1;
    }
    return 0;
}
