/* calltrace diff RUN_A RUN_B: what changed from one run to the other, per function (calls,
 * total, self and average time in both, and the change), or, with --tree, stack by stack: the
 * two call trees aligned, with the calls that appeared, vanished or changed their count. */
#include <cJSON.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff.h"
#include "analysis/profile.h"
#include "analysis/run_select.h"
#include "cmd/cli_util.h"
#include "cmd/commands.h"
#include "record/clock.h"
#include "util/duration.h"
#include "util/log.h"
#include "util/text_escape.h"

enum diff_format { FMT_TABLE, FMT_CSV, FMT_JSON };

static const char *const key_names[] = {"total", "self", "calls", "avg", "name"};
static const char *const format_names[] = {"table", "csv", "json"};

struct diff_cli {
    const char *runs[2];
    enum diff_key sort;
    enum diff_format format;
    long long top; /* 0: all */
    bool tree;
    struct profile_filter filter;
};

/* A run being compared: its directory, and its profile. */
struct diff_run {
    char dir[PATH_MAX];
    char record[PATH_MAX];
    struct profile p;
};

static void usage(FILE *f)
{
    fputs("usage: calltrace diff [OPTIONS] RUN_A RUN_B\n"
          "What changed from RUN_A to RUN_B: per function, its calls, total, self and average\n"
          "time in both runs and the change (B minus A, and in % of A), largest change first.\n"
          "Functions are matched by name, so that runs of two builds compare; one called in\n"
          "one run only is shown as new or gone.\n"
          "\n"
          "  -s, --sort KEY       the change that orders the lines: total (default), self,\n"
          "                       calls, avg, or name (A-Z)\n"
          "  -n, --top N          only the first N lines\n"
          "  -f, --format FORMAT  table (default), csv or json (times in ns)\n"
          "      --tree           the two call trees aligned, stack by stack: '+' a stack\n"
          "                       only B has, '-' one only A has, '~' one whose number of\n"
          "                       calls changed\n"
          "  -F, --include GLOB   only functions whose name matches GLOB (repeatable)\n"
          "  -N, --exclude GLOB   leave out functions whose name matches GLOB (repeatable)\n"
          "  -D, --depth N        only calls at most N deep (1: the outermost calls)\n"
          "  -h, --help           show this help\n"
          "\n"
          "The filters apply to both runs. Threads are merged: a run's threads are not\n"
          "those of the other.\n",
          f);
}

enum { OPT_TREE = 0x800 };

static int parse_args(int argc, char **argv, struct diff_cli *cli)
{
    static const struct option longopts[] = {
        {"sort", required_argument, NULL, 's'},
        {"top", required_argument, NULL, 'n'},
        {"format", required_argument, NULL, 'f'},
        {"tree", no_argument, NULL, OPT_TREE},
        {"include", required_argument, NULL, 'F'},
        {"exclude", required_argument, NULL, 'N'},
        {"depth", required_argument, NULL, 'D'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c, v;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":s:n:f:F:N:D:h", longopts, NULL)) != -1) {
        int taken = cli_filter_option(&cli->filter, c, optarg);
        if (taken < 0)
            return -1;
        if (taken)
            continue;
        switch (c) {
        case 's':
            if ((v = cli_choice("--sort", optarg, key_names, 5)) < 0)
                return -1;
            cli->sort = (enum diff_key)v;
            break;
        case 'f':
            if ((v = cli_choice("--format", optarg, format_names, 3)) < 0)
                return -1;
            cli->format = (enum diff_format)v;
            break;
        case 'n':
            if (cli_number("--top", optarg, 1, LLONG_MAX, &cli->top) < 0)
                return -1;
            break;
        case OPT_TREE:
            cli->tree = true;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            return cli_bad_option(argv, c, "diff");
        }
    }
    if (argc - optind != 2) {
        err_hint("usage: calltrace diff [OPTIONS] RUN_A RUN_B", "diff: %s",
                 argc - optind < 2 ? "give two run directories" : "too many arguments");
        return -1;
    }
    cli->runs[0] = argv[optind];
    cli->runs[1] = argv[optind + 1];
    return 0;
}

