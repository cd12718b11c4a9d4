/* Option handling and messages shared by the subcommands that read a run. */
#ifndef CALLTRACE_CMD_CLI_UTIL_H
#define CALLTRACE_CMD_CLI_UTIL_H

#include <stdint.h>

#include "analysis/replay.h"
#include "output/trace_file.h"

/* strtonum with the option's name in the message. Returns 0, or -1 after one error line. */
int cli_number(const char *opt, const char *value, long long min, long long max, long long *out);
/* The error for getopt's ':' or '?' result c of subcommand cmd. Returns -1. */
int cli_bad_option(char **argv, int c, const char *cmd);
/* --tid of a thread that made no call: says which threads did. Returns -1. */
int cli_missing_tid(const struct replay *r, const char *run, uint32_t tid);

/* --format F of record, export and view. Returns 0, or -1 after one error line. */
int cli_trace_format(const char *arg, enum trace_format *format);

/* The window options of export and view (output/call_window.h): which calls are written. */
enum {
    CLI_WINDOW_FROM = 0x400,
    CLI_WINDOW_TO,
    CLI_WINDOW_TID,
    CLI_WINDOW_MAX_CALLS,
};

/* clang-format off */
#define CLI_WINDOW_LONG_OPTIONS                                    \
    {"from", required_argument, NULL, CLI_WINDOW_FROM},            \
    {"to", required_argument, NULL, CLI_WINDOW_TO},                \
    {"tid", required_argument, NULL, CLI_WINDOW_TID},              \
    {"max-calls", required_argument, NULL, CLI_WINDOW_MAX_CALLS},  \
    {"filter", required_argument, NULL, 'F'},                      \
    {"exclude", required_argument, NULL, 'N'}
/* clang-format on */

#define CLI_WINDOW_HELP                                                                            \
    "  --from TIME, --to TIME  only the calls running between these times of the run\n"            \
    "                     (from its start: 1.5s, 250ms), with the calls open around them\n"        \
    "  --tid TID          only the calls of thread TID\n"                                          \
    "  -F GLOB, -N GLOB   only the calls of functions matching / not matching GLOB\n"              \
    "  --max-calls N      at most N calls, the first ones in the window\n"

/* Handles one getopt_long result for a window (F and N are -F and -N). Returns 1 when c was a
 * window option, 0 when it was not, -1 after one error line for a bad value. */
int cli_window_option(struct call_window *w, int c, const char *arg);
/* After parsing: --from after --to is an error. Returns 0 or -1 after one error line. */
int cli_window_check(const struct call_window *w);

/* With CALLTRACE_STATS set: events read, their rate and the peak RSS, on stderr. */
void cli_print_stats(const char *cmd, uint64_t events, uint64_t start_ns);

#endif
