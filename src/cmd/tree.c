/* calltrace tree [RUN]: each thread's calls as an indented tree with durations, a replay of the
 * run read from the binary record. A call without children is one line, "name();", a call with
 * children opens "name() {" and closes with "}" and its name in a C comment, as uftrace does.
 * Captured arguments go between the parentheses, a return value after "=": "fib(n=3) = 2;".
 *
 * Streams: a call is printed when the next event of its thread shows whether it has children,
 * so memory does not grow with the run. Threads after the first are spooled to temporary files
 * and printed after it, each as a whole. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/replay.h"
#include "analysis/run_select.h"
#include "analysis/source_file.h"
#include "cmd/cli_util.h"
#include "record/clock.h"
#include "cmd/commands.h"
#include "output/call_values.h"
#include "util/duration.h"
#include "util/log.h"

struct tree_cli {
    const char *run;
    uint32_t tid;       /* 0: all */
    uint32_t max_depth; /* 0: any */
    bool srcline;
};

struct tree_thread {
    FILE *out;
    uint32_t pid;
    uint32_t tid;
    bool pending; /* the innermost call's line is not printed yet: leaf or opener? */
};

struct tree_ctx {
    const struct tree_cli *cli;
    struct tree_thread **threads; /* in order of first call */
    size_t nthreads;
    bool write_failed;
    bool breakpoint_shown;       /* a call of a function marked breakpoint was printed */
    struct run_funcs *funcs;     /* names and DWARF, to format captured values */
    struct source_files sources; /* --srcline */
};

static void usage(FILE *f)
{
    fputs("usage: calltrace tree [OPTIONS] [RUN]\n"
          "Each thread's calls in RUN (default: the newest run directory here) as an indented\n"
          "tree with the duration of each call, in the order they happened.\n"
          "\n"
          "  -t, --tid TID    only thread TID\n"
          "  -D, --depth N    only calls at most N deep (1: the outermost calls)\n"
          "      --srcline    where each function is defined, \"/* file:line */\" after its\n"
          "                   call (from DWARF)\n"
          "  -h, --help       show this help\n",
          f);
}

enum { OPT_SRCLINE = 0x900 };

static int parse_args(int argc, char **argv, struct tree_cli *cli)
{
    static const struct option longopts[] = {
        {"tid", required_argument, NULL, 't'},
        {"depth", required_argument, NULL, 'D'},
        {"srcline", no_argument, NULL, OPT_SRCLINE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    long long n;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":t:D:h", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (cli_number("--tid", optarg, 1, UINT32_MAX, &n) < 0)
                return -1;
            cli->tid = (uint32_t)n;
            break;
        case 'D':
            if (cli_number("--depth", optarg, 1, UINT32_MAX, &n) < 0)
                return -1;
            cli->max_depth = (uint32_t)n;
            break;
        case OPT_SRCLINE:
            cli->srcline = true;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            return cli_bad_option(argv, c, "tree");
        }
    }
    if (optind < argc - 1) {
        err_hint("give one run directory", "tree: too many arguments");
        return -1;
    }
    cli->run = optind < argc ? argv[optind] : NULL;
    return 0;
}

static void put_header(FILE *out, const struct tree_thread *tt)
{
    fprintf(out, "# pid %u, thread %u\n%12s  %s\n", tt->pid, tt->tid, "DURATION", "FUNCTION");
}

/* The first thread prints straight to stdout; the others wait in temporary files. */
static struct tree_thread *tree_thread_of(struct tree_ctx *tc, struct call_thread *t)
{
    if (t->user)
        return t->user;
    struct tree_thread *tt = calloc(1, sizeof(*tt));
    struct tree_thread **all = reallocarray(tc->threads, tc->nthreads + 1, sizeof(*all));
    if (!tt || !all) {
        free(tt);
        err_msg("out of memory");
        return NULL;
    }
    tc->threads = all;
    tt->out = tc->nthreads ? tmpfile() : stdout;
    if (!tt->out) {
        err_hint("show one thread at a time with --tid", "cannot spool thread %u: %s", t->tid,
                 strerror(errno));
        free(tt);
        return NULL;
    }
    tt->pid = t->pid;
    tt->tid = t->tid;
    if (tc->nthreads)
        putc('\n', tt->out);
    put_header(tt->out, tt);
    all[tc->nthreads++] = tt;
    t->user = tt;
    return tt;
}

