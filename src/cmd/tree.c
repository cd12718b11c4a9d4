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
#include "analysis/sym_filter.h"
#include "analysis/call_site.h"
#include "cmd/cli_util.h"
#include "record/clock.h"
#include "cmd/commands.h"
#include "output/call_values.h"
#include "symbols/demangle.h"
#include "util/duration.h"
#include "util/log.h"
#include "util/text_escape.h"

struct tree_cli {
    const char *run;
    struct profile_filter filter; /* -F, -N, -D, --tid */
    bool srcline;
    bool short_names; /* --short-names */
};

struct tree_thread {
    FILE *out;
    uint32_t pid;
    uint32_t tid;
    bool pending; /* the innermost call's line is not printed yet: leaf or opener? */
};

struct tree_ctx {
    const struct tree_cli *cli;
    struct sym_filter names;      /* -F, -N */
    bool saw_tid;                 /* --tid: that thread made calls */
    struct tree_thread **threads; /* in order of first call */
    size_t nthreads;
    bool write_failed;
    bool breakpoint_shown;       /* a call of a function marked breakpoint was printed */
    struct run_funcs *funcs;     /* names and DWARF, to format captured values */
    struct source_files sources; /* --srcline */
    char **names_shown;          /* by symbol: its name escaped for text output, once */
    size_t nnames_shown;
};

static void usage(FILE *f)
{
    fputs("usage: calltrace tree [OPTIONS] [RUN]\n"
          "Each thread's calls in RUN (default: the newest run directory here) as an indented\n"
          "tree with the duration of each call, in the order they happened.\n"
          "\n"
          "\n",
          f);
    fputs(CLI_FILTER_HELP, f);
    fputs("      --srcline       where each function is defined, \"/* file:line */\" after its\n"
          "                      call (from DWARF), and with a run recorded with --callsites\n"
          "                      the line it was called from (\"called from file:line\")\n"
          "      --short-names   C++ names with their template arguments emptied\n"
          "                      (std::vector<>::push_back)\n"
          "  -h, --help          show this help\n"
          "\n"
          "A C++ function is shown without its parameter list, which the parentheses of\n"
          "its arguments take the place of: parse(s=...), not parse(std::string const&).\n"
          "A call of a left-out function is not shown; the calls it made are shown under its\n"
          "nearest shown caller. Calls more than 100 levels deep are indented as at 100, their\n"
          "depth written before them: \"[6580] fib(n=1);\".\n",
          f);
}

enum { OPT_SRCLINE = 0x900, OPT_SHORT_NAMES };

static int parse_args(int argc, char **argv, struct tree_cli *cli)
{
    static const struct option longopts[] = {
        CLI_FILTER_LONG_OPTIONS,
        {"srcline", no_argument, NULL, OPT_SRCLINE},
        {"short-names", no_argument, NULL, OPT_SHORT_NAMES},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":" CLI_FILTER_OPTS "h", longopts, NULL)) != -1) {
        int taken = cli_filter_option(&cli->filter, c, optarg);
        if (taken < 0)
            return -1;
        if (taken)
            continue;
        switch (c) {
        case OPT_SRCLINE:
            cli->srcline = true;
            break;
        case OPT_SHORT_NAMES:
            cli->short_names = true;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            return cli_bad_option(argv, c, "tree");
        }
    }
    if (cli_one_run(argc, argv, "tree", &cli->run) < 0)
        return -1;
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

/* Two spaces a level up to TREE_INDENT_MAX levels; deeper, the depth as a number after them
 * ("[6580] "): a run 100,000 calls deep would otherwise print gigabytes of spaces (the output
 * grew with the square of the depth), and no screen shows such an indent anyway. */
#define TREE_INDENT_MAX 100

static void put_indent(FILE *out, size_t depth)
{
    size_t levels = depth < TREE_INDENT_MAX ? depth : TREE_INDENT_MAX;
    for (size_t i = 1; i < levels; i++)
        fputs("  ", out);
    if (depth > TREE_INDENT_MAX)
        fprintf(out, "[%zu] ", depth);
}

