/* calltrace export RUN: rebuilds RUN's trace from the binary record, for a run whose calltrace
 * was killed before it could write it, in another format, or as a window of a big run. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/profile.h"
#include "cmd/cli_util.h"
#include "cmd/commands.h"
#include "output/call_dirs.h"
#include "symbols/capture_plan.h"
#include "output/run_dir.h"
#include "output/trace_file.h"
#include "record/format.h"
#include "util/log.h"

static void usage(FILE *f)
{
    fputs(
        "usage: calltrace export [OPTIONS] RUN\n"
        "Rebuilds RUN's trace from RUN/" REC_FILE_NAME " (after calltrace was killed, in\n"
        "another format, or a window of a big run), and RUN/calls when the run recorded\n"
        "arguments (-A, -R).\n"
        "  -q, --quiet        do not print the closing line\n"
        "      --format F     json (trace.json), perfetto (trace.pftrace) or both; by\n"
        "                     default trace.json up to 8 million calls, trace.pftrace beyond\n"
        "  -z, --compress     gzip it: trace.json.gz or trace.pftrace.gz\n"
        "  --max-call-dirs N  call folders per function (default 1000, 0: no limit)\n"
        "  --srcline          each call's arguments say where its function is defined:\n"
        "                     \"src\": \"file:line\" (from DWARF), and with a run recorded\n"
        "                     with --callsites where it was called from: \"called_from\"\n"
        "A window writes only some of the calls (the record keeps them all):\n" WINDOW_OPTIONS_HELP,
        f);
}

enum { OPT_MAX_CALL_DIRS = 0x500, OPT_FORMAT, OPT_SRCLINE };

/* -F/-N and --tid checked as graph checks them: a thread that made no call is an error, a glob
 * that matches no function with calls a warning. One more pass over the record, only when they
 * are given. Returns 0, or -1 after one error line. */
static int check_window_filters(const struct run_dir *run, const struct call_window *w)
{
    if (!w->tid && !w->filter.nonly && !w->filter.nexclude)
        return 0;
    struct profile_filter filter = {.include = (const char **)w->filter.only,
                                    .ninclude = w->filter.nonly,
                                    .exclude = (const char **)w->filter.exclude,
                                    .nexclude = w->filter.nexclude,
                                    .tid = w->tid};
    char record[PATH_MAX];
    if (snprintf(record, sizeof(record), "%s/%s", run->path, REC_FILE_NAME) >=
        (int)sizeof(record)) {
        err_msg("%s: path too long", run->path);
        return -1;
    }
    struct profile p;
    int rc = profile_build(&p, record, &filter, 0);
    if (rc == 0 && w->tid && !p.saw_tid)
        rc = cli_missing_tid(&p.replay, run->path, w->tid);
    if (rc == 0)
        profile_warn_unmatched(&p);
    profile_free(&p);
    return rc;
}

static int export_run(const struct run_dir *run, struct trace_file_options *trace,
                      unsigned max_dirs, int quiet)
{
    struct trace_stats stats;
    struct progress progress;
    progress_init(&progress, quiet);
    trace->progress = &progress;
    trace->quiet = quiet;
    if (trace_export(run, trace, &stats) < 0)
        return 1;
    if (stats.record_damaged)
        err_msg("%s: the record ends %s; the trace holds everything before that", run->path,
                stats.record_damaged == 1 ? "in the middle of an event" : "with damaged data");
    if (!quiet)
        note_msg("trace in %s/%s: %llu call%s%s", run->path, stats.files,
                 (unsigned long long)stats.calls, stats.calls == 1 ? "" : "s",
                 call_window_is_whole(&trace->window) ? "" : " in the window");
    struct call_dirs_stats dirs; /* -A/-R runs: the call folders too */
    if (call_dirs_export(run, max_dirs, &dirs) < 0)
        return 1;
    if (!quiet && dirs.calls)
        call_dirs_print_summary(run->path, &dirs, max_dirs);
    return 0;
}

int cmd_export(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"quiet", no_argument, NULL, 'q'},
        {"compress", no_argument, NULL, 'z'},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"max-call-dirs", required_argument, NULL, OPT_MAX_CALL_DIRS},
        {"srcline", no_argument, NULL, OPT_SRCLINE},
        WINDOW_LONG_OPTIONS,
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int quiet = 0, c;
    struct trace_file_options trace = {.format = TRACE_AUTO};
    long long max_dirs = CALL_DIRS_DEFAULT;
    while ((c = getopt_long(argc, argv, "qzhF:N:", longopts, NULL)) != -1) {
        int window = call_window_option(&trace.window, c, optarg);
        if (window < 0)
            return 2;
        if (window)
            continue;
        if (c == OPT_MAX_CALL_DIRS) {
            if (cli_number("--max-call-dirs", optarg, 0, UINT32_MAX, &max_dirs) < 0)
                return 2;
        } else if (c == OPT_FORMAT) {
            if (trace_format_option(optarg, &trace.format) < 0)
                return 2;
        } else if (c == OPT_SRCLINE) {
            trace.srcline = true;
        } else if (c == 'q') {
            quiet = 1;
        } else if (c == 'z') {
            trace.compress = true;
        } else if (c == 'h') {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (call_window_check(&trace.window) < 0)
        return 2;
    if (optind != argc - 1) {
        err_hint("give one run directory", "export: %s",
                 optind == argc ? "missing RUN" : "too many arguments");
        return 2;
    }
    struct run_dir run;
    if (run_dir_open(argv[optind], &run) < 0)
        return 1;
    if (check_window_filters(&run, &trace.window) < 0) {
        run_dir_close(&run);
        return 1;
    }
    int rc = export_run(&run, &trace, (unsigned)max_dirs, quiet);
    run_dir_close(&run);
    return rc;
}
