/* calltrace report [RUN]: a line per function with its calls and times, read from the binary
 * record (never from trace.json, which can be gigabytes); with --hist FUNC, the distribution
 * of FUNC's durations instead. */
#include <bsd/string.h>
#include <cJSON.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "analysis/call_site.h"
#include "analysis/profile.h"
#include "analysis/run_select.h"
#include "analysis/source_file.h"
#include "cmd/cli_util.h"
#include "record/clock.h"
#include "cmd/commands.h"
#include "util/duration.h"
#include "util/json_string.h"
#include "util/log.h"
#include "util/text_escape.h"

enum report_format { FMT_TABLE, FMT_CSV, FMT_JSON };

enum sort_key { SORT_TOTAL, SORT_SELF, SORT_CALLS, SORT_AVG, SORT_MIN, SORT_MAX, SORT_NAME };

static const char *const sort_names[] = {"total", "self", "calls", "avg", "min", "max", "name"};
static const char *const format_names[] = {"table", "csv", "json"};

struct report_cli {
    const char *run;
    enum sort_key sort;
    enum report_format format;
    long long top;    /* 0: all */
    const char *hist; /* --hist: a function's name or a glob */
    bool srcline;
    bool callers; /* --callers: each function's most frequent call sites */
    struct profile_filter filter;
};

/* What the writers of a report share. */
struct report_ctx {
    const struct report_cli *cli;
    struct profile *p;
    struct source_files sources; /* --srcline, --callers */
    struct profile_site **sites; /* --callers: by symbol, most calls first */
    size_t nsites;
};

/* How many call sites --callers shows per function. */
#define CALLERS_SHOWN 3

/* One line calls of a function were made from (several return addresses may share it), or the
 * calls made from code of no line (known false). */
struct caller_line {
    bool known;
    struct source_line where;
    uint64_t calls;
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
          "  -f, --format FORMAT  table (default), csv or json (times in ns; both also give\n"
          "                       the 50th, 90th and 99th percentile of a call's time)\n"
          "      --hist FUNC      the distribution of FUNC's call times instead: power-of-two\n"
          "                       buckets (as bpftrace's hist) and p50, p90, p99, max; FUNC is\n"
          "                       a name or a glob (one histogram per function it matches)\n"
          "      --srcline        where each function is defined (file:line, from DWARF)\n"
          "      --callers        each function's 3 most frequent call sites (file:line, from\n"
          "                       DWARF) under it, with their calls: a run recorded with\n"
          "                       --callsites; table and json only\n"
          "  -F, --include GLOB   only functions whose name matches GLOB (repeatable)\n"
          "  -N, --exclude GLOB   leave out functions whose name matches GLOB (repeatable)\n"
          "  -D, --depth N        only calls at most N deep (1: the outermost calls)\n"
          "  -t, --tid TID        only the calls of thread TID\n"
          "  -h, --help           show this help\n"
          "\n"
          "A recursive function's total counts its outermost calls only; self time is a\n"
          "call's time minus that of the calls it made (and of the left-out calls it made).\n"
          "Percentiles are read from a histogram of 64 buckets per power of two: at most\n"
          "1.6% above the exact value.\n",
          f);
}

enum { OPT_HIST = 0x600, OPT_SRCLINE, OPT_CALLERS };

