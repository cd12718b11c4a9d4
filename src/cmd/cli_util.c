#include "cmd/cli_util.h"
#include "record/clock.h"

#include <bsd/stdlib.h>
#include <bsd/string.h>
#include <cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/json_string.h"
#include "util/log.h"
#include "util/text_escape.h"

int cli_choice(const char *opt, const char *value, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(value, names[i]) == 0)
            return (int)i;
    char choices[256] = "";
    for (size_t i = 0; i < n; i++) {
        strlcat(choices, i ? ", " : "one of ", sizeof(choices));
        strlcat(choices, names[i], sizeof(choices));
    }
    err_hint(choices, "%s %s: not one of its values", opt, value);
    return -1;
}

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

int cli_one_run(int argc, char **argv, const char *cmd, const char **run)
{
    if (optind < argc - 1) {
        err_hint("give one run directory", "%s: too many arguments", cmd);
        return -1;
    }
    *run = optind < argc ? argv[optind] : NULL;
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

static int add_glob(const char ***globs, size_t *n, const char *glob)
{
    const char **g = reallocarray(*globs, *n + 1, sizeof(*g));
    if (!g) {
        err_msg("out of memory");
        return -1;
    }
    g[(*n)++] = glob;
    *globs = g;
    return 0;
}

int cli_filter_option(struct profile_filter *f, int c, const char *arg)
{
    long long n;
    switch (c) {
    case 'F':
        return add_glob(&f->include, &f->ninclude, arg) < 0 ? -1 : 1;
    case 'N':
        return add_glob(&f->exclude, &f->nexclude, arg) < 0 ? -1 : 1;
    case 'D':
        if (cli_number("--depth", arg, 1, UINT32_MAX, &n) < 0)
            return -1;
        f->max_depth = (uint32_t)n;
        return 1;
    case 't':
        if (cli_number("--tid", arg, 1, UINT32_MAX, &n) < 0)
            return -1;
        f->tid = (uint32_t)n;
        return 1;
    default:
        return 0;
    }
}

void cli_filter_free(struct profile_filter *f)
{
    free(f->include);
    free(f->exclude);
    f->include = f->exclude = NULL;
    f->ninclude = f->nexclude = 0;
}

void cli_put_csv_text(const char *name)
{
    char *escaped = text_escape_dup(name, TEXT_NAME);
    for (const char *c = escaped ? escaped : "?"; *c; c++) {
        if (*c == '"')
            putchar('"');
        putchar(*c);
    }
    free(escaped);
}

void cli_put_csv_field(const char *name)
{
    putchar('"');
    cli_put_csv_text(name);
    putchar('"');
}

int cli_put_json(cJSON *doc)
{
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    char *safe = text ? json_text_safe(text) : NULL;
    free(text);
    if (!safe) {
        err_msg("out of memory");
        return -1;
    }
    puts(safe);
    free(safe);
    return 0;
}

bool cli_srcline(struct source_files *sf, const struct replay *r, uint32_t sym,
                 struct source_line *where)
{
    const struct replay_sym *s = replay_sym(r, sym);
    return source_line_of(sf, s->image, replay_sym_image(r, sym), s->link_addr, s->name, where);
}

void cli_put_srcline(FILE *out, const char *before, const struct source_line *where,
                     const char *after)
{
    fputs(before, out);
    fputs_name(where->file, out);
    fprintf(out, ":%u%s", where->line, after);
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