/* "+12.5%", or what stands for a percentage of nothing. */
static const char *percent_text(char *buf, size_t len, int64_t a, int64_t b, bool in_a, bool in_b)
{
    double pct;
    if (!in_a)
        return "new";
    if (!in_b)
        return "gone";
    if (!diff_percent(a, b, &pct))
        return a == b ? "0.0%" : "-";
    snprintf(buf, len, "%+.1f%%", pct);
    return buf;
}

static const char *signed_duration(char *buf, size_t len, int64_t ns)
{
    buf[0] = ns < 0 ? '-' : '+';
    duration_format(buf + 1, len - 1, ns < 0 ? -ns : ns);
    return buf;
}

/* The change of key: a duration, or a number of calls. */
static const char *change_text(char *buf, size_t len, int64_t change, enum diff_key key)
{
    if (key == DIFF_CALLS) {
        snprintf(buf, len, "%+lld", (long long)change);
        return buf;
    }
    return signed_duration(buf, len, change);
}

static const char *side_duration(char *buf, size_t len, const struct diff_side *s, int64_t ns)
{
    return s->calls ? duration_format(buf, len, ns) : "-";
}

static const char *side_calls(char *buf, size_t len, uint64_t calls)
{
    if (!calls)
        return "-";
    snprintf(buf, len, "%llu", (unsigned long long)calls);
    return buf;
}

static void print_table(const struct diff_cli *cli, const struct diff_row *rows, size_t n)
{
    enum diff_key key = cli->sort == DIFF_NAME ? DIFF_TOTAL : cli->sort;
    char change_head[16];
    snprintf(change_head, sizeof(change_head), "%s +/-", key_names[key]);
    printf("%9s %9s %11s %11s %11s %11s %12s %8s  %s\n", "calls A", "calls B", "total A", "total B",
           "self A", "self B", change_head, "%", "function");
    for (size_t i = 0; i < n; i++) {
        const struct diff_row *r = &rows[i];
        char t[8][32];
        printf("%9s %9s %11s %11s %11s %11s %12s %8s  ", side_calls(t[0], 32, r->a.calls),
               side_calls(t[1], 32, r->b.calls), side_duration(t[2], 32, &r->a, r->a.total_ns),
               side_duration(t[3], 32, &r->b, r->b.total_ns),
               side_duration(t[4], 32, &r->a, r->a.self_ns),
               side_duration(t[5], 32, &r->b, r->b.self_ns),
               change_text(t[6], 32, diff_change(r, key), key),
               percent_text(t[7], 32, diff_value(&r->a, key), diff_value(&r->b, key),
                            r->a.calls > 0, r->b.calls > 0));
        fputs_name(r->name, stdout);
        putchar('\n');
    }
}

static const char *present_in(const struct diff_side *a, const struct diff_side *b)
{
    return a->calls && b->calls ? "both" : a->calls ? "a" : "b";
}

/* "12.5" or empty: a percentage of nothing has no value. */
static void put_csv_percent(int64_t a, int64_t b)
{
    double pct;
    if (diff_percent(a, b, &pct))
        printf(",%.2f", pct);
    else
        putchar(',');
}

