/* -F/-N: which functions get a breakpoint. An excluded function costs nothing at run time. */
#ifndef CALLTRACE_SYMBOLS_FUNC_FILTER_H
#define CALLTRACE_SYMBOLS_FUNC_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FUNC_FILTER_MAX 64

struct func_filter {
    const char *only[FUNC_FILTER_MAX]; /* -F: when any, only names matching one of them */
    size_t nonly;
    const char *exclude[FUNC_FILTER_MAX]; /* -N: never these */
    size_t nexclude;
};

/* Appends glob to list (n of FUNC_FILTER_MAX used) for option -opt; -1 after one error line
 * for an empty glob or a full list. */
int glob_list_add(const char **list, size_t *n, int opt, const char *glob);

/* Does glob match name, a demangled name, as it is or without its parameter list (-F parse
 * matches parse(int))? fnmatch(3) rules. */
bool func_glob_matches(const char *glob, const char *name);
/* Globs as func_glob_matches reads them. */
bool func_filter_selects(const struct func_filter *f, const char *name);
/* Bit i set when globs[i] matches name: which patterns found something, to warn of the rest. */
uint64_t func_filter_glob_hits(const char *const *globs, size_t n, const char *name);

#endif
