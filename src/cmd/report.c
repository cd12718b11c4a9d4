/* calltrace report [RUN]: a line per function with its calls and times, read from the binary
 * record (never from trace.json, which can be gigabytes). */
#include <bsd/string.h>
#include <cJSON.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/profile.h"
#include "analysis/run_select.h"
#include "cmd/cli_util.h"
#include "record/clock.h"
#include "cmd/commands.h"
#include "util/duration.h"
#include "util/log.h"

enum report_format { FMT_TABLE, FMT_CSV, FMT_JSON };

enum sort_key { SORT_TOTAL, SORT_SELF, SORT_CALLS, SORT_AVG, SORT_MIN, SORT_MAX, SORT_NAME };

static const char *const sort_names[] = {"total", "self", "calls", "avg", "min", "max", "name"};
static const char *const format_names[] = {"table", "csv", "json"};

struct report_cli {
    const char *run;
    enum sort_key sort;
    enum report_format format;
    long long top; /* 0: all */
    uint32_t tid;
};

/* What the sort comparator needs: qsort passes no context. */
struct report_row {
    uint32_t sym;
    const struct func_stats *s;
    const char *name;
    enum sort_key key;
};

static void usage(FILE *f)
{
    fputs("usage: calltrace report [OPTIONS] [RUN]\n"
          "A line per function of RUN (default: the newest run directory here): calls,\n"
          "total (inclusive) time, self time, average, min and max time of one call.\n"
          "\n"
          "  -s, --sort KEY       total (default), self, calls, avg, min, max or name\n"
          "  -n, --top N          only the first N lines\n"
          "  -t, --tid TID        only the calls of thread TID\n"
          "  -f, --format FORMAT  table (default), csv or json (times in ns)\n"
          "  -h, --help           show this help\n"
          "\n"
          "A recursive function's total counts its outermost calls only; self time is a\n"
          "call's time minus that of the calls it made.\n",
          f);
}

static int pick(const char *value, const char *const *names, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(value, names[i]) == 0)
            return (int)i;
    char choices[256] = "";
    for (size_t i = 0; i < n; i++) {
        strlcat(choices, i ? ", " : "one of ", sizeof(choices));
        strlcat(choices, names[i], sizeof(choices));
    }
    err_hint(choices, "%s '%s': unknown %s", what, value, what + 2);
    return -1;
}

static int parse_args(int argc, char **argv, struct report_cli *cli)
{
    static const struct option longopts[] = {
        {"sort", required_argument, NULL, 's'}, {"top", required_argument, NULL, 'n'},
        {"tid", required_argument, NULL, 't'},  {"format", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0},
    };
    int c, v;
    long long n;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":s:n:t:f:h", longopts, NULL)) != -1) {
        switch (c) {
        case 's':
            if ((v = pick(optarg, sort_names, 7, "--sort key")) < 0)
                return -1;
            cli->sort = (enum sort_key)v;
            break;
        case 'f':
            if ((v = pick(optarg, format_names, 3, "--format format")) < 0)
                return -1;
            cli->format = (enum report_format)v;
            break;
        case 'n':
            if (cli_number("--top", optarg, 1, LLONG_MAX, &cli->top) < 0)
                return -1;
            break;
        case 't':
            if (cli_number("--tid", optarg, 1, UINT32_MAX, &n) < 0)
                return -1;
            cli->tid = (uint32_t)n;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            return cli_bad_option(argv, c, "report");
        }
    }
    if (optind < argc - 1) {
        err_hint("give one run directory", "report: too many arguments");
        return -1;
    }
    cli->run = optind < argc ? argv[optind] : NULL;
    return 0;
}

static int64_t avg_of(const struct func_stats *s)
{
    return s->calls ? s->sum_ns / (int64_t)s->calls : 0;
}

static int64_t key_value(const struct report_row *r)
{
    switch (r->key) {
    case SORT_SELF:
        return r->s->self_ns;
    case SORT_CALLS:
        return (int64_t)r->s->calls;
    case SORT_AVG:
        return avg_of(r->s);
    case SORT_MIN:
        return r->s->min_ns;
    case SORT_MAX:
        return r->s->max_ns;
    default:
        return r->s->total_ns;
    }
}

/* Biggest first, names A-Z; ties by name so the order never depends on the record's. */
static int row_order(const void *a, const void *b)
{
    const struct report_row *x = a, *y = b;
    if (x->key != SORT_NAME) {
        int64_t vx = key_value(x), vy = key_value(y);
        if (vx != vy)
            return vx > vy ? -1 : 1;
    }
    int c = strcmp(x->name, y->name);
    return c ? c : (x->sym > y->sym) - (x->sym < y->sym);
}

