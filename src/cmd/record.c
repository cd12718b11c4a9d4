/* calltrace [OPTIONS] PROGRAM [ARGS...]: run a program under the tracer and write its run
 * directory. */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <bsd/string.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "cmd/record_options.h"
#include "arch/x86_64/relocate.h"
#include "control/control.h"
#include "control/launch.h"
#include "control/wrapper.h"
#include "output/call_dirs.h"
#include "tracer/breakpoint/breakpoints.h"
#include "tracer/inject/inject.h"
#include "output/run_dir.h"
#include "output/trace_file.h"
#include "record/format.h"
#include "record/writer.h"
#include "symbols/elf_image.h"
#include "util/duration.h"
#include "util/log.h"
#include "view/view.h"

/* What calltrace's signal handlers may touch: a handler cannot be given a context struct. */
static volatile sig_atomic_t stop_signal;
static volatile pid_t traced_pid;   /* launched: ended on a stop signal, left at -t */
static volatile pid_t attached_pid; /* attached: interrupted, then released */
static volatile pid_t released_pid; /* launched, left running at -t: calltrace waits for it */

static void on_stop_signal(int sig)
{
    stop_signal = sig;
    /* Closes the race with the loop's check: waitpid returns once the program stops or is
     * gone, even if the signal came just before calltrace went to wait. */
    if (traced_pid > 0)
        kill(traced_pid, SIGKILL);
    if (attached_pid > 0)
        ptrace(PTRACE_INTERRUPT, attached_pid, 0, 0);
    /* Untraced now, the program is what calltrace waits for, as a shell waits for its job: a
     * SIGTERM or SIGHUP is passed on; a Ctrl-C reached it from the terminal already. */
    if (released_pid > 0 && sig != SIGINT)
        kill(released_pid, sig);
}

/* -t: the tracing ends and the program, attached or launched, runs on (stop_loop.c). */
static void on_time_up(int sig)
{
    stop_signal = sig;
    pid_t pid = attached_pid > 0 ? attached_pid : traced_pid;
    if (pid > 0)
        ptrace(PTRACE_INTERRUPT, pid, 0, 0); /* the loop's waitpid returns */
}

static void on_tty_stop(int sig)
{
    (void)sig; /* calltrace stops when the program does, see control/stop_loop.c */
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
    sa.sa_handler = on_time_up; /* -t */
    sigaction(SIGALRM, &sa, NULL);
    sa.sa_handler = on_tty_stop;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGTSTP, &sa, NULL);
}

/* Bit i: globs[i] matches a traceable function of image. */
static uint64_t glob_hits(const struct elf_image *image, const char *const *globs, size_t n)
{
    uint64_t hits = 0;
    for (size_t i = 0; i < image->nfuncs; i++)
        if (!image->funcs[i].skipped)
            hits |= func_symbol_glob_hits(globs, n, &image->funcs[i]);
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
                image->path, some, shown < elf_image_traceable(image) ? ", ..." : "");
    }
}

/* Is the program, image (started as path with argv), a wrapper (control/wrapper.h)? A script's
 * interpreter is given the script's path after its own, as the kernel does. */
static enum wrapper_verdict program_verdict(const struct elf_image *image, const char *path,
                                            char **argv, const struct trace_options *opts)
{
    size_t argc = 0;
    while (argv[argc])
        argc++;
    char **args = calloc(argc + 2, sizeof(*args));
    if (!args)
        return WRAPPER_NOT; /* traced as any program: the checks below go on */
    bool script = opts->script != NULL;
    args[0] = script ? image->path : argv[0];
    if (script)
        args[1] = (char *)path;
    for (size_t i = 1; i < argc; i++)
        args[i + script] = argv[i];
    struct wrapper_exec w;
    wrapper_exec_of(0, &w);
    w.argv = args;
    w.path_var = getenv("PATH");
    enum wrapper_verdict verdict = wrapper_verdict(image, &w, opts);
    wrapper_exec_free(&w);
    free(args);
    return verdict;
}

/* Validates the program before anything is created: every bad input is one line, no run dir.
 * With -l, the libraries are only known once the program runs: the patterns are checked at the
 * end (warn_unmatched_at_end), and an executable without symbols is fine. So is a wrapper (env,
 * nice, sh -c, runuser: the controller follows it to what it runs, and the run ends with an
 * error if nothing it ran had functions: nothing_traceable_ran), and an executable without
 * functions that can run another program. */
