/* calltrace flame [RUN] [-o FILE]: the run's stacks as folded text (flamegraph.pl, inferno and
 * speedscope read it) or, with -o NAME.svg, as an interactive flame graph drawn by calltrace
 * (output/flame_svg.h). The stacks are the calling-context tree of the profile
 * (analysis/call_tree.h); a stack's weight is the self time of the calls made at it. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/flame.h"
#include "analysis/profile.h"
#include "analysis/run_select.h"
#include "cmd/cli_util.h"
#include "cmd/commands.h"
#include "output/flame_svg.h"
#include "record/clock.h"
#include "util/log.h"
#include "util/text_escape.h"

enum flame_format { FLAME_AUTO, FLAME_FOLDED, FLAME_SVG };

struct flame_cli {
    const char *run;
    const char *output; /* NULL or "-": stdout */
    enum flame_format format;
    bool calls;
    bool per_thread;
    struct profile_filter filter;
};

static void usage(FILE *f)
{
    fputs("usage: calltrace flame [OPTIONS] [RUN]\n"
          "The stacks of RUN (default: the newest run directory here) as folded stacks, one\n"
          "line per stack: \"main;parse;lex 1234\", its weight the self time in ns of the\n"
          "calls made at that stack, the text flamegraph.pl, inferno and speedscope read;\n"
          "or as an interactive SVG flame graph (tooltips, click to zoom, search).\n"
          "\n"
          "  -o, --output FILE   write to FILE (default: standard output); FILE.svg is a\n"
          "                      flame graph, anything else folded stacks\n"
          "      --format F      folded or svg, whatever FILE is called\n"
          "  -c, --calls         weights are calls, not time\n"
          "  -T, --per-thread    a frame per thread, \"[pid P tid T]\", below the stacks of\n"
          "                      each thread (default: all threads merged)\n",
          f);
    fputs(CLI_FILTER_HELP, f);
    fputs("  -h, --help          show this help\n"
          "\n"
          "The weights of a thread add up to the total time of its outermost calls. A\n"
          "left-out function is not a frame: its time is its nearest kept caller's, and the\n"
          "calls it made hang from that caller. A forked child's copies of its parent's calls\n"
          "are frames of its stacks but carry no time.\n",
          f);
}

enum { OPT_FORMAT = 0x700 };

static int parse_format(const char *value, enum flame_format *format)
{
    if (strcmp(value, "folded") == 0)
        *format = FLAME_FOLDED;
    else if (strcmp(value, "svg") == 0)
        *format = FLAME_SVG;
    else {
        err_hint("folded or svg", "--format '%s': unknown format", value);
        return -1;
    }
    return 0;
}

static int parse_args(int argc, char **argv, struct flame_cli *cli)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"calls", no_argument, NULL, 'c'},
        {"per-thread", no_argument, NULL, 'T'},
        CLI_FILTER_LONG_OPTIONS,
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:cT" CLI_FILTER_OPTS "h", longopts, NULL)) != -1) {
        int taken = cli_filter_option(&cli->filter, c, optarg);
        if (taken < 0)
            return -1;
        if (taken)
            continue;
        switch (c) {
        case 'o':
            cli->output = optarg;
            break;
        case OPT_FORMAT:
            if (parse_format(optarg, &cli->format) < 0)
                return -1;
            break;
        case 'c':
            cli->calls = true;
            break;
        case 'T':
            cli->per_thread = true;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            return cli_bad_option(argv, c, "flame");
        }
    }
    if (cli_one_run(argc, argv, "flame", &cli->run) < 0)
        return -1;
    if (cli->format == FLAME_AUTO) {
        size_t len = cli->output ? strlen(cli->output) : 0;
        cli->format =
            len > 4 && strcmp(cli->output + len - 4, ".svg") == 0 ? FLAME_SVG : FLAME_FOLDED;
    }
    return 0;
}