static struct report_row *make_rows(const struct profile *p, enum sort_key key, size_t *n)
{
    struct report_row *rows = calloc(p->replay.nsyms + 1, sizeof(*rows));
    *n = 0;
    if (!rows)
        return NULL;
    for (uint32_t s = 0; s < p->replay.nsyms; s++) {
        if (p->stats[s].calls)
            rows[(*n)++] = (struct report_row){s, &p->stats[s], p->replay.syms[s].name, key};
    }
    qsort(rows, *n, sizeof(*rows), row_order);
    return rows;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void print_table(const struct profile *p, const struct report_row *rows, size_t n)
{
    bool images = p->replay.nimages > 1;
    printf("%10s %12s %12s %12s %12s %12s  %s\n", "calls", "total", "self", "avg", "min", "max",
           "function");
    for (size_t i = 0; i < n; i++) {
        const struct func_stats *s = rows[i].s;
        char t[5][32];
        printf("%10llu %12s %12s %12s %12s %12s  %s", (unsigned long long)s->calls,
               duration_format(t[0], 32, s->total_ns), duration_format(t[1], 32, s->self_ns),
               duration_format(t[2], 32, avg_of(s)), duration_format(t[3], 32, s->min_ns),
               duration_format(t[4], 32, s->max_ns), rows[i].name);
        if (images)
            printf(" [%s]", base_name(replay_sym_image(&p->replay, rows[i].sym)));
        if (s->unfinished)
            printf(" (%llu unfinished)", (unsigned long long)s->unfinished);
        putchar('\n');
    }
}

/* RFC 4180: C++ names hold commas. */
static void put_csv_field(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"')
            putchar('"');
        putchar(*s);
    }
    putchar('"');
}

static void print_csv(const struct profile *p, const struct report_row *rows, size_t n)
{
    puts("function,image,calls,total_ns,self_ns,avg_ns,min_ns,max_ns,unfinished");
    for (size_t i = 0; i < n; i++) {
        const struct func_stats *s = rows[i].s;
        put_csv_field(rows[i].name);
        putchar(',');
        put_csv_field(replay_sym_image(&p->replay, rows[i].sym));
        printf(",%llu,%lld,%lld,%lld,%lld,%lld,%llu\n", (unsigned long long)s->calls,
               (long long)s->total_ns, (long long)s->self_ns, (long long)avg_of(s),
               (long long)s->min_ns, (long long)s->max_ns, (unsigned long long)s->unfinished);
    }
}

static int print_json(const struct profile *p, const char *run, const struct report_row *rows,
                      size_t n)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "run", run);
    cJSON_AddNumberToObject(root, "events", (double)p->replay.events);
    cJSON_AddBoolToObject(root, "complete", p->replay.complete && !p->replay.damaged);
    cJSON_AddNumberToObject(root, "dropped_calls", (double)p->replay.dropped);
    cJSON *funcs = cJSON_AddArrayToObject(root, "functions");
    for (size_t i = 0; funcs && i < n; i++) {
        const struct func_stats *s = rows[i].s;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(funcs, o);
        cJSON_AddStringToObject(o, "name", rows[i].name);
        cJSON_AddStringToObject(o, "image", replay_sym_image(&p->replay, rows[i].sym));
        cJSON_AddNumberToObject(o, "calls", (double)s->calls);
        cJSON_AddNumberToObject(o, "total_ns", (double)s->total_ns);
        cJSON_AddNumberToObject(o, "self_ns", (double)s->self_ns);
        cJSON_AddNumberToObject(o, "avg_ns", (double)avg_of(s));
        cJSON_AddNumberToObject(o, "min_ns", (double)s->min_ns);
        cJSON_AddNumberToObject(o, "max_ns", (double)s->max_ns);
        cJSON_AddNumberToObject(o, "unfinished", (double)s->unfinished);
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) {
        err_msg("out of memory");
        return -1;
    }
    puts(text);
    free(text);
    return 0;
}

int cmd_report(int argc, char **argv)
{
    uint64_t start_ns = clock_mono_ns();
    struct report_cli cli = {.sort = SORT_TOTAL, .format = FMT_TABLE};
    if (parse_args(argc, argv, &cli) < 0)
        return 2;
    char run[PATH_MAX], record[PATH_MAX];
    if (run_select(cli.run, run, sizeof(run), record, sizeof(record)) < 0)
        return 1;
    struct profile_filter filter = {.tid = cli.tid};
    struct profile p;
    int rc = profile_build(&p, record, &filter, false);
    if (rc == 0 && cli.tid && !p.saw_tid)
        rc = cli_missing_tid(&p.replay, run, cli.tid);
    size_t n = 0;
    struct report_row *rows = rc == 0 ? make_rows(&p, cli.sort, &n) : NULL;
    if (rc == 0 && !rows) {
        err_msg("out of memory");
        rc = -1;
    }
    if (cli.top && (size_t)cli.top < n)
        n = (size_t)cli.top;
    if (rc == 0 && cli.format == FMT_TABLE)
        print_table(&p, rows, n);
    else if (rc == 0 && cli.format == FMT_CSV)
        print_csv(&p, rows, n);
    else if (rc == 0)
        rc = print_json(&p, run, rows, n);
    if (rc == 0)
        run_warn_damaged(run, p.replay.damaged);
    if (rc == 0)
        run_warn_dropped(run, p.replay.dropped);
    if (rc == 0 && fflush(stdout) != 0) {
        err_msg("writing the report: %m");
        rc = -1;
    }
    cli_print_stats("report", p.replay.events, start_ns);
    free(rows);
    profile_free(&p);
    return rc == 0 ? 0 : 1;
}
