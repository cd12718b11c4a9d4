/* What a run counts and notes for its closing line (cmd/record.c prints it): written by the
 * controller and the backends as they trace, read once at the end. */
#ifndef CALLTRACE_TRACER_RUN_STATS_H
#define CALLTRACE_TRACER_RUN_STATS_H

#include <stdint.h>

struct run_stats {
    uint64_t skipped_functions;
    /* under the inject engine, functions given breakpoints instead (FUNC_BREAKPOINT) */
    uint64_t breakpoint_functions;
    /* attached, no breakpoints (session_may_break): functions the inject engine cannot patch,
     * and forked children, left untraced */
    uint64_t left_out_functions;
    uint64_t left_out_children;
    uint64_t untraced_processes; /* no /proc/PID/mem: followed, but their calls not recorded */
    uint64_t uncatchable_returns;
    /* -l: bit i says -l glob i matched a library, -F / -N glob i a function (with -l the
     * patterns that matched nothing are told at the end); the libraries seen, to name them */
    uint64_t lib_globs_matched;
    uint64_t only_matched, exclude_matched;
    char libs_seen[512];
    /* images exec'd and given to a backend, and images passed through (no function to trace:
     * a wrapper such as env, nice or sh is followed to what it runs) */
    uint64_t traced_images, passed_images;
    /* processes an image of which the run's engine traced, and the breakpoints (under the
     * inject engine: an image it cannot trace, a forked child until it execs) */
    uint64_t processes_by_engine, processes_by_breakpoints;
};

#endif