static void print_csv(const struct diff_row *rows, size_t n)
{
    puts("function,present,calls_a,calls_b,calls_change,total_a_ns,total_b_ns,total_change_ns,"
         "total_change_pct,self_a_ns,self_b_ns,self_change_ns,self_change_pct,avg_a_ns,avg_b_ns,"
         "avg_change_ns,avg_change_pct");
    for (size_t i = 0; i < n; i++) {
        const struct diff_row *r = &rows[i];
        cli_put_csv_field(r->name);
        printf(",%s,%llu,%llu,%lld", present_in(&r->a, &r->b), (unsigned long long)r->a.calls,
               (unsigned long long)r->b.calls, (long long)diff_change(r, DIFF_CALLS));
        static const enum diff_key timed[] = {DIFF_TOTAL, DIFF_SELF, DIFF_AVG};
        for (size_t k = 0; k < 3; k++) {
            int64_t a = diff_value(&r->a, timed[k]), b = diff_value(&r->b, timed[k]);
            printf(",%lld,%lld,%lld", (long long)a, (long long)b, (long long)(b - a));
            put_csv_percent(a, b);
        }
        putchar('\n');
    }
}

static cJSON *side_json(const struct diff_side *s)
{
    if (!s->calls)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "calls", (double)s->calls);
    cJSON_AddNumberToObject(o, "total_ns", (double)s->total_ns);
    cJSON_AddNumberToObject(o, "self_ns", (double)s->self_ns);
    cJSON_AddNumberToObject(o, "avg_ns", (double)diff_value(s, DIFF_AVG));
    return o;
}

static void add_percent(cJSON *o, const char *key, int64_t a, int64_t b)
{
    double pct;
    if (diff_percent(a, b, &pct))
        cJSON_AddNumberToObject(o, key, pct);
    else
        cJSON_AddNullToObject(o, key);
}

static cJSON *change_json(const struct diff_row *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "calls", (double)diff_change(r, DIFF_CALLS));
    static const struct {
        enum diff_key key;
        const char *ns, *pct;
    } timed[] = {{DIFF_TOTAL, "total_ns", "total_pct"},
                 {DIFF_SELF, "self_ns", "self_pct"},
                 {DIFF_AVG, "avg_ns", "avg_pct"}};
    for (size_t k = 0; k < 3; k++) {
        cJSON_AddNumberToObject(o, timed[k].ns, (double)diff_change(r, timed[k].key));
        add_percent(o, timed[k].pct, diff_value(&r->a, timed[k].key),
                    diff_value(&r->b, timed[k].key));
    }
    return o;
}

static cJSON *json_head(const struct diff_run *runs)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "run_a", runs[0].dir);
    cJSON_AddStringToObject(root, "run_b", runs[1].dir);
    return root;
}

static int print_json(const struct diff_run *runs, const struct diff_row *rows, size_t n)
{
    cJSON *root = json_head(runs);
    cJSON *funcs = cJSON_AddArrayToObject(root, "functions");
    for (size_t i = 0; funcs && i < n; i++) {
        const struct diff_row *r = &rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(funcs, o);
        cJSON_AddStringToObject(o, "name", r->name);
        cJSON_AddStringToObject(o, "present", present_in(&r->a, &r->b));
        cJSON_AddItemToObject(o, "a", side_json(&r->a));
        cJSON_AddItemToObject(o, "b", side_json(&r->b));
        cJSON_AddItemToObject(o, "change", change_json(r));
    }
    return cli_put_json(root);
}

static int print_functions(const struct diff_cli *cli, struct diff_run *runs)
{
    struct diff_row *rows;
    size_t n;
    if (diff_functions(&runs[0].p, &runs[1].p, cli->sort, &rows, &n) < 0) {
        err_msg("out of memory");
        return -1;
    }
    if (cli->top && (size_t)cli->top < n)
        n = (size_t)cli->top;
    int rc = 0;
    if (cli->format == FMT_TABLE)
        print_table(cli, rows, n);
    else if (cli->format == FMT_CSV)
        print_csv(rows, n);
    else
        rc = print_json(runs, rows, n);
    free(rows);
    return rc;
}

/* --tree: each aligned stack as it is visited. */
struct tree_out {
    const struct diff_cli *cli;
    const struct call_tree *t[2];
    cJSON **open; /* json: the children array of each depth's latest node */
    size_t nopen;
    const char **stack; /* csv: the names down to the current stack */
    size_t nstack;
    long long rows;
};

