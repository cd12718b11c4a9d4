/* The -F/-N filters of the commands that read a run (report, graph, flame, diff, tree) over
 * the replay's symbols: decided once per symbol, at its first call, so that each glob's hits
 * count functions with calls, for the warning about a glob that matches none. */
#ifndef CALLTRACE_ANALYSIS_SYM_FILTER_H
#define CALLTRACE_ANALYSIS_SYM_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/replay.h"

struct profile_filter;

struct sym_filter {
    const struct profile_filter *filter;
    uint8_t *kept; /* by symbol: 0 no call seen yet, 1 kept, 2 hidden */
    size_t cap;
    uint64_t *include_hits; /* by -F glob: the functions with calls it matched */
    uint64_t *exclude_hits;
};

/* 0, or -1 after one error line. */
int sym_filter_init(struct sym_filter *sf, const struct profile_filter *filter);
void sym_filter_free(struct sym_filter *sf);

/* Is symbol sym, named name, kept by -F/-N? 1 yes, 0 no, -1 after one error line. */
int sym_filter_keeps(struct sym_filter *sf, uint32_t sym, const char *name);

/* Did symbol sym of r have a call (was it ever asked about)? */
static inline bool sym_filter_called(const struct sym_filter *sf, uint32_t sym)
{
    return sym < sf->cap && sf->kept[sym];
}

/* Was symbol sym kept (it had a call, and -F/-N keep it)? */
static inline bool sym_filter_kept(const struct sym_filter *sf, uint32_t sym)
{
    return sym < sf->cap && sf->kept[sym] == 1;
}

/* A warning for each glob that matched no function with calls, with some of those of r that
 * had calls. */
void sym_filter_warn_unmatched(const struct sym_filter *sf, const struct replay *r);

#endif
