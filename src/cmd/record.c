/* calltrace [OPTIONS] PROGRAM [ARGS...]: run a program under the tracer and write its run
 * directory. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "engine/engine.h"
#include "engine/launch.h"
#include "output/run_dir.h"
#include "output/trace_json.h"
#include "record/format.h"
#include "record/writer.h"
#include "symbols/elf_image.h"
#include "util/log.h"

#ifndef CALLTRACE_VERSION
#define CALLTRACE_VERSION "0.1.0"
#endif

struct record_cli {
    struct record_options opts;
    const char *output;
    bool quiet;
    char **program_argv;
};

static void usage(FILE *f)
{
    fputs("usage: calltrace [OPTIONS] [--] PROGRAM [ARGS...]\n"
          "       calltrace export RUN\n"
          "\n"
          "Runs PROGRAM under ptrace and records every call of the functions of its executable\n"
          "into a run directory (trace.json for ui.perfetto.dev, and the binary record).\n"
          "\n"
          "Options:\n"
          "  -o, --output DIR   run directory (default ./" RUN_DIR_DEFAULT "; an existing one is\n"
          "                     never overwritten: DIR-1, DIR-2, ... are used instead)\n"
          "  -q, --quiet        do not print the closing summary line\n"
          "  -v, --verbose      explain skipped functions and uncatchable returns (repeat for\n"
          "                     more detail)\n"
          "  -h, --help         show this help and exit\n"
          "  -V, --version      show the version and exit\n"
          "\n"
          "Subcommands:\n"
          "  export RUN         rebuild RUN/trace.json from RUN/" REC_FILE_NAME "\n"
          "\n"
          "The exit status is PROGRAM's own, 128+N when it was killed by signal N.\n",
          f);
}

static int parse_args(int argc, char **argv, struct record_cli *cli)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:o:qvhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            if (!*optarg) {
                err_msg("-o: empty directory name");
                return -1;
            }
            cli->output = optarg;
            break;
        case 'q':
            cli->quiet = true;
            break;
        case 'v':
            cli->opts.verbose++;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        case 'V':
            printf("calltrace %s\n", CALLTRACE_VERSION);
            exit(0);
        case ':':
            err_hint("see calltrace --help", "%s: missing value", argv[optind - 1]);
            return -1;
        default:
            if (strncmp(argv[optind - 1], "--", 2) == 0)
                err_hint("see calltrace --help", "%s: unknown option or unexpected value",
                         argv[optind - 1]);
            else
                err_hint("see calltrace --help", "-%c: unknown option", optopt);
            return -1;
        }
    }
    if (optind >= argc) {
        err_hint("usage: calltrace [OPTIONS] PROGRAM [ARGS...]", "no program to trace");
        return -1;
    }
    cli->program_argv = argv + optind;
    return 0;
}

/* What calltrace's signal handlers may touch: a handler cannot be given a context struct. */
static volatile sig_atomic_t stop_signal;
static volatile pid_t traced_pid;

static void on_stop_signal(int sig)
{
    stop_signal = sig;
    /* Closes the race with the loop's check: waitpid returns once the program is gone. */
    if (traced_pid > 0)
        kill(traced_pid, SIGKILL);
}

static void on_tty_stop(int sig)
{
    (void)sig; /* calltrace stops when the program does, see engine.c */
}

static void install_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_stop_signal; /* no SA_RESTART: waitpid must return EINTR */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = on_tty_stop;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGTSTP, &sa, NULL);
}

static int count_traceable(const struct elf_image *image)
{
    int n = 0;
    for (size_t i = 0; i < image->nfuncs; i++)
        n += !image->funcs[i].skipped;
    return n;
}

/* Validates the program before anything is created: every bad input is one line, no run dir. */
static int check_program(const char *program, char *path, size_t pathlen)
{
    char image_path[PATH_MAX];
    if (launch_resolve(program, path, pathlen, image_path, sizeof(image_path)) < 0)
        return -1;
    struct elf_image image;
    if (elf_image_load(&image, image_path) < 0)
        return -1;
    int n = count_traceable(&image);
    elf_image_free(&image);
    if (n == 0 && strcmp(image_path, path) != 0) {
        err_hint("calltrace traces the interpreter of a script; give it one built with symbols",
                 "%s: its interpreter %s has no function symbols to trace", path, image_path);
        return -1;
    }
    if (n == 0) {
        err_hint("build it with symbols, and do not strip it", "%s: no function symbols to trace",
                 image_path);
        return -1;
    }
    return 0;
}