static int parse_args(int argc, char **argv, struct report_cli *cli)
{
    static const struct option longopts[] = {
        {"sort", required_argument, NULL, 's'},
        {"top", required_argument, NULL, 'n'},
        {"format", required_argument, NULL, 'f'},
        {"hist", required_argument, NULL, OPT_HIST},
        {"srcline", no_argument, NULL, OPT_SRCLINE},
        {"callers", no_argument, NULL, OPT_CALLERS},
        CLI_FILTER_LONG_OPTIONS,
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c, v;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":s:n:f:" CLI_FILTER_OPTS "h", longopts, NULL)) != -1) {
        int taken = cli_filter_option(&cli->filter, c, optarg);
        if (taken < 0)
            return -1;
        if (taken)
            continue;
        switch (c) {
        case 's':
            if ((v = cli_choice("--sort", optarg, sort_names, 7)) < 0)
                return -1;
            cli->sort = (enum sort_key)v;
            break;
        case 'f':
            if ((v = cli_choice("--format", optarg, format_names, 3)) < 0)
                return -1;
            cli->format = (enum report_format)v;
            break;
        case 'n':
            if (cli_number("--top", optarg, 1, LLONG_MAX, &cli->top) < 0)
                return -1;
            break;
        case OPT_HIST:
            cli->hist = optarg;
            break;
        case OPT_SRCLINE:
            cli->srcline = true;
            break;
        case OPT_CALLERS:
            cli->callers = true;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            return cli_bad_option(argv, c, "report");
        }
    }
    if (cli_one_run(argc, argv, "report", &cli->run) < 0)
        return -1;
    if (cli->callers && (cli->format == FMT_CSV || cli->hist)) {
        err_hint("use the table or -f json", "report: --callers has no room in %s",
                 cli->hist ? "--hist" : "csv");
        return -1;
    }
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

/* --srcline: where sym is defined, or false. */
static bool srcline_of(struct report_ctx *rc, uint32_t sym, struct source_line *where)
{
    return rc->cli->srcline && cli_srcline(&rc->sources, &rc->p->replay, sym, where);
}

/* The first of sym's call sites in rc->sites (sorted by symbol), or rc->nsites. */
static size_t first_site(const struct report_ctx *rc, uint32_t sym)
{
    size_t lo = 0, hi = rc->nsites;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rc->sites[mid]->sym < sym)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool same_line(const struct caller_line *c, bool known, const struct source_line *where)
{
    return c->known == known &&
           (!known || (c->where.line == where->line && strcmp(c->where.file, where->file) == 0));
}

static int caller_order(const void *a, const void *b)
{
    const struct caller_line *x = a, *y = b;
    if (x->calls != y->calls)
        return x->calls > y->calls ? -1 : 1;
    if (x->known != y->known)
        return x->known ? -1 : 1;
    int c = x->known ? strcmp(x->where.file, y->where.file) : 0;
    return c ? c : (x->where.line > y->where.line) - (x->where.line < y->where.line);
}

/* --callers: sym's call sites merged by line, most calls first, into *out (caller frees);
 * their number, or -1 when out of memory. */
static ssize_t callers_of(struct report_ctx *rc, uint32_t sym, struct caller_line **out)
{
    size_t first = first_site(rc, sym), end = first, n = 0;
    while (end < rc->nsites && rc->sites[end]->sym == sym)
        end++;
    struct caller_line *lines = calloc(end - first + 1, sizeof(*lines));
    if (!(*out = lines))
        return -1;
    for (size_t i = first; i < end; i++) {
        const struct profile_site *site = rc->sites[i];
        struct source_line where = {0};
        bool known =
            call_site_line(&rc->sources, &rc->p->replay, site->pid, site->ret_addr, &where);
        size_t k = 0;
        while (k < n && !same_line(&lines[k], known, &where))
            k++;
        if (k == n)
            lines[n++] = (struct caller_line){known, where, 0};
        lines[k].calls += site->calls;
    }
    qsort(lines, n, sizeof(*lines), caller_order);
    return (ssize_t)n;
}

/* --callers in the table: a line per call site under the function's, its calls in the calls
 * column, "called from FILE:LINE" in the function column. */
static int print_callers_table(struct report_ctx *rc, uint32_t sym)
{
    struct caller_line *lines;
    ssize_t n = callers_of(rc, sym, &lines);
    for (ssize_t i = 0; i < n && i < CALLERS_SHOWN; i++) {
        printf("%10llu %66s", (unsigned long long)lines[i].calls, "");
        if (lines[i].known)
            cli_put_srcline(stdout, "called from ", &lines[i].where, "\n");
        else
            puts("called from code of no line (untraced, or without DWARF)");
    }
    if (n > CALLERS_SHOWN)
        printf("%10s %66s(%zd more call sites)\n", "", "", n - CALLERS_SHOWN);
    free(lines);
    return n < 0 ? -1 : 0;
}

