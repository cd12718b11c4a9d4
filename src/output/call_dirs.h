/* RUN/calls/: a folder per captured call (-A/-R), derived from the record like trace.json, so
 * `calltrace export` rebuilds it too.
 *
 *   calls/index.json           every captured function: its name, folder, calls, folders
 *   calls/FUNC/N/call.json     call N of FUNC (from 1, in call order): times, ids, parameters
 *                              (name, type, value), return value
 *   calls/FUNC/N/arg_NAME.bin  the bytes a pointer parameter pointed to, when known
 *
 * FUNC and NAME, the function's and the parameter's names, are any bytes the program's symbols
 * and DWARF hold: each is itself when it is a safe file name, else a safe unique one
 * (call_dirs_file_name; index.json and call.json map them). At most max_dirs folders per function
 * (0: no limit); the trace has every call. */
#ifndef CALLTRACE_OUTPUT_CALL_DIRS_H
#define CALLTRACE_OUTPUT_CALL_DIRS_H

#include <stddef.h>
#include <stdint.h>

#include "output/run_dir.h"

#define CALL_DIRS_NAME "calls"
#define CALL_DIRS_NEW "calls.new" /* where they are written before they replace calls/ */
#define CALL_DIRS_INDEX "index.json"
#define CALL_JSON_NAME "call.json"

struct call_dirs_stats {
    uint64_t calls;   /* captured calls */
    uint64_t folders; /* written */
    uint64_t functions;
    uint64_t capped; /* functions with more calls than max_dirs */
};

/* Replaces RUN/calls from RUN/events.ctr, through the run's descriptor. Returns 0, or -1 after
 * one error line. */
int call_dirs_export(const struct run_dir *run, unsigned max_dirs, struct call_dirs_stats *stats);
/* The closing summary's line about them. */
void call_dirs_print_summary(const char *run, const struct call_dirs_stats *stats,
                             unsigned max_dirs);
/* name as (part of) a file name, into out: name itself when it is made of [A-Za-z0-9_.+-] only,
 * does not start with '.' and is at most 100 bytes long; else at most 48 of those characters
 * (others as '_'), '~' and a hash of the whole name (66 bytes at most). */
void call_dirs_file_name(const char *name, char *out, size_t outlen);
struct call_values;
/* The file of parameter i's bytes: arg_NAME.bin, NAME its name by call_dirs_file_name, or
 * arg_NAME~N.bin (N its position from 1; no safe name holds '~' and a number alone) when an
 * earlier parameter with bytes has the same NAME: DWARF may repeat a name, and a file of a
 * run is never written over. */
void call_dirs_arg_file_name(const struct call_values *cv, size_t i, char *out, size_t outlen);

#endif
