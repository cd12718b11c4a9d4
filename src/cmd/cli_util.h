/* Option handling and messages shared by the subcommands that read a run. */
#ifndef CALLTRACE_CMD_CLI_UTIL_H
#define CALLTRACE_CMD_CLI_UTIL_H

#include <stdint.h>
#include <stdio.h>

#include "analysis/profile.h"
#include "analysis/replay.h"
#include "analysis/source_file.h"

/* Which of names[0..n) value is (the value of option opt): its index, or -1 after one error
 * line listing them. */
int cli_choice(const char *opt, const char *value, const char *const *names, size_t n);
/* strtonum with the option's name in the message. Returns 0, or -1 after one error line. */
int cli_number(const char *opt, const char *value, long long min, long long max, long long *out);
/* The error for getopt's ':' or '?' result c of subcommand cmd. Returns -1. */
int cli_bad_option(char **argv, int c, const char *cmd);
/* The operands after getopt of subcommand cmd: at most one, the run directory (*run, NULL when
 * none is given). Returns 0, or -1 after one error line. */
int cli_one_run(int argc, char **argv, const char *cmd, const char **run);
/* --tid of a thread that made no call: says which threads did. Returns -1. */
int cli_missing_tid(const struct replay *r, const char *run, uint32_t tid);

/* The filters of the subcommands that read a run: -F GLOB, -N GLOB (repeatable), -D N, -t TID.
 * Returns 1 when c was one of them (taken into f), 0 when not, -1 after one error line. */
int cli_filter_option(struct profile_filter *f, int c, const char *arg);
void cli_filter_free(struct profile_filter *f);
#define CLI_FILTER_OPTS "F:N:D:t:"
/* clang-format off */
#define CLI_FILTER_LONG_OPTIONS                                                                    \
    {"include", required_argument, NULL, 'F'},                                                     \
    {"filter", required_argument, NULL, 'F'}, /* as the record command and export spell it */     \
    {"exclude", required_argument, NULL, 'N'},                                                     \
    {"depth", required_argument, NULL, 'D'},                                                       \
    {"tid", required_argument, NULL, 't'}
/* clang-format on */
#define CLI_FILTER_HELP                                                                            \
    "  -F, --include GLOB  only functions whose name matches GLOB (repeatable; also\n"             \
    "                      --filter GLOB)\n"                                                       \
    "  -N, --exclude GLOB  leave out functions whose name matches GLOB (repeatable)\n"             \
    "  -D, --depth N       only calls at most N deep (1: the outermost calls)\n"                   \
    "  -t, --tid TID       only the calls of thread TID\n"

/* Names taken from the traced program (a function's, a source file's) are printed through
 * util/text_escape.h (fputs_name); these are its forms for csv and JSON. */
struct cJSON;
/* A csv field on stdout (RFC 4180: C++ names hold commas): the name escaped as in text output,
 * so no control byte, no line break, can be in it. */
void cli_put_csv_field(const char *name);
/* The same without the quotes around it, for a field made of several names. */
void cli_put_csv_text(const char *name);
/* doc printed on stdout and freed: cJSON writes the bytes of strings as they are, so the text
 * goes through json_text_safe. Returns 0, or -1 after one error line. */
int cli_put_json(struct cJSON *doc);

/* --srcline: where the function of symbol sym of r is defined (analysis/source_file.h). */
bool cli_srcline(struct source_files *sf, const struct replay *r, uint32_t sym,
                 struct source_line *where);
/* Prints before, then "FILE:LINE" of where, then after. */
void cli_put_srcline(FILE *out, const char *before, const struct source_line *where,
                     const char *after);

/* With CALLTRACE_STATS set: events read, their rate and the peak RSS, on stderr. */
void cli_print_stats(const char *cmd, uint64_t events, uint64_t start_ns);

#endif
