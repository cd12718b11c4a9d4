/* Two runs compared: per function (matched by name, so that runs of two builds, or of two
 * programs, compare), and call tree against call tree (diff --tree). Pure: works on two
 * profiles (analysis/profile.h) already built. */
#ifndef CALLTRACE_ANALYSIS_DIFF_H
#define CALLTRACE_ANALYSIS_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/call_tree.h"
#include "analysis/profile.h"

/* A function's figures in one run; a name that several symbols of the run share (the same
 * static function in two libraries) adds theirs up. */
struct diff_side {
    uint64_t calls; /* 0: not called in that run */
    int64_t total_ns, self_ns;
    int64_t sum_ns; /* of every call's time: the average's numerator */
};

struct diff_row {
    const char *name;
    struct diff_side a, b;
};

enum diff_key { DIFF_TOTAL, DIFF_SELF, DIFF_CALLS, DIFF_AVG, DIFF_NAME };

int64_t diff_value(const struct diff_side *s, enum diff_key key);
/* B's value minus A's (DIFF_NAME: the total's). */
int64_t diff_change(const struct diff_row *r, enum diff_key key);
/* The change in percent of A's value; false when A's is 0 (a new function, or nothing). */
bool diff_percent(int64_t a, int64_t b, double *pct);

/* Rows for every function called in either run, matched by name; sorted by the size of the
 * change of key, largest first (DIFF_NAME: by name), then by name. Returns -1 when out of
 * memory. */
int diff_functions(const struct profile *a, const struct profile *b, enum diff_key key,
                   struct diff_row **rows, size_t *n);

enum diff_status {
    DIFF_SAME,     /* at the same stack in both, as many calls */
    DIFF_CHANGED,  /* in both, a different number of calls */
    DIFF_APPEARED, /* only in B */
    DIFF_VANISHED, /* only in A */
};

/* A stack of the two trees aligned: node of each (CALL_TREE_NONE where it is not). */
struct diff_tree_row {
    uint32_t depth; /* 1: an outermost call */
    const char *name;
    uint32_t a, b;
    enum diff_status status;
};

/* Walks the two call trees together, parents before children, children in name order
 * (call_tree_sort both first): a node of A and one of B are the same stack when their parents
 * are and their names are equal. Stops with fn's non-zero value; -1 when out of memory. */
typedef int diff_tree_fn(void *ctx, const struct diff_tree_row *row);
int diff_trees(const struct call_tree *a, call_tree_name_fn *name_a, void *ctx_a,
               const struct call_tree *b, call_tree_name_fn *name_b, void *ctx_b, diff_tree_fn *fn,
               void *ctx);

#endif
