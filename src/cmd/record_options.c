/* Option parsing of the record command (src/cmd/record.c): every bad input is one line that
 * says what is wrong and how to fix it, before anything starts. */
#include "cmd/record_options.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsd/stdlib.h>

#include "tracer/inject/inject.h"
#include "output/call_dirs.h"
#include "control/launch.h"
#include "output/run_dir.h"
#include "record/format.h"
#include "util/duration.h"
#include "util/log.h"

#ifndef CALLTRACE_VERSION
#define CALLTRACE_VERSION "0.1.0"
#endif

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
    OPT_ATTACH_BREAKPOINTS,
    OPT_FORMAT,
    OPT_SHARE,
    OPT_CALLSITES,
    OPT_TRACE_WRAPPERS,
};

static void usage(FILE *f)
{
    fputs("usage: calltrace [record] [OPTIONS] [--] PROGRAM [ARGS...]\n"
          "       calltrace [record] [OPTIONS] -p PID\n"
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
          "A TIME is a number with a unit, ns, us, ms, s, m or h, or without one, "
          "seconds:\n" DURATION_SYNTAX ".\n"
          "\n"
          "Options:\n"
          "  -p, --pid PID      attach to a running process instead of starting one\n"
          "  -t, --duration TIME  stop tracing after TIME: with -p, detach; a started\n"
          "                     program is left as -p leaves one and runs on untraced:\n"
          "                     the run is written at once, then calltrace waits for the\n"
          "                     program's end (passing SIGTERM and SIGHUP on to it) and\n"
          "                     exits with its status\n"
          "  -o, --output DIR   run directory (default ./" RUN_DIR_DEFAULT "; an existing one is\n"
          "                     never overwritten: DIR-1, DIR-2, ... are used instead);\n"
          "                     private to you (0700, files 0600): it holds what the\n"
          "                     program had in memory\n"
          "      --share        let other users read the run directory (0755 and 0644,\n"
          "                     less the umask)\n"
          "  -F, --filter GLOB  trace only functions whose (demangled) name matches GLOB,\n"
          "                     with or without a C++ parameter list (parse matches\n"
          "                     parse(int)), or one of its aliases (__getpid); repeatable\n"
          "  -N, --exclude GLOB never trace functions matching GLOB (they get no\n"
          "                     breakpoint, so they cost nothing); repeatable\n"
          "  -D, --max-depth N  record only calls at most N deep in their thread (1: the\n"
          "                     outermost); deeper calls are still followed, not written\n"
          "      --min-duration TIME\n"
          "                     record only calls that last at least TIME (250ns, 50us, 2ms,\n"
          "                     0.5), with the calls that lead to them\n"
          "      --callsites    also record where each call was made from (its return\n"
          "                     address, a few bytes a call): tree, calls and export\n"
          "                     --srcline show the line of the call, report --callers\n"
          "                     each function's most frequent call sites\n"
          "  -l, --lib GLOB     also trace the functions of the shared libraries whose file\n"
          "                     name or soname matches GLOB (-l 'libsqlite3*'), loaded at\n"
          "                     start-up or later by dlopen; -F/-N apply to them too;\n"
          "                     repeatable\n"
          "  -L, --lib-calls[=GLOB]  trace the calls the program (and the -l libraries)\n"
          "                     makes into shared libraries, by their public names\n"
          "                     (malloc, strdup, sqlite3_exec), whatever the PLT layout;\n"
          "                     not the libraries' calls among themselves; callbacks nest\n"
          "                     under the library call; GLOB: only the functions matching\n"
          "                     it (-Lmalloc, -L=malloc or --lib-calls='str*'; repeatable);\n"
          "                     -F/-N apply too. Left out: setjmp, vfork, the context\n"
          "                     switches and the unwinder (_Unwind_*,\n"
          "                     __cxa_begin_catch)\n"
          "  -A, --args[=GLOB]  record the arguments of the traced functions matching GLOB (all\n"
          "                     without GLOB; attached: -AGLOB, -A=GLOB or --args=GLOB;\n"
          "                     repeatable), typed by their DWARF; in trace.json and\n"
          "                     RUN/calls/FUNC/N/call.json\n"
          "  -R, --retval       record return values too (of the -A functions, or of all)\n"
          "      --string-max N bytes of a char * string to record (default 64, at most 4096)\n"
          "      --capture FUNC:BUF:LEN  record the LEN bytes parameter BUF of FUNC points to;\n"
          "                     LEN names a parameter or is a number (repeatable)\n"
          "      --max-call-dirs N  call folders per function (default 1000, 0: no limit)\n"
          "      --no-follow    trace only PROGRAM's own process: its children run free of\n"
          "                     every breakpoint (threads are always traced)\n"
          "      --trace-wrappers  trace a wrapper's own functions too: a stripped env,\n"
          "                     nice, timeout, runuser, sh -c or script interpreter (all\n"
          "                     its functions func_0xADDRESS) that runs a program is\n"
          "                     otherwise followed untraced to the program it runs\n"
          "      --engine=E     inject (the default): records inside the program through\n"
          "                     patched entries, tens of ns a call; forked children until\n"
          "                     they exec, programs it cannot handle (static, swapcontext)\n"
          "                     and functions it cannot patch get the ptrace engine's\n"
          "                     breakpoints (-v says which); ptrace: a breakpoint stop\n"
          "                     per entry and return (~25 us a call) for everything\n"
          "                     (with -p, the inject engine plants no breakpoint: what it\n"
          "                     cannot patch is left out, forked children run untraced)\n"
          "      --attach-breakpoints  with -p and the inject engine: give what it cannot\n"
          "                     patch breakpoints anyway, and trace forked children; the\n"
          "                     program then dies of SIGTRAP if calltrace is killed\n"
          "      --buffer-size N  inject engine: each thread's ring, in bytes (K, M\n"
          "                     suffixes; default 8M); a thread with a full ring waits for\n"
          "                     calltrace to drain it; after 200 ms without, it drops\n"
          "                     calls and says so\n"
          "  -q, --quiet        do not print the closing summary line, nor the notes of\n"
          "                     what the inject engine hands to the ptrace engine\n"
          "      --format F     the trace to write: json (trace.json), perfetto\n"
          "                     (trace.pftrace, Perfetto's protobuf, 4x smaller and faster),\n"
          "                     or both; by default trace.json up to 8 million calls (about\n"
          "                     1 GB, what Perfetto's browser UI opens), trace.pftrace beyond\n"
          "  -z, --compress     gzip the trace: trace.json.gz or trace.pftrace.gz\n"
          "  --open             then serve the trace and open it in Perfetto, as `view` does;\n"
          "                     with --open, the options of `view` below apply\n"
          "  -v, --verbose      explain skipped functions and uncatchable returns (repeat for\n"
          "                     more detail)\n"
          "  -h, --help         show this help and exit\n"
          "  -V, --version      show the version and exit\n"
          "\n"
          "Subcommands:\n"
          "  export RUN         rebuild RUN's trace (json or perfetto) from RUN/" REC_FILE_NAME
          ", all\n"
          "                     of it or a window (--from, --to, --tid, -F, --max-calls)\n"
          "  report [RUN]       calls and inclusive/self time per function\n"
          "  graph [RUN]        the call graph in Graphviz DOT (-o FILE.svg renders it)\n"
          "  tree [RUN]         each thread's calls as an indented tree with durations\n"
          "  merge RUN... -o OUT  combine runs into one run directory\n"
          "  calls [RUN] [FUNC N]  the recorded arguments: per function, or one call\n"
          "  view [RUN]         open a recorded run in Perfetto (calltrace view --help)\n"
          "\n"
          "Options of --open and view:\n" VIEW_OPTIONS_HELP "\n"
          "A stripped program or library is traced from its unwind table: a function not\n"
          "exported is named func_0xADDRESS (its address in the file, as nm shows it). Debug\n"
          "files give the names back: found by build ID and .gnu_debuglink beside the file\n"
          "and under /usr/lib/debug (or the directories of $CALLTRACE_DEBUG_DIRS), and from\n"
          "debuginfod when $DEBUGINFOD_URLS is set.\n"
          "\n"
          "The exit status is PROGRAM's own, 128+N when it was killed by signal N.\n",
          f);
}