/* --callers in json: "callers": [{"file", "line", "calls"}], a site of no line without file
 * and line. */
static int add_callers_json(struct report_ctx *rc, cJSON *o, uint32_t sym)
{
    struct caller_line *lines;
    ssize_t n = callers_of(rc, sym, &lines);
    cJSON *list = n >= 0 ? cJSON_AddArrayToObject(o, "callers") : NULL;
    for (ssize_t i = 0; list && i < n && i < CALLERS_SHOWN; i++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddItemToArray(list, c);
        if (lines[i].known) {
            cJSON_AddStringToObject(c, "file", lines[i].where.file);
            cJSON_AddNumberToObject(c, "line", lines[i].where.line);
        }
        cJSON_AddNumberToObject(c, "calls", (double)lines[i].calls);
    }
    if (n > CALLERS_SHOWN)
        cJSON_AddNumberToObject(o, "more_call_sites", (double)(n - CALLERS_SHOWN));
    free(lines);
    return n < 0 ? -1 : 0;
}

static int print_table(struct report_ctx *rc, const struct report_row *rows, size_t n)
{
    const struct profile *p = rc->p;
    bool images = p->replay.nimages > 1;
    printf("%10s %12s %12s %12s %12s %12s  %s\n", "calls", "total", "self", "avg", "min", "max",
           "function");
    for (size_t i = 0; i < n; i++) {
        const struct func_stats *s = rows[i].s;
        char t[5][32];
        printf("%10llu %12s %12s %12s %12s %12s  ", (unsigned long long)s->calls,
               duration_format(t[0], 32, s->total_ns), duration_format(t[1], 32, s->self_ns),
               duration_format(t[2], 32, avg_of(s)), duration_format(t[3], 32, s->min_ns),
               duration_format(t[4], 32, s->max_ns));
        fputs_name(rows[i].name, stdout);
        if (images) {
            fputs(" [", stdout);
            fputs_name(base_name(replay_sym_image(&p->replay, rows[i].sym)), stdout);
            putchar(']');
        }
        if (s->unfinished)
            printf(" (%llu unfinished)", (unsigned long long)s->unfinished);
        if (replay_sym(&p->replay, rows[i].sym)->breakpoint)
            fputs(" (breakpoint)", stdout);
        struct source_line where;
        if (srcline_of(rc, rows[i].sym, &where))
            cli_put_srcline(stdout, " at ", &where, "");
        putchar('\n');
        if (rc->cli->callers && print_callers_table(rc, rows[i].sym) < 0)
            return -1;
    }
    return 0;
}

static int64_t percentile_of(const struct profile *p, uint32_t sym, double pct)
{
    return p->hists && p->hists[sym] ? latency_percentile(p->hists[sym], pct) : 0;
}

static void print_csv(struct report_ctx *rc, const struct report_row *rows, size_t n)
{
    const struct profile *p = rc->p;
    printf("function,image,calls,total_ns,self_ns,avg_ns,min_ns,max_ns,unfinished,p50_ns,p90_ns,"
           "p99_ns,breakpoint%s\n",
           rc->cli->srcline ? ",file,line" : "");
    for (size_t i = 0; i < n; i++) {
        const struct func_stats *s = rows[i].s;
        cli_put_csv_field(rows[i].name);
        putchar(',');
        cli_put_csv_field(replay_sym_image(&p->replay, rows[i].sym));
        printf(",%llu,%lld,%lld,%lld,%lld,%lld,%llu,%lld,%lld,%lld", (unsigned long long)s->calls,
               (long long)s->total_ns, (long long)s->self_ns, (long long)avg_of(s),
               (long long)s->min_ns, (long long)s->max_ns, (unsigned long long)s->unfinished,
               (long long)percentile_of(p, rows[i].sym, 50),
               (long long)percentile_of(p, rows[i].sym, 90),
               (long long)percentile_of(p, rows[i].sym, 99));
        printf(",%d", replay_sym(&p->replay, rows[i].sym)->breakpoint);
        struct source_line where;
        if (srcline_of(rc, rows[i].sym, &where)) {
            putchar(',');
            cli_put_csv_field(where.file);
            printf(",%u", where.line);
        } else if (rc->cli->srcline) {
            fputs(",,", stdout);
        }
        putchar('\n');
    }
}