static int check_program(const char *program, struct record_cli *cli, char *path, size_t pathlen)
{
    struct trace_options *opts = &cli->opts.trace;
    const struct func_filter *filter = &opts->filter;
    char image_path[PATH_MAX];
    if (launch_resolve(program, path, pathlen, image_path, sizeof(image_path)) < 0)
        return -1;
    if (strcmp(image_path, path) != 0)
        opts->script = path; /* as launch_program execs it: its interpreter has it in its argv */
    struct elf_image image;
    if (elf_image_load(&image, image_path) < 0)
        return -1;
    size_t n = elf_image_traceable(&image);
    enum wrapper_verdict verdict = program_verdict(&image, path, cli->program_argv, opts);
    if (opts->nlibs || (verdict != WRAPPER_NOT && (n || wrapper_can_run_programs(image_path)))) {
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
        err_hint("build it with symbols and do not strip it, or install its debug file",
                 "%s: no function symbols to trace", image_path);
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

/* With -l: the patterns that found nothing in the whole run, and the libraries it loaded; after
 * a wrapper, the programs it ran. */
static void warn_unmatched_at_end(const struct record_cli *cli, const struct session *s)
{
    const struct trace_options *o = &cli->opts.trace;
    if (!o->nlibs && s->stats.wrapper_images && s->stats.traced_images) {
        const char *what = "function of the programs traced";
        warn_globs('F', o->filter.only, o->filter.nonly, s->stats.only_matched, what);
        warn_globs('N', o->filter.exclude, o->filter.nexclude, s->stats.exclude_matched, what);
    }
    if (o->lib_calls && !s->stats.lib_call_libs)
        err_msg("warning: -L: the program loaded no shared library (a static program, or all "
                "are -l's): there were no library calls to trace");
    else if (o->lib_calls)
        warn_globs('L', o->lib_call_globs, o->nlib_call_globs, s->stats.lib_call_globs_matched,
                   "function the program's libraries export");
    if (!o->nlibs && !o->lib_calls)
        return;
    char what[700];
    snprintf(what, sizeof(what), "library the program loaded (it loaded %s)",
             *s->stats.libs_seen ? s->stats.libs_seen : "none");
    warn_globs('l', o->libs, o->nlibs, s->stats.lib_globs_matched, what);
    const char *fwhat = "function of the program nor of the libraries -l selected";
    warn_globs('F', o->filter.only, o->filter.nonly, s->stats.only_matched, fwhat);
    warn_globs('N', o->filter.exclude, o->filter.nexclude, s->stats.exclude_matched, fwhat);
}

static uint64_t dropped_calls(const struct session *s)
{
    return s->backend && s->backend->dropped_calls ? s->backend->dropped_calls(s) : 0;
}

static uint64_t lost_returns(const struct session *s)
{
    return s->backend && s->backend->lost_returns ? s->backend->lost_returns(s) : 0;
}

/* Which engine traced the processes: " (inject engine)", or with the processes the breakpoints
 * traced instead, " (inject engine in 2, breakpoints in 1)". */
static void engines_text(const struct session *s, char *buf, size_t len)
{
    const struct run_stats *counts = &s->stats;
    uint64_t engine = counts->processes_by_engine, breakpoints = counts->processes_by_breakpoints;
    if (s->backend == s->breakpoints)
        snprintf(buf, len, " (ptrace engine)");
    else if (!breakpoints)
        snprintf(buf, len, " (inject engine)");
    else if (!engine)
        snprintf(buf, len, " (breakpoints in %llu)", (unsigned long long)breakpoints);
    else
        snprintf(buf, len, " (inject engine in %llu, breakpoints in %llu)",
                 (unsigned long long)engine, (unsigned long long)breakpoints);
}

/* The calls the engine could not record, by cause: the one cause named, or each with its
 * count. */
static void print_dropped(const struct session *s, uint64_t dropped)
{
    static const char *const why[DROP_CAUSES] = {
        [DROP_RING_FULL] = "a thread's ring stayed full (--buffer-size makes rings larger)",
        [DROP_SHADOW_FULL] = "calls nested deeper than a thread's shadow stack holds (262144)",
        [DROP_VFORK] = "a vfork child made them before it exec'd, on its parent's rings",
        [DROP_UNREADABLE] = ("their events were never finished (a signal handler left a "
                             "trampoline with longjmp)"),
        [DROP_STOPPED] = ("calltrace, told to stop, left them unread after a second of "
                          "draining"),
    };
    uint64_t by[DROP_CAUSES] = {0}, known = 0;
    if (s->backend->drop_causes)
        s->backend->drop_causes(s, by);
    size_t causes = 0;
    for (size_t c = 0; c < DROP_CAUSES; c++) {
        known += by[c];
        causes += by[c] != 0;
    }
    fprintf(stderr, "calltrace: %llu calls were not recorded: ", (unsigned long long)dropped);
    const char *sep = "";
    for (size_t c = 0; c < DROP_CAUSES; c++) {
        if (!by[c])
            continue;
        fprintf(stderr, "%s%s", sep, why[c]);
        if (causes > 1 || known != dropped)
            fprintf(stderr, " (%llu)", (unsigned long long)by[c]);
        sep = "; ";
    }
    if (known < dropped)
        fprintf(stderr, "%sof unknown cause (%llu)", sep, (unsigned long long)(dropped - known));
    fputc('\n', stderr);
}

static void print_summary(const char *run, const struct trace_stats *stats, const struct session *s,
                          const struct call_gate *gate)
{
    char unfinished[48] = "";
    if (stats->unfinished)
        snprintf(unfinished, sizeof(unfinished), " (%llu unfinished)",
                 (unsigned long long)stats->unfinished);
    char engines[80];
    engines_text(s, engines, sizeof(engines));
    note_msg("trace in %s/%s: %llu call%s%s, %llu thread%s, %llu process%s%s", run, stats->files,
             (unsigned long long)stats->calls, stats->calls == 1 ? "" : "s", unfinished,
             (unsigned long long)stats->threads, stats->threads == 1 ? "" : "s",
             (unsigned long long)stats->processes, stats->processes == 1 ? "" : "es", engines);
    if (s->stats.breakpoint_functions)
        fprintf(stderr,
                "calltrace: %llu function%s traced by breakpoints (marked in report, tree and the "
                "trace): %s calls' times include two ptrace stops each, some 25 us\n",
                (unsigned long long)s->stats.breakpoint_functions,
                s->stats.breakpoint_functions == 1 ? "" : "s",
                s->stats.breakpoint_functions == 1 ? "its" : "their");
    if (gate && gate->dropped_deep)
        fprintf(stderr, "calltrace: %llu calls deeper than -D %u left out\n",
                (unsigned long long)gate->dropped_deep, gate->max_depth);
    if (gate && gate->dropped_short)
        fprintf(stderr, "calltrace: %llu calls shorter than --min-duration left out\n",
                (unsigned long long)gate->dropped_short);
    const struct run_stats *counts = &s->stats;
    if (counts->untraced_processes)
        fprintf(stderr, "calltrace: the calls of %llu process%s could not be recorded\n",
                (unsigned long long)counts->untraced_processes,
                counts->untraced_processes == 1 ? "" : "es");
    uint64_t dropped = dropped_calls(s), lost = lost_returns(s);
    if (dropped)
        print_dropped(s, dropped);
    if (lost)
        fprintf(stderr,
                "calltrace: %llu returns were not recorded (a thread's ring stayed full, or, "
                "attached, backtrace() walked the stack): those calls end at the next event that "
                "shows them over\n",
                (unsigned long long)lost);
    uint64_t corrupt = s->backend && s->backend->corrupt_events ? s->backend->corrupt_events(s) : 0;
    if (corrupt)
        fprintf(stderr,
                "calltrace: %llu events the program wrote into the memory it shares with "
                "calltrace made no sense and were left out\n",
                (unsigned long long)corrupt);
    if (counts->left_out_functions)
        fprintf(stderr,
                "calltrace: %llu function%s left out: the inject engine cannot patch %s, and "
                "a breakpoint would kill the program if calltrace died (-v says which; "
                "--attach-breakpoints traces %s)\n",
                (unsigned long long)counts->left_out_functions,
                counts->left_out_functions == 1 ? "" : "s",
                counts->left_out_functions == 1 ? "it" : "them",
                counts->left_out_functions == 1 ? "it" : "them");
    if (counts->left_out_children)
        fprintf(stderr,
                "calltrace: %llu child process%s left untraced: the ptrace engine would trace "
                "them, with breakpoints (--attach-breakpoints)\n",
                (unsigned long long)counts->left_out_children,
                counts->left_out_children == 1 ? "" : "es");
    if (counts->skipped_functions)
        fprintf(stderr, "calltrace: %llu functions could not be traced safely (-v says which)\n",
                (unsigned long long)counts->skipped_functions);
}

/* Milliseconds since start (clock_mono_ns), for -v's account of where an attachment's time
 * goes. */
static double ms_since(uint64_t start)
{
    return (double)(clock_mono_ns() - start) / 1e6;
}

/* -t: SIGALRM (on_time_up) after ns; 0 disarms. */
static int set_timer(uint64_t ns)
{
    uint64_t us = (ns + 999) / 1000;
    struct itimerval t = {
        .it_value = {.tv_sec = (time_t)(us / 1000000), .tv_usec = (suseconds_t)(us % 1000000)}};
    if (setitimer(ITIMER_REAL, &t, NULL) == 0)
        return 0;
    err_msg("-t: cannot set a timer: %s", strerror(errno));
    return -1;
}

/* The detach comes before any output is written, so a failure to write cannot keep the
 * program stopped; the record written so far is complete up to that moment. */
static int run_attached(struct record_cli *cli, struct session *s)
{
    uint64_t start = clock_mono_ns();
    if (control_attach(s, cli->attach_pid) < 0)
        return -1;
    dbg(DBG_ENGINE, 1, "process %d: attached in %.1f ms", (int)cli->attach_pid, ms_since(start));
    attached_pid = cli->attach_pid;
    if (set_timer(cli->duration_ns) < 0)
        return -1;
    control_loop(s);
    set_timer(0);
    attached_pid = 0;
    start = clock_mono_ns();
    if (s->live_processes && control_detach(s) < 0)
        s->detach_failed = true;
    control_finish(s);
    dbg(DBG_ENGINE, 1, "process %d: detached in %.1f ms", (int)cli->attach_pid, ms_since(start));
    return 0;
}

/* -t of a launched program, the time up: calltrace leaves every traced process as -p leaves a
 * program (control_detach), and the program runs on untraced; calltrace writes the run, then
 * waits for it (wait_released). */
static void release_launched(struct session *s, pid_t pid)
{
    traced_pid = 0; /* a stop signal no longer kills it */
    if (control_detach(s) < 0)
        s->detach_failed = true;
    if (!s->main_done)
        released_pid = pid;
}

/* The end of a program left running by -t, with SIGTERM and SIGHUP passed on to it
 * (on_stop_signal), and its stops (Ctrl-Z) calltrace's too, so that the shell sees the job
 * stop. Returns its wait status, or -1 after one error line. */
static int wait_released(pid_t pid)
{
    for (;;) {
        int status;
        pid_t got = waitpid(pid, &status, WUNTRACED);
        if (got == pid && WIFSTOPPED(status)) {
            kill(getpid(), SIGSTOP);
            continue;
        }
        if (got == pid)
            return status;
        if (errno != EINTR) {
            err_msg("waiting for process %d: %s", (int)pid, strerror(errno));
            return W_EXITCODE(1, 0);
        }
    }
}

/* After the run is written: says that the program runs on, and waits for its end. Returns its
 * wait status. */
static int finish_released(const struct record_cli *cli, pid_t pid)
{
    char after[32];
    if (!cli->quiet)
        fprintf(stderr,
                "calltrace: -t %s: tracing stopped; process %d runs on untraced, and calltrace "
                "waits for its end\n",
                duration_format(after, sizeof(after), (int64_t)cli->duration_ns), (int)pid);
    int status = wait_released(pid);
    released_pid = 0;
    return status;
}

/* The one place that knows the backends: the run's, and the breakpoints every process has. */
static int pick_backend(struct session *s, const struct record_options *opts)
{
    s->breakpoints = &breakpoint_backend;
    s->backend = &breakpoint_backend;
    if (!opts->inject)
        return 0;
    if (!(s->inject = inject_engine_new(opts->buffer_size))) {
        err_msg("out of memory");
        return -1;
    }
    s->backend = &inject_backend;
    return 0;
}

static int run_traced(struct record_cli *cli, const char *path, struct recorder *rec,
                      const struct clock_calibration *clock, struct session *s)
{
    if (session_init(s, &cli->opts.trace, rec, clock, &stop_signal) < 0 ||
        x86_decoder_open(&s->decoder) < 0) {
        err_msg("cannot start the instruction decoder (capstone)");
        return -1;
    }
    if (pick_backend(s, &cli->opts) < 0)
        return -1;
    if (cli->attach_pid)
        return run_attached(cli, s);
    /* -t leaves the program running: it may have to leave a main thread that has exited while
     * others run, which only an exit stop tells (control/detach.c) */
    if (cli->duration_ns)
        s->leave_signal = SIGALRM;
    pid_t pid = launch_program(path, cli->program_argv, cli->duration_ns ? PTRACE_O_TRACEEXIT : 0);
    if (pid < 0)
        return -1;
    traced_pid = pid;
    if (set_timer(cli->duration_ns) < 0) {
        kill(pid, SIGKILL);
        cli->duration_ns = 0;
    }
    control_run(s, pid);
    set_timer(0);
    if (stop_signal == SIGALRM && s->leave_signal && s->live_processes)
        release_launched(s, pid);
    else if (stop_signal == SIGALRM && s->leave_signal)
        stop_signal = 0; /* the program ended as the time was up: as if it had not been */
    control_finish(s);
    traced_pid = 0;
    return 0;
}

static int finish_run(const struct run_dir *run, struct recorder *rec, const struct session *s,
                      const struct record_cli *cli)
{
    uint64_t start = clock_mono_ns();
    rec->dropped_calls = dropped_calls(s);
    int rec_error = recorder_close(rec);
    if (rec_error)
        err_hint(rec_error == ENOSPC ? "free some space; the trace holds what was recorded" : NULL,
                 "writing %s/%s: %s", run->path, REC_FILE_NAME, strerror(rec_error));
    warn_unmatched_at_end(cli, s);
    struct trace_stats stats;
    struct progress progress;
    progress_init(&progress, cli->quiet);
    struct trace_file_options trace = {.format = cli->format,
                                       .compress = cli->compress,
                                       .progress = &progress,
                                       .quiet = cli->quiet};
    if (trace_export(run, &trace, &stats) < 0)
        return -1;
    struct call_dirs_stats dirs = {0};
    bool captured = cli->opts.trace.capture.args || cli->opts.trace.capture.retval;
    int dirs_rc = captured ? call_dirs_export(run, cli->max_call_dirs, &dirs) : 0;
    dbg(DBG_RECORD, 1, "output written in %.1f ms", ms_since(start));
    if (!cli->quiet)
        print_summary(run->path, &stats, s, rec->gate);
    if (!cli->quiet && captured)
        call_dirs_print_summary(run->path, &dirs, cli->max_call_dirs);
    return rec_error || dirs_rc < 0 ? -1 : 0;
}

/* A run that recorded no call because no -F pattern matched a function of what ran: says so
 * (the patterns were warned about), for its run directory to be removed. */
static bool filtered_out_everything(const struct record_cli *cli, const struct session *s,
                                    const struct recorder *rec)
{
    const struct func_filter *f = &cli->opts.trace.filter;
    if (rec->calls || !f->nonly || s->stats.only_matched)
        return false;
    warn_unmatched_at_end(cli, s);
    err_hint("a run without -F shows the names there are (calltrace report)",
             "no call recorded: no function matched -F %s%s; no run directory was left", f->only[0],
             f->nonly > 1 ? " or the other -F patterns" : "");
    return true;
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

static void end_session(struct session *s)
{
    inject_engine_free(s->inject);
    session_free(s);
    x86_decoder_close(&s->decoder);
}

/* A run that is not kept: its record closed, its directory removed. */
static void abandon_run(struct recorder *rec, struct session *s, struct run_dir *run)
{
    recorder_close(rec);
    end_session(s);
    if (rec->gate)
        call_gate_free(rec->gate);
    run_dir_discard(run);
}

/* A wrapper (path) ran, as check_program let it, and nothing it ran had functions to trace:
 * the refusal comes after the run, which has nothing to show. */
static bool nothing_traceable_ran(const struct session *s, const struct record_cli *cli,
                                  const char *path)
{
    if (cli->opts.trace.nlibs || cli->attach_pid || s->stats.traced_images ||
        !s->stats.passed_images)
        return false;
    const char *hint = "build the program it runs with symbols and do not strip it, or install "
                       "its debug file";
    /* a wrapper had functions, unnamed: saying it had none would not be true */
    const char *why = "no function symbols to trace, and it ran no program that has some";
    if (s->stats.passed_with_functions) {
        hint = "--trace-wrappers traces a wrapper's own functions, named func_0xADDRESS";
        why = "passed through untraced as a wrapper, and it ran no program that has functions "
              "to trace";
    }
    if (!cli->opts.trace.follow_forks)
        hint = "--no-follow left untraced what it ran in child processes";
    err_hint(hint, "%s: %s", path, why);
    return true;
}

int cmd_record(int argc, char **argv)
{
    struct record_cli cli = {
        .opts = {.trace = {.follow_forks = true, .capture = {.string_max = CAPTURE_STRING_DEFAULT}},
                 .inject = true},
        .max_call_dirs = CALL_DIRS_DEFAULT};
    view_options_init(&cli.view);
    if (record_parse_args(argc, argv, &cli) < 0)
        return 2;
    log_set_verbosity(cli.opts.verbose);
    /* Before the run directory exists: a Ctrl-C from now on ends the run cleanly (the program
     * is never started, or is detached) instead of leaving a record without its trace. */
    install_handlers();
    char path[PATH_MAX] = "";
    if (!cli.attach_pid && check_program(cli.program_argv[0], &cli, path, sizeof(path)) < 0)
        return 2;
    char default_dir[64];
    cli.opts.trace.rank = mpi_rank();
    if (cli.opts.trace.rank)
        snprintf(default_dir, sizeof(default_dir), RUN_DIR_DEFAULT "-rank%s", cli.opts.trace.rank);
    else
        snprintf(default_dir, sizeof(default_dir), RUN_DIR_DEFAULT);
    struct run_dir run;
    if (run_dir_create(cli.output ? cli.output : default_dir, cli.share, &run) < 0)
        return 2;
    struct clock_calibration clock;
    clock_calibrate(&clock);
    struct recorder rec;
    int rc = recorder_open(&rec, run.fd, REC_FILE_NAME, run.file_mode, &clock);
    if (rc < 0) {
        err_msg("cannot create %s/%s: %s", run.path, REC_FILE_NAME, strerror(-rc));
        run_dir_discard(&run);
        return 2;
    }
    struct progress progress; /* the recording's line: calls, rate, bytes */
    progress_init(&progress, cli.quiet);
    rec.progress = &progress;
    if (cli.callsites && (rc = recorder_keep_call_sites(&rec)) < 0) {
        err_msg("--callsites: %s", strerror(-rc));
        recorder_close(&rec);
        run_dir_discard(&run);
        return 2;
    }
    struct call_gate gate;
    if (start_call_gate(&cli, &clock, &gate, &rec) < 0) {
        recorder_close(&rec);
        run_dir_discard(&run);
        return 2;
    }
    struct session s;
    if (run_traced(&cli, path, &rec, &clock, &s) < 0) {
        abandon_run(&rec, &s, &run);
        return 2;
    }
    progress_end(&progress);
    rec.progress = NULL;
    bool refused = nothing_traceable_ran(&s, &cli, path);
    /* nothing to look at: no run directory to find, or to mistake for a trace */
    bool empty = refused || filtered_out_everything(&cli, &s, &rec);
    int failed = empty ? 0 : finish_run(&run, &rec, &s, &cli);
    if (empty) {
        recorder_close(&rec);
        run_dir_discard(&run);
    }
    end_session(&s);
    if (rec.gate)
        call_gate_free(rec.gate);
    if (released_pid > 0)
        s.main_status = finish_released(&cli, released_pid);
    /* Also after Ctrl-C stopped the program: stopping a long run to look at it is common. */
    if (!empty && !failed && cli.open && view_open(run.path, &cli.view) < 0)
        failed = 1;
    if (!empty)
        run_dir_close(&run);
    if (cli.attach_pid) /* the program is not ours: its status is not calltrace's */
        return failed || s.detach_failed ? 1 : 0;
    if (stop_signal && !s.detaching)
        return 128 + stop_signal;
    if (refused)
        return 2;
    int code = exit_code_of(s.main_status);
    return failed && code == 0 ? 1 : code;
}