static const char *sym_name(void *ctx, uint32_t sym)
{
    return replay_sym(ctx, sym)->name;
}

/* A frame of a folded line: ';' separates frames, so one inside a name becomes ':'. */
static void put_folded_frame(FILE *out, const char *name)
{
    if (!strchr(name, ';')) {
        fputs_name(name, out);
        return;
    }
    char *copy = strdup(name);
    for (char *s = copy; s && (s = strchr(s, ';'));)
        *s = ':';
    fputs_name(copy ? copy : "?", out);
    free(copy);
}

static int put_stack(void *ctx, const char *const *names, uint32_t depth, uint64_t weight)
{
    FILE *out = ctx;
    for (uint32_t i = 0; i < depth; i++) {
        if (i)
            putc(';', out);
        put_folded_frame(out, names[i]);
    }
    fprintf(out, " %llu\n", (unsigned long long)weight);
    return ferror(out) ? -1 : 0;
}

static int write_flame(const struct flame_cli *cli, struct profile *p, const char *run, FILE *out)
{
    struct flame f;
    if (call_tree_sort(&p->tree, sym_name, &p->replay) < 0 ||
        flame_init(&f, &p->tree, cli->calls) < 0) {
        err_msg("out of memory");
        return -1;
    }
    int rc = 0;
    if (cli->format == FLAME_SVG) {
        char title[PATH_MAX + 32];
        snprintf(title, sizeof(title), "calltrace flame graph: %s", run);
        struct flame_svg_options opts = {
            .title = title,
            .subtitle = cli->calls ? "width: calls" : "width: time (self time of the calls)",
        };
        rc = flame_svg_write(out, &f, sym_name, &p->replay, &opts);
    } else {
        rc = flame_fold(&f, sym_name, &p->replay, put_stack, out);
    }
    flame_free(&f);
    return rc;
}

static FILE *open_output(const char *file)
{
    if (!file || strcmp(file, "-") == 0)
        return stdout;
    FILE *out = fopen(file, "w");
    if (!out)
        err_msg("cannot create %s: %s", file, strerror(errno));
    return out;
}

static int close_output(FILE *out, const char *file, int rc)
{
    bool failed = ferror(out) != 0;
    if (out == stdout ? fflush(out) != 0 : fclose(out) != 0)
        failed = true;
    if (failed && rc == 0) {
        err_msg("writing %s: %s", out == stdout ? "the flame graph" : file, strerror(errno));
        return -1;
    }
    return rc;
}

int cmd_flame(int argc, char **argv)
{
    uint64_t start_ns = clock_mono_ns();
    struct flame_cli cli = {0};
    char run[PATH_MAX], record[PATH_MAX];
    int rc = parse_args(argc, argv, &cli);
    if (rc == 0 && run_select(cli.run, run, sizeof(run), record, sizeof(record)) < 0)
        rc = 1;
    if (rc != 0) {
        cli_filter_free(&cli.filter);
        return rc < 0 ? 2 : 1;
    }
    struct profile p;
    unsigned wants = PROFILE_TREE | (cli.per_thread ? PROFILE_TREE_THREADS : 0);
    rc = profile_build(&p, record, &cli.filter, wants);
    if (rc == 0 && cli.filter.tid && !p.saw_tid)
        rc = cli_missing_tid(&p.replay, run, cli.filter.tid);
    if (rc == 0) {
        profile_warn_unmatched(&p);
        FILE *out = open_output(cli.output);
        rc = out ? close_output(out, cli.output, write_flame(&cli, &p, run, out)) : -1;
    }
    if (rc == 0)
        run_warn_damaged(run, p.replay.damaged);
    if (rc == 0)
        run_warn_dropped(run, p.replay.dropped);
    cli_print_stats("flame", p.replay.events, start_ns);
    profile_free(&p);
    cli_filter_free(&cli.filter);
    return rc == 0 ? 0 : 1;
}