static cJSON *json_head(const struct profile *p, const char *run)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "run", run);
    cJSON_AddNumberToObject(root, "events", (double)p->replay.events);
    cJSON_AddBoolToObject(root, "complete", p->replay.complete && !p->replay.damaged);
    cJSON_AddNumberToObject(root, "dropped_calls", (double)p->replay.dropped);
    return root;
}

static int print_json(struct report_ctx *rc, const char *run, const struct report_row *rows,
                      size_t n)
{
    const struct profile *p = rc->p;
    cJSON *root = json_head(p, run);
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
        cJSON_AddNumberToObject(o, "p50_ns", (double)percentile_of(p, rows[i].sym, 50));
        cJSON_AddNumberToObject(o, "p90_ns", (double)percentile_of(p, rows[i].sym, 90));
        cJSON_AddNumberToObject(o, "p99_ns", (double)percentile_of(p, rows[i].sym, 99));
        cJSON_AddBoolToObject(o, "breakpoint", replay_sym(&p->replay, rows[i].sym)->breakpoint);
        struct source_line where;
        if (srcline_of(rc, rows[i].sym, &where)) {
            cJSON_AddStringToObject(o, "file", where.file);
            cJSON_AddNumberToObject(o, "line", where.line);
        }
        if (rc->cli->callers && add_callers_json(rc, o, rows[i].sym) < 0) {
            cJSON_Delete(root);
            return -1;
        }
    }
    return cli_put_json(root);
}

/* --hist: does sym's function answer to FUNC, by name (as it is or as report prints it) or as a
 * glob? */
static bool hist_wanted(const struct report_cli *cli, const char *name)
{
    if (strcmp(name, cli->hist) == 0 || fnmatch(cli->hist, name, 0) == 0)
        return true;
    char *shown = text_escape_dup(name, TEXT_NAME); /* FUNC as report prints it */
    bool same = shown && strcmp(shown, cli->hist) == 0;
    free(shown);
    return same;
}

/* bpftrace's bucket bounds: 512, 1K, 2M... (powers of 1024 named). */
static const char *power_label(char *buf, size_t len, uint64_t v)
{
    static const char units[] = "KMGTPE";
    unsigned u = 0;
    while (v >= 1024 && !(v & 1023)) {
        v >>= 10;
        u++;
    }
    if (u)
        snprintf(buf, len, "%llu%c", (unsigned long long)v, units[u - 1]);
    else
        snprintf(buf, len, "%llu", (unsigned long long)v);
    return buf;
}

#define HIST_BAR 52

