/* The call profile of a run, built on the replay: per function its calls, inclusive and self
 * time, and per caller -> callee pair the number of calls. Used by `report` and `graph`.
 *
 * Rules, chosen against pycallgraph's flaws:
 *   - a recursive function's inclusive time counts only its outermost open call, so time is
 *     never counted twice;
 *   - self time is a call's time minus its direct children's;
 *   - when a filter hides a function, its callees hang from their nearest kept ancestor;
 *   - a forked child's copies of its parent's open calls are not calls of the child (in the
 *     call tree they are the stack the child's calls are made from, with no time of their
 *     own). */
#ifndef CALLTRACE_ANALYSIS_PROFILE_H
#define CALLTRACE_ANALYSIS_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/call_tree.h"
#include "analysis/latency.h"
#include "analysis/replay.h"
#include "analysis/sym_filter.h"

struct profile_filter {
    const char **include; /* globs on function names; none: all */
    size_t ninclude;
    const char **exclude;
    size_t nexclude;
    uint32_t max_depth; /* 0: any; else calls nested deeper (1 = outermost) are hidden */
    uint32_t tid;       /* 0: all threads */
    /* NULL: all; else only the symbols s < nsyms with syms[s] set, numbered as an earlier
     * replay of the same record numbered them (graph -n: the hottest functions) */
    const uint8_t *syms;
    size_t nsyms;
};

struct func_stats {
    uint64_t calls;
    uint64_t unfinished;
    int64_t total_ns; /* inclusive, outermost open calls only */
    int64_t self_ns;
    int64_t sum_ns; /* sum of every call's inclusive time: the average's numerator */
    int64_t min_ns;
    int64_t max_ns;
};

struct profile_edge {
    uint32_t caller;
    uint32_t callee;
    uint64_t calls;
};

/* What profile_build gathers beyond the per-function totals. */
#define PROFILE_EDGES 1u        /* caller -> callee pairs (graph) */
#define PROFILE_HISTS 2u        /* each function's distribution of durations (percentiles) */
#define PROFILE_TREE 4u         /* the calling-context tree (flame, diff --tree) */
#define PROFILE_TREE_THREADS 8u /* ... with a node per thread above its outermost calls */
#define PROFILE_SITES 16u       /* each function's calls per return address (record --callsites) */

/* The calls of a function made from one call site: one return address in one process. */
struct profile_site {
    uint64_t ret_addr;
    uint32_t sym;
    uint32_t pid;
    uint64_t calls;
    struct profile_site *next; /* of the same return address */
};

struct profile {
    struct replay replay;
    const struct profile_filter *filter;
    unsigned wants;              /* PROFILE_* */
    struct func_stats *stats;    /* by symbol */
    struct latency_hist **hists; /* by symbol, with PROFILE_HISTS: NULL until its first call */
    struct call_tree tree;       /* with PROFILE_TREE */
    struct sym_filter names;     /* -F, -N */
    size_t nstats;
    struct addr_map edges; /* caller << 32 | callee -> struct profile_edge */
    struct addr_map sites; /* return address -> struct profile_site, chained */
    size_t nsites;
    bool saw_tid;
};

/* Replays record_path into p, gathering what wants (PROFILE_*) asks for. Returns 0, or -1
 * after printing one error line. */
int profile_build(struct profile *p, const char *record_path, const struct profile_filter *filter,
                  unsigned wants);
void profile_free(struct profile *p);

/* Prints a warning for each glob that matched no function with calls, listing some that exist. */
void profile_warn_unmatched(const struct profile *p);

/* The call sites (PROFILE_SITES) as an array sorted by symbol, then by calls, most first;
 * *n set. Caller frees. */
struct profile_site **profile_sites(const struct profile *p, size_t *n);

/* The edges as an array sorted by caller then callee; *n set. Caller frees. */
struct profile_edge **profile_edges(const struct profile *p, size_t *n);

#endif
