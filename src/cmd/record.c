/* calltrace [OPTIONS] PROGRAM [ARGS...]: run a program under the tracer and write its run
 * directory. */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <bsd/stdlib.h>
#include <bsd/string.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "engine/engine.h"
#include "engine/launch.h"
#include "output/call_dirs.h"
#include "inject/inject.h"
#include "output/run_dir.h"
#include "output/trace_json.h"
#include "record/format.h"
#include "record/writer.h"
#include "symbols/elf_image.h"
#include "util/duration.h"
#include "util/log.h"
#include "view/view.h"

#ifndef CALLTRACE_VERSION
#define CALLTRACE_VERSION "0.1.0"
#endif

struct record_cli {
    struct record_options opts;
    const char *output;
    bool quiet;
    pid_t attach_pid;      /* -p */
    unsigned duration;     /* -t, seconds; 0: until stopped */
    bool compress;         /* -z: trace.json.gz */
    bool open;             /* --open: show the trace in Perfetto once recorded */
    uint32_t max_depth;    /* -D; 0: no limit */
    uint64_t min_duration; /* --min-duration, ns; 0: no minimum */
    struct view_options view;
    unsigned max_call_dirs; /* --max-call-dirs; 0: no cap */
    char **program_argv;
};

/* Long options without a short form; the view options' codes (view.h) are above these. */
enum {
    OPT_NO_FOLLOW = 256,
    OPT_OPEN,
    OPT_STRING_MAX,
    OPT_CAPTURE,
    OPT_MAX_CALL_DIRS,
    OPT_MIN_DURATION,
    OPT_ENGINE,
    OPT_BUFFER_SIZE,
};

