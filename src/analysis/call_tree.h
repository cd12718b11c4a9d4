/* The calling-context tree of a run: a node per distinct stack of functions (main -> parse ->
 * lex), with the calls made at that stack and their time. The flame graph is drawn from it and
 * `diff --tree` aligns two of them. Memory grows with the number of distinct stacks, never with
 * the number of calls.
 *
 * Node 0 is the root. Below it hang the outermost functions, or, per thread, a node for each
 * thread (sym CALL_TREE_THREAD | its index in threads) with that thread's outermost functions
 * below it. A node's self time holds the self time of its own calls and of the calls below it
 * that a filter hid, so the self times of a subtree add up to the total time of its calls. */
#ifndef CALLTRACE_ANALYSIS_CALL_TREE_H
#define CALLTRACE_ANALYSIS_CALL_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/addr_map.h"

#define CALL_TREE_ROOT 0u
#define CALL_TREE_NONE UINT32_MAX
#define CALL_TREE_THREAD 0x80000000u /* in sym: a thread's node, | its index in threads */

struct call_tree_node {
    uint32_t sym; /* the replay's symbol, or CALL_TREE_THREAD | index; the root: CALL_TREE_NONE */
    uint32_t parent;
    uint32_t first_child, next_sibling, last_child; /* CALL_TREE_NONE: none */
    uint32_t depth;                                 /* the root 0, an outermost function 1 */
    uint32_t last_found; /* the child call_tree_child found last: loops call the same one */
    uint64_t calls;
    int64_t total_ns; /* inclusive time of its calls */
    int64_t self_ns;  /* its calls' self time, with that of hidden calls below them */
};

struct call_tree_thread {
    uint32_t pid, tid;
};

struct call_tree {
    struct call_tree_node *nodes;
    size_t nnodes, cap;
    struct addr_map children; /* parent << 32 | sym -> node + 1 */
    struct call_tree_thread *threads;
    size_t nthreads;
    struct addr_map thread_nodes; /* tid -> node + 1 */
};

int call_tree_init(struct call_tree *t);
void call_tree_free(struct call_tree *t);
/* The child of parent for sym, made on first sight (appended to parent's children). Returns
 * CALL_TREE_NONE when out of memory. */
uint32_t call_tree_child(struct call_tree *t, uint32_t parent, uint32_t sym);
/* The node of thread tid below the root, made on first sight. CALL_TREE_NONE: out of memory. */
uint32_t call_tree_thread(struct call_tree *t, uint32_t pid, uint32_t tid);

/* Names nodes for the walks below: sym to text. */
typedef const char *call_tree_name_fn(void *ctx, uint32_t sym);

/* The name of node n: its function's, or "[pid P tid T]" for a thread's (buf: at least 48
 * bytes). */
const char *call_tree_node_name(const struct call_tree *t, uint32_t n, call_tree_name_fn *name,
                                void *ctx, char *buf, size_t len);

/* Puts every node's children in the order of their names (ties by symbol), so that a walk is
 * the same whatever order the calls came in. Returns -1 when out of memory. */
int call_tree_sort(struct call_tree *t, call_tree_name_fn *name, void *ctx);

/* Visits the nodes below the root depth first, parents before children, without recursion (a
 * stack may be a million calls deep). Stops with fn's non-zero value. */
typedef int call_tree_visit_fn(void *ctx, const struct call_tree *t, uint32_t n);
int call_tree_walk(const struct call_tree *t, call_tree_visit_fn *fn, void *ctx);

#endif
