#include "cmd/cli_util.h"
#include "record/clock.h"

#include <bsd/stdlib.h>
#include <bsd/string.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
