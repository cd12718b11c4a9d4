/* Flame graph weights over a calling-context tree (analysis/call_tree.h): each node's own
 * weight (the self time of the calls at that stack, or their number) and its subtree's (what
 * the width of its frame shows). Folded stacks, the text flamegraph.pl, inferno and speedscope
 * read ("main;parse;lex 1234"), are the nodes with an own weight, each with its stack. */
#ifndef CALLTRACE_ANALYSIS_FLAME_H
#define CALLTRACE_ANALYSIS_FLAME_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/call_tree.h"

struct flame {
    const struct call_tree *tree;
    bool calls;        /* weights are calls, not self time in ns */
    uint64_t *own;     /* by node */
    uint64_t *subtree; /* by node: own plus every descendant's; the root's is the total */
    uint64_t *x;       /* by node: where its frame starts, in weight units from the left */
};

/* Works the weights and positions out (children in the tree's order: call_tree_sort first for
 * name order). Returns -1 when out of memory. */
int flame_init(struct flame *f, const struct call_tree *tree, bool calls);
void flame_free(struct flame *f);

/* Calls fn for each node with an own weight, in the tree's order, with its stack: names[0] is
 * the outermost frame, names[depth - 1] the node's own. Stops with fn's non-zero value; -1 when
 * out of memory. */
typedef int flame_stack_fn(void *ctx, const char *const *names, uint32_t depth, uint64_t weight);
int flame_fold(const struct flame *f, call_tree_name_fn *name, void *name_ctx, flame_stack_fn *fn,
               void *ctx);

#endif
