#include "analysis/flame.h"

#include <bsd/stdlib.h>
#include <stdlib.h>
#include <string.h>

int flame_init(struct flame *f, const struct call_tree *tree, bool calls)
{
    size_t n = tree->nnodes;
    *f = (struct flame){.tree = tree, .calls = calls};
    f->own = calloc(n ? n : 1, sizeof(*f->own));
    f->subtree = calloc(n ? n : 1, sizeof(*f->subtree));
    f->x = calloc(n ? n : 1, sizeof(*f->x));
    if (!f->own || !f->subtree || !f->x) {
        flame_free(f);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const struct call_tree_node *node = &tree->nodes[i];
        f->own[i] = calls ? node->calls : node->self_ns > 0 ? (uint64_t)node->self_ns : 0;
        f->subtree[i] = f->own[i];
    }
    /* a child is made after its parent: from the last node back, each adds to its parent */
    for (size_t i = n; i-- > 1;)
        f->subtree[tree->nodes[i].parent] += f->subtree[i];
    /* then each child starts where its earlier siblings end, in its parent's frame (a parent's
     * number is below its children's: its start is known when they are placed) */
    for (size_t p = 0; p < n; p++) {
        uint64_t at = f->x[p];
        for (uint32_t c = tree->nodes[p].first_child; c != CALL_TREE_NONE;
             c = tree->nodes[c].next_sibling) {
            f->x[c] = at;
            at += f->subtree[c];
        }
    }
    return 0;
}

void flame_free(struct flame *f)
{
    free(f->own);
    free(f->subtree);
    free(f->x);
    f->own = f->subtree = f->x = NULL;
}

struct fold_ctx {
    const struct flame *f;
    call_tree_name_fn *name;
    void *name_ctx;
    flame_stack_fn *fn;
    void *ctx;
    const char **names; /* by depth - 1: the stack down to the node being visited */
    char (*thread_names)[48];
    size_t cap;
};

static int fold_node(void *arg, const struct call_tree *t, uint32_t n)
{
    struct fold_ctx *fc = arg;
    uint32_t depth = t->nodes[n].depth;
    if (depth > fc->cap) {
        size_t cap = fc->cap * 2 > depth ? fc->cap * 2 : depth + 64;
        const char **names = reallocarray(fc->names, cap, sizeof(*names));
        if (!names)
            return -1;
        fc->names = names;
        fc->cap = cap;
    }
    /* a thread's node is only ever at depth 1: its name has one buffer */
    fc->names[depth - 1] = call_tree_node_name(t, n, fc->name, fc->name_ctx, *fc->thread_names,
                                               sizeof(*fc->thread_names));
    if (!fc->f->own[n])
        return 0;
    return fc->fn(fc->ctx, fc->names, depth, fc->f->own[n]);
}

int flame_fold(const struct flame *f, call_tree_name_fn *name, void *name_ctx, flame_stack_fn *fn,
               void *ctx)
{
    char thread_name[1][48];
    struct fold_ctx fc = {f, name, name_ctx, fn, ctx, NULL, thread_name, 0};
    int rc = call_tree_walk(f->tree, fold_node, &fc);
    free(fc.names);
    return rc;
}
