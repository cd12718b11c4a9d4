/* The options of `calltrace [OPTIONS] PROGRAM` and `-p PID`: parsed and checked against each
 * other before anything is started or created. */
#ifndef CALLTRACE_CMD_RECORD_OPTIONS_H
#define CALLTRACE_CMD_RECORD_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "output/trace_file.h"
#include "tracer/tracee.h"
#include "view/view.h"

/* The options of a recording: what the tracing reads (trace), and what only the command does. */
struct record_options {
    struct trace_options trace;
    int verbose;
    bool inject;        /* the inject backend (the default), else --engine=ptrace: breakpoints */
    size_t buffer_size; /* --buffer-size: bytes per thread's ring, 0: the default */
};

struct record_cli {
    struct record_options opts;
    const char *output;
    bool share; /* --share: the run directory readable by others */
    bool quiet;
    pid_t attach_pid;         /* -p */
    uint64_t duration_ns;     /* -t; 0: until the program ends, or until stopped */
    bool compress;            /* -z: trace.json.gz, trace.pftrace.gz */
    enum trace_format format; /* --format */
    bool open;                /* --open: show the trace in Perfetto once recorded */
    uint32_t max_depth;       /* -D; 0: no limit */
    uint64_t min_duration;    /* --min-duration, ns; 0: no minimum */
    struct view_options view;
    unsigned max_call_dirs; /* --max-call-dirs; 0: no cap */
    char **program_argv;
};

/* Fills cli from argv (its defaults set by the caller); prints one error line and returns -1 on
 * bad input. --help and --version print and exit. */
int record_parse_args(int argc, char **argv, struct record_cli *cli);

#endif
