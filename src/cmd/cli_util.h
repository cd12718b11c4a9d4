/* Option handling and messages shared by the subcommands that read a run. */
#ifndef CALLTRACE_CMD_CLI_UTIL_H
#define CALLTRACE_CMD_CLI_UTIL_H

#include <stdint.h>

#include "analysis/replay.h"

/* strtonum with the option's name in the message. Returns 0, or -1 after one error line. */
int cli_number(const char *opt, const char *value, long long min, long long max, long long *out);
/* The error for getopt's ':' or '?' result c of subcommand cmd. Returns -1. */
int cli_bad_option(char **argv, int c, const char *cmd);
/* --tid of a thread that made no call: says which threads did. Returns -1. */
int cli_missing_tid(const struct replay *r, const char *run, uint32_t tid);

/* With CALLTRACE_STATS set: events read, their rate and the peak RSS, on stderr. */
void cli_print_stats(const char *cmd, uint64_t events, uint64_t start_ns);

#endif