static void put_indent(FILE *out, size_t depth)
{
    for (size_t i = 1; i < depth; i++)
        fputs("  ", out);
}

static bool shown(const struct tree_ctx *tc, const struct call_thread *t, size_t depth)
{
    return (!tc->cli->tid || t->tid == tc->cli->tid) &&
           (!tc->cli->max_depth || depth <= tc->cli->max_depth);
}

/* "(a=1, b=2)", and " = 3" when with_result and there is one; "()" without captured values. */
static void put_values(const struct tree_ctx *tc, struct tree_thread *tt,
                       const struct call_frame *f, bool with_args, bool with_result)
{
    struct call_values cv = {0};
    bool ok =
        (f->args || f->ret) && call_values_decode(tc->funcs, f->func, with_args ? f->args : NULL,
                                                  with_result ? f->ret : NULL, &cv) == 0;
    if (with_args) {
        putc('(', tt->out);
        for (size_t i = 0; ok && i < cv.nargs; i++)
            fprintf(tt->out, "%s%s=%s", i ? ", " : "", cv.args[i].name, cv.args[i].value);
        putc(')', tt->out);
    }
    if (ok && with_result && cv.has_result)
        fprintf(tt->out, " = %s", cv.result.value);
    call_values_free(&cv);
}

/* --srcline: where the function of sym is defined, in a C comment after its call. */
static void put_srcline(struct tree_ctx *tc, FILE *out, const struct replay *r, uint32_t sym)
{
    struct source_line where;
    if (tc->cli->srcline && cli_srcline(&tc->sources, r, sym, &where))
        cli_put_srcline(out, " /* ", &where, " */");
}

/* The pending call has a child: it opens a block. */
static void flush_opener(struct tree_ctx *tc, struct tree_thread *tt, const struct replay *r,
                         const struct call_frame *f, size_t depth)
{
    fprintf(tt->out, "%12s  ", "");
    put_indent(tt->out, depth);
    fputs(replay_sym(r, f->sym)->name, tt->out);
    put_values(tc, tt, f, true, false);
    fputs(" {", tt->out);
    put_srcline(tc, tt->out, r, f->sym);
    putc('\n', tt->out);
    tt->pending = false;
}

static int on_enter(void *ctx, struct replay *r, struct call_thread *t, struct call_frame *f)
{
    struct tree_ctx *tc = ctx;
    if (!shown(tc, t, t->depth))
        return 0;
    struct tree_thread *tt = tree_thread_of(tc, t);
    if (!tt)
        return -1;
    if (tt->pending)
        flush_opener(tc, tt, r, f - 1, t->depth - 1);
    tt->pending = true;
    return 0;
}

/* Function and image definitions, to name and type values. */
static int on_record(void *ctx, struct replay *r, const struct rec_hdr *h)
{
    struct tree_ctx *tc = ctx;
    (void)r;
    return run_funcs_note(tc->funcs, h) < 0 ? -1 : 0;
}

/* Values are kept with their call until its line is printed, for the calls shown only. */
static int keep_values(void *ctx, struct replay *r, struct call_thread *t, struct call_frame *f,
                       const struct rec_hdr *h)
{
    struct tree_ctx *tc = ctx;
    (void)r, (void)f, (void)h;
    return t->user && shown(tc, t, t->depth);
}

static void put_marks(FILE *out, unsigned flags)
{
    if (flags & EXIT_UNFINISHED)
        fputs(" /* unfinished */", out);
    if (flags & EXIT_UNWOUND)
        fputs(" /* unwound */", out);
    if (flags & EXIT_INHERITED)
        fputs(" /* inherited from the parent */", out);
}