static const struct call_tree_node *node_of(const struct tree_out *to, int side, uint32_t n)
{
    return n == CALL_TREE_NONE ? NULL : &to->t[side]->nodes[n];
}

static const char status_mark[] = {' ', '~', '+', '-'};
static const char *const status_names[] = {"same", "changed", "appeared", "vanished"};

static void tree_table_row(const struct tree_out *to, const struct diff_tree_row *row)
{
    const struct call_tree_node *a = node_of(to, 0, row->a), *b = node_of(to, 1, row->b);
    char t[6][32];
    int64_t ta = a ? a->total_ns : 0, tb = b ? b->total_ns : 0;
    printf("%c %9s %9s %11s %11s %12s %8s  ", status_mark[row->status],
           side_calls(t[0], 32, a ? a->calls : 0), side_calls(t[1], 32, b ? b->calls : 0),
           a ? duration_format(t[2], 32, ta) : "-", b ? duration_format(t[3], 32, tb) : "-",
           signed_duration(t[4], 32, tb - ta), percent_text(t[5], 32, ta, tb, a, b));
    for (uint32_t d = 1; d < row->depth; d++)
        fputs("  ", stdout);
    fputs_name(row->name, stdout);
    putchar('\n');
}

static int tree_csv_row(struct tree_out *to, const struct diff_tree_row *row)
{
    if (row->depth > to->nstack) {
        const char **stack = reallocarray(to->stack, row->depth + 64, sizeof(*stack));
        if (!stack)
            return -1;
        to->stack = stack;
        to->nstack = row->depth + 64;
    }
    to->stack[row->depth - 1] = row->name;
    const struct call_tree_node *a = node_of(to, 0, row->a), *b = node_of(to, 1, row->b);
    printf("%u,%s,", row->depth, status_names[row->status]);
    /* the stack as one field, frames joined by ';' as in folded stacks */
    putchar('"');
    for (uint32_t d = 0; d < row->depth; d++) {
        if (d)
            putchar(';');
        cli_put_csv_text(to->stack[d]);
    }
    putchar('"');
    printf(",%llu,%llu,%lld,%lld,%lld,%lld\n", (unsigned long long)(a ? a->calls : 0),
           (unsigned long long)(b ? b->calls : 0), (long long)(a ? a->total_ns : 0),
           (long long)(b ? b->total_ns : 0), (long long)(a ? a->self_ns : 0),
           (long long)(b ? b->self_ns : 0));
    return 0;
}

static cJSON *tree_node_json(const struct call_tree_node *n)
{
    if (!n)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "calls", (double)n->calls);
    cJSON_AddNumberToObject(o, "total_ns", (double)n->total_ns);
    cJSON_AddNumberToObject(o, "self_ns", (double)n->self_ns);
    return o;
}