static void usage(FILE *f)
{
    fputs("usage: calltrace [OPTIONS] [--] PROGRAM [ARGS...]\n"
          "       calltrace [OPTIONS] -p PID\n"
          "       calltrace export [-z] RUN\n"
          "       calltrace view [OPTIONS] [RUN|FILE|DIR]\n"
          "\n"
          "Runs PROGRAM under ptrace and records every call of the functions of its executable\n"
          "(and of the libraries -l names) into a run directory (trace.json for\n"
          "ui.perfetto.dev, and the binary record).\n"
          "\n"
          "With -p, attaches to the running process PID and all its threads instead, and\n"
          "detaches on Ctrl-C, SIGTERM, SIGHUP or -t, leaving it running as before.\n"
          "\n"
          "Options:\n"
          "  -p, --pid PID      attach to a running process instead of starting one\n"
          "  -t, --duration S   with -p: detach after S seconds\n"
          "  -o, --output DIR   run directory (default ./" RUN_DIR_DEFAULT "; an existing one is\n"
          "                     never overwritten: DIR-1, DIR-2, ... are used instead)\n"
          "  -F, --filter GLOB  trace only functions whose (demangled) name matches GLOB;\n"
          "                     repeatable\n"
          "  -N, --exclude GLOB never trace functions matching GLOB (they get no\n"
          "                     breakpoint, so they cost nothing); repeatable\n"
          "  -D, --max-depth N  record only calls at most N deep in their thread (1: the\n"
          "                     outermost); deeper calls are still followed, not written\n"
          "      --min-duration TIME\n"
          "                     record only calls that last at least TIME (250ns, 50us, 2ms,\n"
          "                     1s), with the calls that lead to them\n"
          "  -l, --lib GLOB     also trace the functions of the shared libraries whose file\n"
          "                     name or soname matches GLOB (-l 'libsqlite3*'), loaded at\n"
          "                     start-up or later by dlopen; -F/-N apply to them too;\n"
          "                     repeatable\n"
          "  -A, --args[=GLOB]  record the arguments of the traced functions matching GLOB (all\n"
          "                     without GLOB; -AGLOB or --args=GLOB; repeatable), typed by\n"
          "                     their DWARF; in trace.json and RUN/calls/FUNC/N/call.json\n"
          "  -R, --retval       record return values too (of the -A functions, or of all)\n"
          "      --string-max N bytes of a char * string to record (default 64, at most 4096)\n"
          "      --capture FUNC:BUF:LEN  record the LEN bytes parameter BUF of FUNC points to;\n"
          "                     LEN names a parameter or is a number (repeatable)\n"
          "      --max-call-dirs N  call folders per function (default 1000, 0: no limit)\n"
          "      --no-follow    trace only PROGRAM's own process: its children run free of\n"
          "                     every breakpoint (threads are always traced)\n"
          "      --engine=E     ptrace (the default): a breakpoint stop per call, traces\n"
          "                     everything; inject: records inside the program through\n"
          "                     patched entries, ~1000x faster; launch only; forked\n"
          "                     children until they exec, and programs it cannot handle\n"
          "                     yet (static, C++ exceptions, backtrace) fall back to ptrace\n"
          "      --buffer-size N  with --engine=inject: each thread's ring, in bytes (K, M\n"
          "                     suffixes; default 8M); a thread with a full ring waits for\n"
          "                     calltrace, at most 200 ms, then drops calls and says so\n"
          "  -q, --quiet        do not print the closing summary line\n"
          "  -z, --compress     write trace.json.gz (gzip) instead of trace.json\n"
          "  --open             then serve the trace and open it in Perfetto, as `view` does;\n"
          "                     with --open, the options of `view` below apply\n"
          "  -v, --verbose      explain skipped functions and uncatchable returns (repeat for\n"
          "                     more detail)\n"
          "  -h, --help         show this help and exit\n"
          "  -V, --version      show the version and exit\n"
          "\n"
          "Subcommands:\n"
          "  export RUN         rebuild RUN/trace.json from RUN/" REC_FILE_NAME "\n"
          "  report [RUN]       calls and inclusive/self time per function\n"
          "  graph [RUN]        the call graph in Graphviz DOT (-o FILE.svg renders it)\n"
          "  tree [RUN]         each thread's calls as an indented tree with durations\n"
          "  merge RUN... -o OUT  combine runs into one run directory\n"
          "  calls [RUN] [FUNC N]  the recorded arguments: per function, or one call\n"
          "  view [RUN]         open a recorded run in Perfetto (calltrace view --help)\n"
          "\n"
          "Options of --open and view:\n" VIEW_OPTIONS_HELP "\n"
          "The exit status is PROGRAM's own, 128+N when it was killed by signal N.\n",
          f);
}

static int add_glob(struct record_options *o, int opt, const char *glob)
{
    struct func_filter *f = &o->filter;
    const char **list = opt == 'F' ? f->only : opt == 'N' ? f->exclude : o->libs;
    size_t *n = opt == 'F' ? &f->nonly : opt == 'N' ? &f->nexclude : &o->nlibs;
    if (!*glob) {
        err_msg("-%c: empty pattern", opt);
        return -1;
    }
    if (*n == FUNC_FILTER_MAX) {
        err_hint("combine them into fewer patterns", "-%c: more than %d patterns", opt,
                 FUNC_FILTER_MAX);
        return -1;
    }
    list[(*n)++] = glob;
    return 0;
}