static int add_glob(struct trace_options *o, int opt, const char *glob)
{
    struct func_filter *f = &o->filter;
    const char **list = opt == 'F' ? f->only : opt == 'N' ? f->exclude : o->libs;
    size_t *n = opt == 'F' ? &f->nonly : opt == 'N' ? &f->nexclude : &o->nlibs;
    return glob_list_add(list, n, opt, glob);
}

/* -A, -R, --string-max, --capture, --max-call-dirs. */
static int capture_option(struct record_cli *cli, int opt, const char *arg)
{
    struct capture_options *o = &cli->opts.trace.capture;
    char why[160];
    const char *errstr;
    switch (opt) {
    case 'A':
        o->args = true;
        if (!arg)
            return 0;
        if (*arg == '=') /* -A=GLOB, as --args=GLOB is written: the '=' is no part of it */
            arg++;
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
    if (cli->opts.buffer_size && !cli->opts.inject) {
        err_hint("leave out --engine=ptrace", "--buffer-size: only applies to the inject engine");
        return -1;
    }
    return 0;
}

/* -A and -L (--args, --lib-calls) take their GLOB attached (-AGLOB, --args=GLOB): "--args GLOB
 * PROGRAM" traces the program GLOB. When that word names no program, it was most likely meant
 * as the GLOB. */
static int check_detached_glob(char **argv, int word)
{
    const char *glob = argv[word], *opt = argv[word - 1];
    if (launch_findable(glob))
        return 0;
    bool is_long = opt[1] == '-';
    /* the option itself: --args, or the last of a cluster of short ones (-RA: -A) */
    char name[32];
    snprintf(name, sizeof(name), is_long ? "%s" : "-%s", is_long ? opt : opt + strlen(opt) - 1);
    char hint[PATH_MAX];
    const char *quote = strpbrk(glob, "*?[ ") ? "'" : "";
    snprintf(hint, sizeof(hint), "write %s%s%s%s%s, then the program", name, is_long ? "=" : "",
             quote, glob, quote);
    err_hint(hint, "%s %s: no program '%s' to trace; a GLOB of %s is written attached", opt, glob,
             glob, name);
    return -1;
}

int record_parse_args(int argc, char **argv, struct record_cli *cli)
{
    /* One option a line, although VIEW_LONG_OPTIONS is not a brace. */
    /* clang-format off */
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"share", no_argument, NULL, OPT_SHARE},
        {"pid", required_argument, NULL, 'p'},
        {"duration", required_argument, NULL, 't'},
        {"no-follow", no_argument, NULL, OPT_NO_FOLLOW},
        {"trace-wrappers", no_argument, NULL, OPT_TRACE_WRAPPERS},
        {"attach-breakpoints", no_argument, NULL, OPT_ATTACH_BREAKPOINTS},
        {"engine", required_argument, NULL, OPT_ENGINE},
        {"buffer-size", required_argument, NULL, OPT_BUFFER_SIZE},
        {"filter", required_argument, NULL, 'F'},
        {"exclude", required_argument, NULL, 'N'},
        {"max-depth", required_argument, NULL, 'D'},
        {"min-duration", required_argument, NULL, OPT_MIN_DURATION},
        {"callsites", no_argument, NULL, OPT_CALLSITES},
        {"lib", required_argument, NULL, 'l'},
        {"lib-calls", optional_argument, NULL, 'L'},
        {"args", optional_argument, NULL, 'A'},
        {"retval", no_argument, NULL, 'R'},
        {"string-max", required_argument, NULL, OPT_STRING_MAX},
        {"capture", required_argument, NULL, OPT_CAPTURE},
        {"max-call-dirs", required_argument, NULL, OPT_MAX_CALL_DIRS},
        {"quiet", no_argument, NULL, 'q'},
        {"compress", no_argument, NULL, 'z'},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"open", no_argument, NULL, OPT_OPEN},
        VIEW_LONG_OPTIONS,
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    /* clang-format on */
    int c;
    int bare_args_end = 0; /* after a -A without its GLOB: the index of the next word */
    opterr = 0;
    const char *errstr;
    while ((c = getopt_long(argc, argv, "+:o:p:t:F:N:D:l:L::A::RqzvhV", longopts, NULL)) != -1) {
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
            if (duration_parse(optarg, &cli->duration_ns) < 0 || !cli->duration_ns) {
                err_hint("give a time over 0: " DURATION_SYNTAX, "-t %s: not a duration", optarg);
                return -1;
            }
            break;
        case 'F':
        case 'N':
        case 'l':
            if (add_glob(&cli->opts.trace, c, optarg) < 0)
                return -1;
            break;
        case 'L':
            cli->opts.trace.lib_calls = true;
            if (optarg &&
                glob_list_add(cli->opts.trace.lib_call_globs, &cli->opts.trace.nlib_call_globs, 'L',
                              *optarg == '=' ? optarg + 1 : optarg) < 0)
                return -1;
            bare_args_end = optarg ? 0 : optind;
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
                err_hint("give a duration: " DURATION_SYNTAX, "--min-duration %s: not a duration",
                         optarg);
                return -1;
            }
            break;
        case OPT_CALLSITES:
            cli->callsites = true;
            break;
        case 'A':
        case 'R':
        case OPT_STRING_MAX:
        case OPT_CAPTURE:
        case OPT_MAX_CALL_DIRS:
            if (capture_option(cli, c, optarg) < 0)
                return -1;
            if (c == 'A')
                bare_args_end = optarg ? 0 : optind;
            break;
        case 'q':
            cli->quiet = cli->opts.trace.quiet = true;
            break;
        case OPT_SHARE:
            cli->share = true;
            break;
        case OPT_NO_FOLLOW:
            cli->opts.trace.follow_forks = false;
            break;
        case OPT_TRACE_WRAPPERS:
            cli->opts.trace.trace_wrappers = true;
            break;
        case OPT_ATTACH_BREAKPOINTS:
            cli->opts.trace.attach_breakpoints = true;
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
        case OPT_FORMAT:
            if (trace_format_option(optarg, &cli->format) < 0)
                return -1;
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
    if (cli->opts.trace.capture.nrules && !cli->opts.trace.capture.args) {
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
    if (bare_args_end == optind && optind < argc && check_detached_glob(argv, optind) < 0)
        return -1;
    if (check_engine_options(cli) < 0)
        return -1;
    if (cli->opts.trace.attach_breakpoints && (!cli->attach_pid || !cli->opts.inject)) {
        err_hint("a started program, and the ptrace engine, always have them",
                 "--attach-breakpoints: only applies with -p PID and the inject engine");
        return -1;
    }
    if (!cli->attach_pid && optind >= argc) {
        err_hint("usage: calltrace [OPTIONS] PROGRAM [ARGS...]", "no program to trace");
        return -1;
    }
    cli->program_argv = argv + optind;
    return 0;
}