static void print_hist_table(const struct replay *r, uint32_t sym, const struct latency_hist *h)
{
    uint64_t counts[LATENCY_LOG2_BUCKETS], most = 0;
    unsigned first, last;
    latency_log2_counts(h, counts, &first, &last);
    for (unsigned k = first; k <= last; k++)
        most = counts[k] > most ? counts[k] : most;
    fputs_name(replay_sym(r, sym)->name, stdout);
    printf(": %llu calls, their durations in ns\n", (unsigned long long)h->count);
    for (unsigned k = first; k <= last; k++) {
        char lo[24], hi[24], label[56];
        if (k < 2)
            snprintf(label, sizeof(label), "[%s]", power_label(lo, sizeof(lo), k));
        else
            snprintf(label, sizeof(label), "[%s, %s)",
                     power_label(lo, sizeof(lo), latency_log2_low(k)),
                     power_label(hi, sizeof(hi), latency_log2_low(k + 1)));
        unsigned bar = most ? (unsigned)(counts[k] * HIST_BAR / most) : 0;
        printf("%-20s %8llu |%.*s%*s|\n", label, (unsigned long long)counts[k], (int)bar,
               "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@", (int)(HIST_BAR - bar), "");
    }
    char t[4][32];
    printf("p50 %s  p90 %s  p99 %s  max %s\n", duration_format(t[0], 32, latency_percentile(h, 50)),
           duration_format(t[1], 32, latency_percentile(h, 90)),
           duration_format(t[2], 32, latency_percentile(h, 99)),
           duration_format(t[3], 32, h->max_ns));
}

static void print_hist_csv(const struct replay *r, uint32_t sym, const struct latency_hist *h)
{
    uint64_t counts[LATENCY_LOG2_BUCKETS];
    unsigned first, last;
    latency_log2_counts(h, counts, &first, &last);
    for (unsigned k = first; k <= last; k++) {
        cli_put_csv_field(replay_sym(r, sym)->name);
        printf(",%llu,%llu,%llu\n", (unsigned long long)latency_log2_low(k),
               (unsigned long long)latency_log2_low(k + 1), (unsigned long long)counts[k]);
    }
}

static cJSON *hist_json(const struct replay *r, uint32_t sym, const struct latency_hist *h)
{
    uint64_t counts[LATENCY_LOG2_BUCKETS];
    unsigned first, last;
    latency_log2_counts(h, counts, &first, &last);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", replay_sym(r, sym)->name);
    cJSON_AddStringToObject(o, "image", replay_sym_image(r, sym));
    cJSON_AddNumberToObject(o, "calls", (double)h->count);
    cJSON_AddNumberToObject(o, "min_ns", (double)h->min_ns);
    cJSON_AddNumberToObject(o, "p50_ns", (double)latency_percentile(h, 50));
    cJSON_AddNumberToObject(o, "p90_ns", (double)latency_percentile(h, 90));
    cJSON_AddNumberToObject(o, "p99_ns", (double)latency_percentile(h, 99));
    cJSON_AddNumberToObject(o, "max_ns", (double)h->max_ns);
    cJSON *buckets = cJSON_AddArrayToObject(o, "buckets");
    for (unsigned k = first; buckets && k <= last; k++) {
        cJSON *b = cJSON_CreateObject();
        cJSON_AddItemToArray(buckets, b);
        cJSON_AddNumberToObject(b, "low_ns", (double)latency_log2_low(k));
        cJSON_AddNumberToObject(b, "high_ns", (double)latency_log2_low(k + 1));
        cJSON_AddNumberToObject(b, "count", (double)counts[k]);
    }
    return o;
}

/* The histograms of the functions --hist names, in the rows' order (by name). */
static int print_hists(struct report_ctx *rc, const char *run, const struct report_row *rows,
                       size_t n)
{
    const struct profile *p = rc->p;
    const struct replay *r = &p->replay;
    cJSON *root = rc->cli->format == FMT_JSON ? json_head(p, run) : NULL;
    cJSON *list = root ? cJSON_AddArrayToObject(root, "histograms") : NULL;
    size_t shown = 0;
    if (rc->cli->format == FMT_CSV)
        puts("function,low_ns,high_ns,count");
    for (size_t i = 0; i < n; i++) {
        uint32_t sym = rows[i].sym;
        if (!hist_wanted(rc->cli, rows[i].name) || !p->hists[sym])
            continue;
        if (rc->cli->format == FMT_TABLE && shown)
            putchar('\n');
        if (rc->cli->format == FMT_TABLE)
            print_hist_table(r, sym, p->hists[sym]);
        if (rc->cli->format == FMT_CSV)
            print_hist_csv(r, sym, p->hists[sym]);
        if (list)
            cJSON_AddItemToArray(list, hist_json(r, sym, p->hists[sym]));
        shown++;
    }
    if (!shown) {
        cJSON_Delete(root);
        err_hint("calltrace report RUN lists the functions with calls",
                 "--hist '%s': no function of that name made a call in %s", rc->cli->hist, run);
        return -1;
    }
    return root ? cli_put_json(root) : 0;
}