/* -A, -R, --string-max, --capture, --max-call-dirs. */
static int capture_option(struct record_cli *cli, int opt, const char *arg)
{
    struct capture_options *o = &cli->opts.capture;
    char why[160];
    const char *errstr;
    switch (opt) {
    case 'A':
        o->args = true;
        if (!arg)
            return 0;
        if (capture_glob_check(arg, why, sizeof(why)) < 0) {
            err_hint("give a glob such as 'parse_*'", "-A %s: %s", arg, why);
            return -1;
        }
        if (o->nglobs == CAPTURE_GLOBS_MAX) {
            err_hint("combine them into fewer patterns", "-A: more than %d patterns",
                     CAPTURE_GLOBS_MAX);
            return -1;
        }
        o->globs[o->nglobs++] = arg;
        return 0;
    case 'R':
        o->retval = true;
        return 0;
    case OPT_STRING_MAX:
        o->string_max = (unsigned)strtonum(arg, 1, CAPTURE_STRING_MAX, &errstr);
        if (errstr) {
            err_hint("give a byte count from 1 to 4096", "--string-max %s: %s", arg, errstr);
            return -1;
        }
        return 0;
    case OPT_CAPTURE:
        if (o->nrules == CAPTURE_RULES_MAX) {
            err_msg("--capture: more than %d rules", CAPTURE_RULES_MAX);
            return -1;
        }
        if (capture_rule_parse(arg, &o->rules[o->nrules], why, sizeof(why)) < 0) {
            err_hint("write it FUNC:BUF:LEN, e.g. --capture 'write_block:buf:len'",
                     "--capture %s: %s", arg, why);
            return -1;
        }
        o->nrules++;
        return 0;
    default:
        cli->max_call_dirs = (unsigned)strtonum(arg, 0, UINT32_MAX, &errstr);
        if (errstr) {
            err_hint("give a number of calls, 0 for no limit", "--max-call-dirs %s: %s", arg,
                     errstr);
            return -1;
        }
        return 0;
    }
}

/* "8M", "512K", "1048576": bytes, within the inject engine's limits. */
static int parse_buffer_size(const char *arg, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    unsigned long long unit = 1;
    if (*end == 'K' || *end == 'k')
        unit = 1024, end++;
    else if (*end == 'M' || *end == 'm')
        unit = 1024 * 1024, end++;
    else if (*end == 'G' || *end == 'g')
        unit = 1024 * 1024 * 1024, end++;
    if (errno || end == arg || *end || !isdigit((unsigned char)*arg) || v > INJECT_BUFFER_MAX ||
        v * unit < INJECT_BUFFER_MIN || v * unit > INJECT_BUFFER_MAX) {
        err_hint("give a size from 64K to 1G, such as 8M", "--buffer-size %s: not a valid size",
                 arg);
        return -1;
    }
    *out = (size_t)(v * unit);
    return 0;
}

static int parse_engine(const char *arg, bool *inject)
{
    if (strcmp(arg, "inject") == 0 || strcmp(arg, "ptrace") == 0) {
        *inject = strcmp(arg, "inject") == 0;
        return 0;
    }
    err_hint("use --engine=ptrace or --engine=inject", "--engine %s: unknown engine", arg);
    return -1;
}

/* What the inject engine does not do yet is refused before anything starts. */
static int check_engine_options(const struct record_cli *cli)
{
    const struct record_options *o = &cli->opts;
    const char *unsupported = NULL;
    if (o->buffer_size && !o->inject) {
        err_hint("add --engine=inject", "--buffer-size: only applies with --engine=inject");
        return -1;
    }
    if (!o->inject)
        return 0;
    if (cli->attach_pid)
        unsupported = "-p (attaching)";
    else if (o->capture.args || o->capture.retval)
        unsupported = "-A/-R (arguments and return values)";
    else if (o->nlibs)
        unsupported = "-l (shared libraries)";
    if (!unsupported)
        return 0;
    err_hint("use --engine=ptrace", "--engine=inject: %s is not supported yet", unsupported);
    return -1;
}