static int tree_json_row(struct tree_out *to, const struct diff_tree_row *row)
{
    if (row->depth + 1 > to->nopen) {
        cJSON **open = reallocarray(to->open, row->depth + 64, sizeof(*open));
        if (!open)
            return -1;
        to->open = open;
        to->nopen = row->depth + 64;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToArray(to->open[row->depth - 1], o);
    cJSON_AddStringToObject(o, "name", row->name);
    cJSON_AddStringToObject(o, "status", status_names[row->status]);
    cJSON_AddItemToObject(o, "a", tree_node_json(node_of(to, 0, row->a)));
    cJSON_AddItemToObject(o, "b", tree_node_json(node_of(to, 1, row->b)));
    to->open[row->depth] = cJSON_AddArrayToObject(o, "children");
    return to->open[row->depth] ? 0 : -1;
}

static int tree_row(void *ctx, const struct diff_tree_row *row)
{
    struct tree_out *to = ctx;
    if (to->cli->top && to->rows >= to->cli->top)
        return 1; /* enough */
    to->rows++;
    switch (to->cli->format) {
    case FMT_TABLE:
        tree_table_row(to, row);
        return 0;
    case FMT_CSV:
        return tree_csv_row(to, row);
    default:
        return tree_json_row(to, row);
    }
}

static const char *sym_name(void *ctx, uint32_t sym)
{
    return replay_sym(ctx, sym)->name;
}

static int print_trees(const struct diff_cli *cli, struct diff_run *runs)
{
    struct tree_out to = {.cli = cli, .t = {&runs[0].p.tree, &runs[1].p.tree}};
    cJSON *root = NULL;
    for (int i = 0; i < 2; i++) {
        if (call_tree_sort(&runs[i].p.tree, sym_name, &runs[i].p.replay) < 0) {
            err_msg("out of memory");
            return -1;
        }
    }
    if (cli->format == FMT_TABLE)
        printf("  %9s %9s %11s %11s %12s %8s  %s\n", "calls A", "calls B", "total A", "total B",
               "total +/-", "%", "function");
    else if (cli->format == FMT_CSV)
        puts("depth,status,stack,calls_a,calls_b,total_a_ns,total_b_ns,self_a_ns,self_b_ns");
    else {
        root = json_head(runs);
        to.open = calloc(64, sizeof(*to.open));
        to.nopen = to.open ? 64 : 0;
        if (to.open)
            to.open[0] = cJSON_AddArrayToObject(root, "tree");
    }
    int rc = root && !to.open ? -1
                              : diff_trees(to.t[0], sym_name, &runs[0].p.replay, to.t[1], sym_name,
                                           &runs[1].p.replay, tree_row, &to);
    free(to.stack);
    free(to.open);
    if (rc < 0) {
        cJSON_Delete(root);
        err_msg("out of memory");
        return -1;
    }
    return root ? cli_put_json(root) : 0;
}

static int build_runs(const struct diff_cli *cli, struct diff_run *runs)
{
    unsigned wants = cli->tree ? PROFILE_TREE : 0;
    for (int i = 0; i < 2; i++) {
        if (run_select(cli->runs[i], runs[i].dir, sizeof(runs[i].dir), runs[i].record,
                       sizeof(runs[i].record)) < 0 ||
            profile_build(&runs[i].p, runs[i].record, &cli->filter, wants) < 0)
            return -1;
    }
    return 0;
}

int cmd_diff(int argc, char **argv)
{
    uint64_t start_ns = clock_mono_ns();
    struct diff_cli cli = {.sort = DIFF_TOTAL, .format = FMT_TABLE};
    if (parse_args(argc, argv, &cli) < 0) {
        cli_filter_free(&cli.filter);
        return 2;
    }
    struct diff_run *runs = calloc(2, sizeof(*runs));
    if (!runs) {
        err_msg("out of memory");
        cli_filter_free(&cli.filter);
        return 1;
    }
    runs[0].p.replay.calls.file.fd = runs[1].p.replay.calls.file.fd = -1;
    int rc = build_runs(&cli, runs);
    if (rc == 0)
        rc = cli.tree ? print_trees(&cli, runs) : print_functions(&cli, runs);
    for (int i = 0; rc == 0 && i < 2; i++) {
        run_warn_damaged(runs[i].dir, runs[i].p.replay.damaged);
        run_warn_dropped(runs[i].dir, runs[i].p.replay.dropped);
    }
    if (rc == 0 && fflush(stdout) != 0) {
        err_msg("writing the diff: %m");
        rc = -1;
    }
    cli_print_stats("diff", runs[0].p.replay.events + runs[1].p.replay.events, start_ns);
    for (int i = 0; i < 2; i++)
        profile_free(&runs[i].p);
    free(runs);
    cli_filter_free(&cli.filter);
    return rc == 0 ? 0 : 1;
}
