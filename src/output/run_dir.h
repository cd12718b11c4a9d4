/* The run directory: created fresh for every run, never overwriting an earlier one. */
#ifndef CALLTRACE_OUTPUT_RUN_DIR_H
#define CALLTRACE_OUTPUT_RUN_DIR_H

#include <stddef.h>

#define RUN_DIR_DEFAULT "calltrace-out"

/* Creates base, or base-1, base-2, ... when it exists; the name used goes to out.
 * Prints one error line and returns -1 when none can be created. */
int run_dir_create(const char *base, char *out, size_t outlen);
/* Removes a run directory this run created and left empty of results (launch failed). */
void run_dir_discard(const char *dir);
/* dir/name into out; -1 if it does not fit. */
int run_path(char *out, size_t outlen, const char *dir, const char *name);

#endif
