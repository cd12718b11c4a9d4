/* calltrace export RUN: rebuilds RUN/trace.json from the binary record, for a run whose
 * calltrace was killed before it could write it. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cli_util.h"
#include "cmd/commands.h"
#include "output/call_dirs.h"
#include "symbols/capture_plan.h"
#include "output/run_dir.h"
#include "output/trace_json.h"
#include "record/format.h"
#include "util/log.h"

static void usage(FILE *f)
{
    fputs("usage: calltrace export [-q] [-z] [--max-call-dirs N] RUN\n"
          "Rebuilds RUN/trace.json from RUN/" REC_FILE_NAME " (after calltrace was killed),\n"
          "and RUN/calls when the run recorded arguments (-A, -R).\n"
          "  -q, --quiet      do not print the closing line\n"
          "  -z, --compress   write RUN/trace.json.gz instead (gzip; Perfetto reads it)\n"
          "  --max-call-dirs N  call folders per function (default 1000, 0: no limit)\n",
          f);
}

int cmd_export(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"quiet", no_argument, NULL, 'q'},
        {"compress", no_argument, NULL, 'z'},
        {"max-call-dirs", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int quiet = 0, compress = 0, c;
    long long max_dirs = CALL_DIRS_DEFAULT;
    while ((c = getopt_long(argc, argv, "qzh", longopts, NULL)) != -1) {
        if (c == 'm') {
            if (cli_number("--max-call-dirs", optarg, 0, UINT32_MAX, &max_dirs) < 0)
                return 2;
        } else if (c == 'q') {
            quiet = 1;
        } else if (c == 'z') {
            compress = 1;
        } else if (c == 'h') {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc - 1) {
        err_hint("give one run directory", "export: %s",
                 optind == argc ? "missing RUN" : "too many arguments");
        return 2;
    }
    const char *run = argv[optind];
    struct stat st;
    if (stat(run, &st) < 0 || !S_ISDIR(st.st_mode)) {
        err_msg("%s: %s", run, stat(run, &st) < 0 ? strerror(errno) : "not a run directory");
        return 1;
    }
    struct trace_json_stats stats;
    if (trace_json_export(run, compress, &stats) < 0)
        return 1;
    if (stats.record_damaged)
        err_msg("%s: the record ends %s; the trace holds everything before that", run,
                stats.record_damaged == 1 ? "in the middle of an event" : "with damaged data");
    if (!quiet)
        fprintf(stderr, "calltrace: trace in %s/%s: %llu calls\n", run, stats.file_name,
                (unsigned long long)stats.calls);
    struct call_dirs_stats dirs; /* -A/-R runs: the call folders too */
    if (call_dirs_export(run, (unsigned)max_dirs, &dirs) < 0)
        return 1;
    if (!quiet && dirs.calls)
        call_dirs_print_summary(run, &dirs, (unsigned)max_dirs);
    return 0;
}