static int parse_args(int argc, char **argv, struct record_cli *cli)
{
    /* One option a line, although VIEW_LONG_OPTIONS is not a brace. */
    /* clang-format off */
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"pid", required_argument, NULL, 'p'},
        {"duration", required_argument, NULL, 't'},
        {"no-follow", no_argument, NULL, OPT_NO_FOLLOW},
        {"engine", required_argument, NULL, OPT_ENGINE},
        {"buffer-size", required_argument, NULL, OPT_BUFFER_SIZE},
        {"filter", required_argument, NULL, 'F'},
        {"exclude", required_argument, NULL, 'N'},
        {"max-depth", required_argument, NULL, 'D'},
        {"min-duration", required_argument, NULL, OPT_MIN_DURATION},
        {"lib", required_argument, NULL, 'l'},
        {"args", optional_argument, NULL, 'A'},
        {"retval", no_argument, NULL, 'R'},
        {"string-max", required_argument, NULL, OPT_STRING_MAX},
        {"capture", required_argument, NULL, OPT_CAPTURE},
        {"max-call-dirs", required_argument, NULL, OPT_MAX_CALL_DIRS},
        {"quiet", no_argument, NULL, 'q'},
        {"compress", no_argument, NULL, 'z'},
        {"open", no_argument, NULL, OPT_OPEN},
        VIEW_LONG_OPTIONS,
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    /* clang-format on */
    int c;
    opterr = 0;
    const char *errstr;
    while ((c = getopt_long(argc, argv, "+:o:p:t:F:N:D:l:A::RqzvhV", longopts, NULL)) != -1) {
        int view_opt = view_option(&cli->view, c, optarg);
        if (view_opt < 0)
            return -1;
        if (view_opt)
            continue;
        switch (c) {
        case 'o':
            if (!*optarg) {
                err_msg("-o: empty directory name");
                return -1;
            }
            cli->output = optarg;
            break;
        case 'p':
            cli->attach_pid = (pid_t)strtonum(optarg, 1, INT32_MAX, &errstr);
            if (errstr) {
                err_hint("give the number of a running process", "-p %s: process id is %s", optarg,
                         errstr);
                return -1;
            }
            break;
        case 't':
            cli->duration = (unsigned)strtonum(optarg, 1, 31 * 24 * 3600, &errstr);
            if (errstr) {
                err_hint("give a whole number of seconds, at least 1", "-t %s: duration is %s",
                         optarg, errstr);
                return -1;
            }
            break;
        case 'F':
        case 'N':
        case 'l':
            if (add_glob(&cli->opts, c, optarg) < 0)
                return -1;
            break;
        case 'D':
            cli->max_depth = (uint32_t)strtonum(optarg, 1, 1000000, &errstr);
            if (errstr) {
                err_hint("give a depth of at least 1; 1 keeps only the outermost calls",
                         "-D %s: depth is %s", optarg, errstr);
                return -1;
            }
            break;
        case OPT_MIN_DURATION:
            if (duration_parse(optarg, &cli->min_duration) < 0) {
                err_hint("give a number with a unit: 250ns, 50us, 2ms, 1s",
                         "--min-duration %s: not a duration", optarg);
                return -1;
            }
            break;
        case 'A':
        case 'R':
        case OPT_STRING_MAX:
        case OPT_CAPTURE:
        case OPT_MAX_CALL_DIRS:
            if (capture_option(cli, c, optarg) < 0)
                return -1;
            break;
        case 'q':
            cli->quiet = true;
            break;
        case OPT_NO_FOLLOW:
            cli->opts.follow_forks = false;
            break;
        case OPT_ENGINE:
            if (parse_engine(optarg, &cli->opts.inject) < 0)
                return -1;
            break;
        case OPT_BUFFER_SIZE:
            if (parse_buffer_size(optarg, &cli->opts.buffer_size) < 0)
                return -1;
            break;
        case 'z':
            cli->compress = true;
            break;
        case OPT_OPEN:
            cli->open = true;
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
    if (cli->opts.capture.nrules && !cli->opts.capture.args) {
        err_hint("add -A (or -A FUNC)", "--capture: only with -A, which records arguments");
        return -1;
    }
    if (cli->view.given && !cli->open) {
        err_hint("add --open, or use calltrace view", "%s: only with --open", cli->view.given);
        return -1;
    }
    if (cli->attach_pid && optind < argc) {
        err_hint("use either -p PID or a program to start", "%s: unexpected with -p", argv[optind]);
        return -1;
    }
    if (check_engine_options(cli) < 0)
        return -1;
    if (cli->duration && !cli->attach_pid) {
        err_hint("a started program runs until it ends; -t goes with -p",
                 "-t: only applies with -p PID");
        return -1;
    }
    if (!cli->attach_pid && optind >= argc) {
        err_hint("usage: calltrace [OPTIONS] PROGRAM [ARGS...]", "no program to trace");
        return -1;
    }
    cli->program_argv = argv + optind;
    return 0;
}

/* What calltrace's signal handlers may touch: a handler cannot be given a context struct. */
static volatile sig_atomic_t stop_signal;
static volatile pid_t traced_pid;   /* launched: ended on a stop signal */
static volatile pid_t attached_pid; /* attached: interrupted, then released */

static void on_stop_signal(int sig)
{
    stop_signal = sig;
    /* Closes the race with the loop's check: waitpid returns once the program stops or is
     * gone, even if the signal came just before calltrace went to wait. */
    if (traced_pid > 0)
        kill(traced_pid, SIGKILL);
    if (attached_pid > 0)
        ptrace(PTRACE_INTERRUPT, attached_pid, 0, 0);
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
    sigaction(SIGALRM, &sa, NULL); /* -t */
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

/* Bit i: globs[i] matches a traceable function of image. */
static uint64_t glob_hits(const struct elf_image *image, const char *const *globs, size_t n)
{
    uint64_t hits = 0;
    for (size_t i = 0; i < image->nfuncs; i++)
        if (!image->funcs[i].skipped)
            hits |= func_filter_glob_hits(globs, n, image->funcs[i].name);
    return hits;
}

/* A pattern that matches nothing is most likely a typo: say so, and what there is. */
static void warn_unmatched(const struct elf_image *image, int opt, const char *const *globs,
                           size_t n)
{
    uint64_t hits = glob_hits(image, globs, n);
    for (size_t g = 0; g < n; g++) {
        if (hits & (1ull << g))
            continue;
        char some[256] = "";
        size_t shown = 0;
        for (size_t i = 0; i < image->nfuncs && shown < 6; i++) {
            if (image->funcs[i].skipped)
                continue;
            strlcat(some, shown++ ? ", " : "", sizeof(some));
            strlcat(some, image->funcs[i].name, sizeof(some));
        }
        err_msg("warning: -%c %s: matches no function of %s (it has %s%s)", opt, globs[g],
                image->path, some, shown < (size_t)count_traceable(image) ? ", ..." : "");
    }
}

/* Validates the program before anything is created: every bad input is one line, no run dir.
 * With -l, the libraries are only known once the program runs: the patterns are checked at the
 * end (warn_unmatched_at_end), and an executable without symbols is fine. */
static int check_program(const char *program, const struct record_cli *cli, char *path,
                         size_t pathlen)
{
    const struct record_options *opts = &cli->opts;
    const struct func_filter *filter = &opts->filter;
    char image_path[PATH_MAX];
    if (launch_resolve(program, path, pathlen, image_path, sizeof(image_path)) < 0)
        return -1;
    struct elf_image image;
    if (elf_image_load(&image, image_path) < 0)
        return -1;
    int n = count_traceable(&image);
    if (cli->opts.nlibs) {
        elf_image_free(&image);
        return 0;
    }
    warn_unmatched(&image, 'F', filter->only, filter->nonly);
    warn_unmatched(&image, 'N', filter->exclude, filter->nexclude);
    warn_unmatched(&image, 'A', opts->capture.globs, opts->capture.nglobs);
    char why[256];
    int unmatched;
    if (capture_rules_check(&opts->capture, &image, &unmatched, why, sizeof(why)) < 0) {
        err_hint("name a pointer parameter, then an integer one or a byte count", "--capture: %s",
                 why);
        elf_image_free(&image);
        return -1;
    }
    if (unmatched >= 0)
        err_msg("warning: --capture %s: matches no function of %s",
                opts->capture.rules[unmatched].func, image.path);
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

/* The rank of this process in an MPI (or Slurm) job, so that ranks never share a run directory;
 * NULL outside such a job, or when the value is not a plain number. */
static const char *mpi_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (v && *v && strlen(v) < 12 && strspn(v, "0123456789") == strlen(v))
            return v;
    }
    return NULL;
}

static int exit_code_of(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}

static void warn_globs(int opt, const char *const *globs, size_t n, uint64_t matched,
                       const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (!(matched & (1ull << i)))
            err_msg("warning: -%c %s: matches no %s", opt, globs[i], what);
}

/* With -l: the patterns that found nothing in the whole run, and the libraries it loaded. */
static void warn_unmatched_at_end(const struct record_cli *cli, const struct session *s)
{
    const struct record_options *o = &cli->opts;
    if (!o->nlibs)
        return;
    char what[700];
    snprintf(what, sizeof(what), "library the program loaded (it loaded %s)",
             *s->libs_seen ? s->libs_seen : "none");
    warn_globs('l', o->libs, o->nlibs, s->lib_globs_matched, what);
    const char *fwhat = "function of the program nor of the libraries -l selected";
    warn_globs('F', o->filter.only, o->filter.nonly, s->only_matched, fwhat);
    warn_globs('N', o->filter.exclude, o->filter.nexclude, s->exclude_matched, fwhat);
}

static void print_summary(const char *run, const struct trace_json_stats *stats,
                          const struct session *s, const struct call_gate *gate)
{
    fprintf(stderr, "calltrace: trace in %s/%s: %llu calls", run, stats->file_name,
            (unsigned long long)stats->calls);
    if (stats->unfinished)
        fprintf(stderr, " (%llu unfinished)", (unsigned long long)stats->unfinished);
    fprintf(stderr, ", %llu thread%s, %llu process%s\n", (unsigned long long)stats->threads,
            stats->threads == 1 ? "" : "s", (unsigned long long)stats->processes,
            stats->processes == 1 ? "" : "es");
    if (gate && gate->dropped_deep)
        fprintf(stderr, "calltrace: %llu calls deeper than -D %u left out\n",
                (unsigned long long)gate->dropped_deep, gate->max_depth);
    if (gate && gate->dropped_short)
        fprintf(stderr, "calltrace: %llu calls shorter than --min-duration left out\n",
                (unsigned long long)gate->dropped_short);
    if (s->untraced_processes)
        fprintf(stderr, "calltrace: the calls of %llu process%s could not be recorded\n",
                (unsigned long long)s->untraced_processes, s->untraced_processes == 1 ? "" : "es");
    uint64_t dropped = inject_dropped_calls(s);
    if (dropped)
        fprintf(stderr,
                "calltrace: %llu calls or returns were not recorded (a thread's ring stayed "
                "full, its shadow stack was full, or a vfork child made them)\n",
                (unsigned long long)dropped);
    if (s->skipped_functions)
        fprintf(stderr, "calltrace: %llu functions could not be traced safely (-v says which)\n",
                (unsigned long long)s->skipped_functions);
}

/* The detach comes before any output is written, so a failure to write cannot keep the
 * program stopped; the record written so far is complete up to that moment. */
static int run_attached(struct record_cli *cli, struct session *s)
{
    if (engine_attach(s, cli->attach_pid) < 0)
        return -1;
    attached_pid = cli->attach_pid;
    if (cli->duration)
        alarm(cli->duration);
    engine_loop(s);
    alarm(0);
    attached_pid = 0;
    if (s->live_processes && engine_detach(s) < 0)
        s->detach_failed = true;
    engine_finish(s);
    return 0;
}

static int run_traced(struct record_cli *cli, const char *path, const char *run,
                      struct recorder *rec, const struct clock_calibration *clock,
                      struct session *s)
{
    if (session_init(s, &cli->opts, rec, clock, &stop_signal) < 0) {
        err_msg("cannot start the instruction decoder (capstone)");
        return -1;
    }
    if (cli->opts.inject && !(s->inject = inject_engine_new(cli->opts.buffer_size))) {
        err_msg("out of memory");
        return -1;
    }
    if (cli->attach_pid)
        return run_attached(cli, s);
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
                      const struct record_cli *cli)
{
    int rec_error = recorder_close(rec);
    if (rec_error)
        err_hint(rec_error == ENOSPC ? "free some space; the trace holds what was recorded" : NULL,
                 "writing %s/%s: %s", run, REC_FILE_NAME, strerror(rec_error));
    warn_unmatched_at_end(cli, s);
    struct trace_json_stats stats;
    if (trace_json_export(run, cli->compress, &stats) < 0)
        return -1;
    struct call_dirs_stats dirs = {0};
    bool captured = cli->opts.capture.args || cli->opts.capture.retval;
    int dirs_rc = captured ? call_dirs_export(run, cli->max_call_dirs, &dirs) : 0;
    if (!cli->quiet)
        print_summary(run, &stats, s, rec->gate);
    if (!cli->quiet && captured)
        call_dirs_print_summary(run, &dirs, cli->max_call_dirs);
    return rec_error || dirs_rc < 0 ? -1 : 0;
}

/* -D and --min-duration sit between the engine and the record (record/call_gate.h). */
static int start_call_gate(const struct record_cli *cli, const struct clock_calibration *clock,
                           struct call_gate *gate, struct recorder *rec)
{
    if (!cli->max_depth && !cli->min_duration)
        return 0;
    uint64_t min_ticks = 0;
    if (cli->min_duration)
        min_ticks = (uint64_t)fmax(ceil((double)cli->min_duration / clock->ns_per_tick), 1);
    if (call_gate_init(gate, cli->max_depth, min_ticks) < 0) {
        err_msg("cannot start the call filters: out of memory");
        return -1;
    }
    rec->gate = gate;
    return 0;
}

int cmd_record(int argc, char **argv)
{
    struct record_cli cli = {
        .opts = {.follow_forks = true, .capture = {.string_max = CAPTURE_STRING_DEFAULT}},
        .max_call_dirs = CALL_DIRS_DEFAULT};
    view_options_init(&cli.view);
    if (parse_args(argc, argv, &cli) < 0)
        return 2;
    log_set_verbosity(cli.opts.verbose);
    /* Before the run directory exists: a Ctrl-C from now on ends the run cleanly (the program
     * is never started, or is detached) instead of leaving a record without its trace. */
    install_handlers();
    char path[PATH_MAX] = "";
    if (!cli.attach_pid && check_program(cli.program_argv[0], &cli, path, sizeof(path)) < 0)
        return 2;
    char run[PATH_MAX], record[PATH_MAX], default_dir[64];
    cli.opts.rank = mpi_rank();
    if (cli.opts.rank)
        snprintf(default_dir, sizeof(default_dir), RUN_DIR_DEFAULT "-rank%s", cli.opts.rank);
    else
        snprintf(default_dir, sizeof(default_dir), RUN_DIR_DEFAULT);
    if (run_dir_create(cli.output ? cli.output : default_dir, run, sizeof(run)) < 0)
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
    struct call_gate gate;
    if (start_call_gate(&cli, &clock, &gate, &rec) < 0) {
        recorder_close(&rec);
        run_dir_discard(run);
        return 2;
    }
    struct session s;
    if (run_traced(&cli, path, run, &rec, &clock, &s) < 0) {
        recorder_close(&rec);
        inject_engine_free(s.inject);
        session_free(&s);
        if (rec.gate)
            call_gate_free(rec.gate);
        run_dir_discard(run);
        return 2;
    }
    int failed = finish_run(run, &rec, &s, &cli);
    inject_engine_free(s.inject);
    session_free(&s);
    if (rec.gate)
        call_gate_free(rec.gate);
    /* Also after Ctrl-C stopped the program: stopping a long run to look at it is common. */
    if (!failed && cli.open && view_open(run, &cli.view) < 0)
        failed = 1;
    if (cli.attach_pid) /* the program is not ours: its status is not calltrace's */
        return failed || s.detach_failed ? 1 : 0;
    if (stop_signal)
        return 128 + stop_signal;
    int code = exit_code_of(s.main_status);
    return failed && code == 0 ? 1 : code;
}