static int exit_code_of(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}

static void print_summary(const char *run, const struct trace_json_stats *stats,
                          const struct session *s)
{
    fprintf(stderr, "calltrace: trace in %s/%s: %llu calls", run, TRACE_JSON_NAME,
            (unsigned long long)stats->calls);
    if (stats->unfinished)
        fprintf(stderr, " (%llu unfinished)", (unsigned long long)stats->unfinished);
    fprintf(stderr, ", %llu thread%s, %llu process%s\n", (unsigned long long)stats->threads,
            stats->threads == 1 ? "" : "s", (unsigned long long)stats->processes,
            stats->processes == 1 ? "" : "es");
    if (s->untraced_processes)
        fprintf(stderr, "calltrace: the calls of %llu process%s could not be recorded\n",
                (unsigned long long)s->untraced_processes, s->untraced_processes == 1 ? "" : "es");
    if (s->skipped_functions)
        fprintf(stderr, "calltrace: %llu functions could not be traced safely (-v says which)\n",
                (unsigned long long)s->skipped_functions);
}

static int run_traced(struct record_cli *cli, const char *path, const char *run,
                      struct recorder *rec, const struct clock_calibration *clock,
                      struct session *s)
{
    if (session_init(s, &cli->opts, rec, clock, &stop_signal) < 0) {
        err_msg("cannot start the instruction decoder (capstone)");
        return -1;
    }
    install_handlers();
    pid_t pid = launch_program(path, cli->program_argv);
    if (pid < 0)
        return -1;
    traced_pid = pid;
    engine_run(s, pid);
    engine_finish(s);
    traced_pid = 0;
    (void)run;
    return 0;
}

static int finish_run(const char *run, struct recorder *rec, const struct session *s,
                      bool quiet)
{
    int rec_error = recorder_close(rec);
    if (rec_error)
        err_hint(rec_error == ENOSPC ? "free some space; the trace holds what was recorded"
                                     : NULL,
                 "writing %s/%s: %s", run, REC_FILE_NAME, strerror(rec_error));
    struct trace_json_stats stats;
    if (trace_json_export_run(run, &stats) < 0)
        return -1;
    if (!quiet)
        print_summary(run, &stats, s);
    return rec_error ? -1 : 0;
}

int cmd_record(int argc, char **argv)
{
    struct record_cli cli = {.opts = {.follow_forks = true}};
    if (parse_args(argc, argv, &cli) < 0)
        return 2;
    log_set_verbosity(cli.opts.verbose);
    char path[PATH_MAX];
    if (check_program(cli.program_argv[0], path, sizeof(path)) < 0)
        return 2;
    char run[PATH_MAX], record[PATH_MAX];
    if (run_dir_create(cli.output ? cli.output : RUN_DIR_DEFAULT, run, sizeof(run)) < 0)
        return 2;
    struct clock_calibration clock;
    clock_calibrate(&clock);
    struct recorder rec;
    int rc = run_path(record, sizeof(record), run, REC_FILE_NAME) < 0
                 ? -ENAMETOOLONG
                 : recorder_open(&rec, record, &clock);
    if (rc < 0) {
        err_msg("cannot create %s: %s", record, strerror(-rc));
        run_dir_discard(run);
        return 2;
    }
    struct session s;
    if (run_traced(&cli, path, run, &rec, &clock, &s) < 0) {
        recorder_close(&rec);
        session_free(&s);
        run_dir_discard(run);
        return 2;
    }
    int failed = finish_run(run, &rec, &s, cli.quiet);
    session_free(&s);
    if (stop_signal)
        return 128 + stop_signal;
    int code = exit_code_of(s.main_status);
    return failed && code == 0 ? 1 : code;
}