static int print_report(struct report_ctx *rc, const char *run)
{
    size_t n = 0;
    struct report_row *rows = make_rows(rc->p, rc->cli->hist ? SORT_NAME : rc->cli->sort, &n);
    if (!rows) {
        err_msg("out of memory");
        return -1;
    }
    if (!rc->cli->hist && rc->cli->top && (size_t)rc->cli->top < n)
        n = (size_t)rc->cli->top;
    bool marked = false;
    for (size_t i = 0; i < n && !rc->cli->hist; i++)
        marked |= replay_sym(&rc->p->replay, rows[i].sym)->breakpoint;
    run_note_breakpoints(run, marked);
    int ret = 0;
    if (rc->cli->hist)
        ret = print_hists(rc, run, rows, n);
    else if (rc->cli->format == FMT_TABLE)
        ret = print_table(rc, rows, n);
    else if (rc->cli->format == FMT_CSV)
        print_csv(rc, rows, n);
    else
        ret = print_json(rc, run, rows, n);
    free(rows);
    if (ret < 0 && rc->cli->callers)
        err_msg("out of memory"); /* the rest print their own errors */
    return ret;
}

/* --callers: the run's call sites, sorted; a run without them is said so, and its report has
 * none. Returns 0, or -1 after one error line. */
static int take_sites(struct report_ctx *rc, const char *run)
{
    if (!(rc->sites = profile_sites(rc->p, &rc->nsites))) {
        err_msg("out of memory");
        return -1;
    }
    if (!rc->nsites && rc->p->replay.events)
        note_msg("%s: --callers: no call sites in this run (record it with --callsites)", run);
    return 0;
}

int cmd_report(int argc, char **argv)
{
    uint64_t start_ns = clock_mono_ns();
    struct report_cli cli = {.sort = SORT_TOTAL, .format = FMT_TABLE};
    if (parse_args(argc, argv, &cli) < 0) {
        cli_filter_free(&cli.filter);
        return 2;
    }
    char run[PATH_MAX], record[PATH_MAX];
    if (run_select(cli.run, run, sizeof(run), record, sizeof(record)) < 0) {
        cli_filter_free(&cli.filter);
        return 1;
    }
    struct profile p;
    /* percentiles in csv and json, and the histograms: the table has no room for them */
    unsigned wants = cli.hist || cli.format != FMT_TABLE ? PROFILE_HISTS : 0;
    wants |= cli.callers ? PROFILE_SITES : 0;
    int rc = profile_build(&p, record, &cli.filter, wants);
    if (rc == 0 && cli.filter.tid && !p.saw_tid)
        rc = cli_missing_tid(&p.replay, run, cli.filter.tid);
    if (rc == 0)
        profile_warn_unmatched(&p);
    struct report_ctx ctx = {.cli = &cli, .p = &p};
    if (rc == 0 && cli.callers)
        rc = take_sites(&ctx, run);
    if (rc == 0)
        rc = print_report(&ctx, run);
    if (rc == 0)
        run_warn_damaged(run, p.replay.damaged);
    if (rc == 0)
        run_warn_dropped(run, p.replay.dropped);
    if (rc == 0 && fflush(stdout) != 0) {
        err_msg("writing the report: %m");
        rc = -1;
    }
    cli_print_stats("report", p.replay.events, start_ns);
    source_files_free(&ctx.sources);
    free(ctx.sites);
    profile_free(&p);
    cli_filter_free(&cli.filter);
    return rc == 0 ? 0 : 1;
}