static int on_exit_call(void *ctx, struct replay *r, const struct call_done *c)
{
    struct tree_ctx *tc = ctx;
    struct tree_thread *tt = c->thread->user;
    if (!shown(tc, c->thread, c->depth) || !tt)
        return 0;
    char dur[32];
    fprintf(tt->out, "%12s  ", duration_format(dur, sizeof(dur), c->total_ns));
    put_indent(tt->out, c->depth);
    const char *name = replay_sym(r, c->frame->sym)->name;
    bool leaf = tt->pending;
    if (leaf) {
        fputs(name, tt->out);
        put_values(tc, tt, c->frame, true, true);
        putc(';', tt->out);
    } else {
        putc('}', tt->out);
        put_values(tc, tt, c->frame, false, true);
        fprintf(tt->out, " /* %s */", name);
    }
    put_marks(tt->out, c->flags);
    if (run_funcs_by_breakpoint(tc->funcs, c->frame->func)) { /* this process's function */
        fputs(" /* breakpoint */", tt->out);
        tc->breakpoint_shown = true;
    }
    if (leaf)
        put_srcline(tc, tt->out, r, c->frame->sym);
    putc('\n', tt->out);
    tt->pending = false;
    if (ferror(tt->out))
        tc->write_failed = true;
    return 0;
}

static int copy_spool(FILE *from)
{
    char buf[65536];
    size_t n;
    if (fflush(from) != 0 || fseek(from, 0, SEEK_SET) != 0)
        return -1;
    while ((n = fread(buf, 1, sizeof(buf), from)) > 0)
        if (fwrite(buf, 1, n, stdout) != n)
            return -1;
    return ferror(from) ? -1 : 0;
}

static int finish(struct tree_ctx *tc)
{
    int rc = tc->write_failed ? -1 : 0;
    for (size_t i = 0; i < tc->nthreads; i++) {
        struct tree_thread *tt = tc->threads[i];
        if (tt->out != stdout) {
            if (rc == 0 && copy_spool(tt->out) < 0)
                rc = -1;
            fclose(tt->out);
        }
        free(tt);
    }
    free(tc->threads);
    if (fflush(stdout) != 0)
        rc = -1;
    if (rc < 0)
        err_msg("writing the tree: %s", strerror(errno));
    return rc;
}

int cmd_tree(int argc, char **argv)
{
    uint64_t start_ns = clock_mono_ns();
    struct tree_cli cli = {0};
    char run[PATH_MAX], record[PATH_MAX];
    if (parse_args(argc, argv, &cli) < 0)
        return 2;
    if (run_select(cli.run, run, sizeof(run), record, sizeof(record)) < 0)
        return 1;
    struct replay r;
    if (replay_open(&r, record) < 0)
        return 1;
    struct tree_ctx tc = {.cli = &cli, .funcs = run_funcs_new()};
    if (!tc.funcs) {
        err_msg("out of memory");
        replay_close(&r);
        return 1;
    }
    static const struct replay_ops ops = {
        .enter = on_enter, .values = keep_values, .exit = on_exit_call, .record = on_record};
    int rc = replay_run(&r, &ops, &tc);
    run_funcs_free(tc.funcs);
    source_files_free(&tc.sources);
    if (finish(&tc) < 0)
        rc = -1;
    if (rc == 0 && cli.tid && !tc.nthreads)
        rc = cli_missing_tid(&r, run, cli.tid);
    if (rc == 0)
        run_warn_damaged(run, r.damaged);
    if (rc == 0)
        run_warn_dropped(run, r.dropped);
    run_note_breakpoints(run, rc == 0 && tc.breakpoint_shown);
    cli_print_stats("tree", r.events, start_ns);
    replay_close(&r);
    return rc == 0 ? 0 : 1;
}