/* frame->user: the number of shown calls at or above this one (its line's depth when it is
 * shown), with FRAME_SHOWN when it is: a left-out call's callees hang from its nearest shown
 * caller. */
#define FRAME_SHOWN 0x80000000u
#define SHOWN_DEPTH(user) ((user) & ~FRAME_SHOWN)

static bool shown(const struct call_frame *f)
{
    return f->user & FRAME_SHOWN;
}

/* Sets f->user (f: the innermost call of t). Returns -1 when out of memory. */
static int decide_frame(struct tree_ctx *tc, const struct replay *r, const struct call_thread *t,
                        struct call_frame *f)
{
    const struct profile_filter *filter = &tc->cli->filter;
    uint32_t above = t->depth > 1 ? SHOWN_DEPTH(f[-1].user) : 0;
    f->user = above;
    if (filter->tid && t->tid != filter->tid)
        return 0;
    tc->saw_tid = true;
    if (filter->max_depth && t->depth > filter->max_depth)
        return 0;
    int kept = sym_filter_keeps(&tc->names, f->sym, replay_sym(r, f->sym)->name);
    if (kept > 0)
        f->user = (above + 1) | FRAME_SHOWN;
    return kept < 0 ? -1 : 0;
}

/* The nearest shown call above f, which is open. */
static struct call_frame *shown_caller(const struct call_thread *t, struct call_frame *f)
{
    while (--f >= t->stack)
        if (shown(f))
            return f;
    return NULL;
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
        for (size_t i = 0; ok && i < cv.nargs; i++) {
            fputs(i ? ", " : "", tt->out);
            fputs_name(cv.args[i].name, tt->out);
            putc('=', tt->out);
            fputs_escaped(cv.args[i].value, tt->out, TEXT_VALUE);
        }
        putc(')', tt->out);
    }
    if (ok && with_result && cv.has_result) {
        fputs(" = ", tt->out);
        fputs_escaped(cv.result.value, tt->out, TEXT_VALUE);
    }
    call_values_free(&cv);
}

/* --srcline: where the function of f is defined, and where f was called from when the record
 * has its return address (record --callsites), in a C comment after its call. */
static void put_srcline(struct tree_ctx *tc, FILE *out, const struct replay *r, uint32_t pid,
                        const struct call_frame *f)
{
    struct source_line where, from;
    if (!tc->cli->srcline)
        return;
    bool defined = cli_srcline(&tc->sources, r, f->sym, &where);
    bool called = call_site_line(&tc->sources, r, pid, f->ret_addr, &from);
    if (defined)
        cli_put_srcline(out, " /* ", &where, called ? "," : " */");
    if (called)
        cli_put_srcline(out, defined ? " called from " : " /* called from ", &from, " */");
}

/* A function's name as the tree shows it: without a C++ parameter list, which the call's own
 * parentheses follow ("parse(s=...)", not "parse(std::string const&)(s=...)"); --short-names:
 * template arguments emptied too; escaped for text output (util/text_escape.h). */
static char *shown_name(const struct tree_ctx *tc, const char *name)
{
    char plain[4096];
    size_t at = demangled_params_at(name);
    snprintf(plain, sizeof(plain), "%.*s", (int)at, name);
    if (tc->cli->short_names) {
        char brief[4096];
        demangled_short_name(plain, SIZE_MAX, brief, sizeof(brief));
        return text_escape_dup(brief, TEXT_NAME);
    }
    return text_escape_dup(plain, TEXT_NAME);
}

