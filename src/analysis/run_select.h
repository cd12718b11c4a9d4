/* Finds the run a reading subcommand works on: the one named, or the newest run directory (one
 * holding events.ctr) in the current directory. */
#ifndef CALLTRACE_ANALYSIS_RUN_SELECT_H
#define CALLTRACE_ANALYSIS_RUN_SELECT_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

/* arg may be NULL. Fills run and its record path. Returns 0, or -1 after one error line. */
int run_select(const char *arg, char *run, size_t runlen, char *record, size_t reclen);

/* Warns that the record of run ends early, if it does (damaged: 1 truncated, 2 corrupt). */
void run_warn_damaged(const char *run, int damaged);
/* Says that the run misses calls the engine could not record, when it does. */
void run_warn_dropped(const char *run, uint64_t dropped_calls);
/* Says what the "breakpoint" mark of the functions shown means, when one was. */
void run_note_breakpoints(const char *run, bool shown);

#endif
