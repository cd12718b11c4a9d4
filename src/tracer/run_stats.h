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
    /* -L: the libraries traced at the boundary, and bit i: -L glob i matched a function */
    uint64_t lib_call_libs;
    uint64_t lib_call_globs_matched;
    /* images exec'd and given to a backend; images passed through (a wrapper such as env, nice
     * or sh -c, or no function to trace: followed to what it runs), of which those that had
     * (unnamed) functions; images the wrapper rule took for wrappers, passed or traced
     * (--trace-wrappers) */
    uint64_t traced_images, passed_images, passed_with_functions, wrapper_images;
    /* processes an image of which the run's engine traced, and the breakpoints (under the
     * inject engine: an image it cannot trace, a forked child until it execs) */
    uint64_t processes_by_engine, processes_by_breakpoints;
};

#endif