/* sym's name as text output shows it, made once per function: tree prints a line per call. */
static void put_name(struct tree_ctx *tc, FILE *out, const struct replay *r, uint32_t sym)
{
    if (sym >= tc->nnames_shown) {
        size_t n = r->nsyms > sym ? r->nsyms : (size_t)sym + 1;
        char **grown = reallocarray(tc->names_shown, n, sizeof(*grown));
        if (grown) {
            memset(grown + tc->nnames_shown, 0, (n - tc->nnames_shown) * sizeof(*grown));
            tc->names_shown = grown;
            tc->nnames_shown = n;
        }
    }
    if (sym < tc->nnames_shown && !tc->names_shown[sym])
        tc->names_shown[sym] = shown_name(tc, replay_sym(r, sym)->name);
    if (sym < tc->nnames_shown && tc->names_shown[sym])
        fputs(tc->names_shown[sym], out);
    else /* out of memory: escaped each time */
        fputs_name(replay_sym(r, sym)->name, out);
}

/* The pending call has a child: it opens a block. */
static void flush_opener(struct tree_ctx *tc, struct tree_thread *tt, const struct replay *r,
                         const struct call_frame *f, size_t depth)
{
    fprintf(tt->out, "%12s  ", "");
    put_indent(tt->out, depth);
    put_name(tc, tt->out, r, f->sym);
    put_values(tc, tt, f, true, false);
    fputs(" {", tt->out);
    put_srcline(tc, tt->out, r, tt->pid, f);
    putc('\n', tt->out);
    tt->pending = false;
}

static int on_enter(void *ctx, struct replay *r, struct call_thread *t, struct call_frame *f)
{
    struct tree_ctx *tc = ctx;
    if (decide_frame(tc, r, t, f) < 0)
        return -1;
    if (!shown(f))
        return 0;
    struct tree_thread *tt = tree_thread_of(tc, t);
    if (!tt)
        return -1;
    struct call_frame *caller = tt->pending ? shown_caller(t, f) : NULL;
    if (caller)
        flush_opener(tc, tt, r, caller, SHOWN_DEPTH(caller->user));
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
    (void)ctx, (void)r, (void)h;
    return t->user && shown(f);
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
    if (!shown(c->frame) || !tt)
        return 0;
    char dur[32];
    fprintf(tt->out, "%12s  ", duration_format(dur, sizeof(dur), c->total_ns));
    put_indent(tt->out, SHOWN_DEPTH(c->frame->user));
    bool leaf = tt->pending;
    if (leaf) {
        put_name(tc, tt->out, r, c->frame->sym);
        put_values(tc, tt, c->frame, true, true);
        putc(';', tt->out);
    } else {
        putc('}', tt->out);
        put_values(tc, tt, c->frame, false, true);
        fputs(" /* ", tt->out);
        put_name(tc, tt->out, r, c->frame->sym);
        fputs(" */", tt->out);
    }
    put_marks(tt->out, c->flags);
    if (run_funcs_by_breakpoint(tc->funcs, c->frame->func)) { /* this process's function */
        fputs(" /* breakpoint */", tt->out);
        tc->breakpoint_shown = true;
    }
    if (leaf)
        put_srcline(tc, tt->out, r, tt->pid, c->frame);
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
    for (size_t i = 0; i < tc->nnames_shown; i++)
        free(tc->names_shown[i]);
    free(tc->names_shown);
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
    if (!tc.funcs || sym_filter_init(&tc.names, &cli.filter) < 0) {
        if (!tc.funcs)
            err_msg("out of memory");
        run_funcs_free(tc.funcs);
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
    if (rc == 0 && cli.filter.tid && !tc.saw_tid)
        rc = cli_missing_tid(&r, run, cli.filter.tid);
    if (rc == 0)
        sym_filter_warn_unmatched(&tc.names, &r);
    sym_filter_free(&tc.names);
    cli_filter_free(&cli.filter);
    if (rc == 0)
        run_warn_damaged(run, r.damaged);
    if (rc == 0)
        run_warn_dropped(run, r.dropped);
    run_note_breakpoints(run, rc == 0 && tc.breakpoint_shown);
    cli_print_stats("tree", r.events, start_ns);
    replay_close(&r);
    return rc == 0 ? 0 : 1;
}
