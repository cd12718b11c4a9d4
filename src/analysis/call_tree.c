#include "analysis/call_tree.h"

#include <bsd/stdlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t new_node(struct call_tree *t, uint32_t parent, uint32_t sym)
{
    if (t->nnodes == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        if (cap > CALL_TREE_THREAD) /* node numbers stay below CALL_TREE_NONE */
            return CALL_TREE_NONE;
        struct call_tree_node *nodes = reallocarray(t->nodes, cap, sizeof(*nodes));
        if (!nodes)
            return CALL_TREE_NONE;
        t->nodes = nodes;
        t->cap = cap;
    }
    uint32_t n = (uint32_t)t->nnodes++;
    t->nodes[n] = (struct call_tree_node){
        .sym = sym,
        .parent = parent,
        .first_child = CALL_TREE_NONE,
        .next_sibling = CALL_TREE_NONE,
        .last_child = CALL_TREE_NONE,
        .last_found = CALL_TREE_NONE,
        .depth = parent == CALL_TREE_NONE ? 0 : t->nodes[parent].depth + 1,
    };
    if (parent != CALL_TREE_NONE) {
        struct call_tree_node *p = &t->nodes[parent];
        if (p->last_child == CALL_TREE_NONE)
            p->first_child = n;
        else
            t->nodes[p->last_child].next_sibling = n;
        p->last_child = n;
    }
    return n;
}

int call_tree_init(struct call_tree *t)
{
    memset(t, 0, sizeof(*t));
    if (addr_map_init(&t->children, 1024) < 0 || addr_map_init(&t->thread_nodes, 16) < 0 ||
        new_node(t, CALL_TREE_NONE, CALL_TREE_NONE) == CALL_TREE_NONE) {
        call_tree_free(t);
        return -1;
    }
    return 0;
}

void call_tree_free(struct call_tree *t)
{
    free(t->nodes);
    free(t->threads);
    addr_map_free(&t->children);
    addr_map_free(&t->thread_nodes);
    memset(t, 0, sizeof(*t));
}

uint32_t call_tree_child(struct call_tree *t, uint32_t parent, uint32_t sym)
{
    uint32_t hint = t->nodes[parent].last_found;
    if (hint != CALL_TREE_NONE && t->nodes[hint].sym == sym)
        return hint;
    uint64_t key = (uint64_t)parent << 32 | sym;
    uintptr_t known = (uintptr_t)addr_map_get(&t->children, key);
    uint32_t n = known ? (uint32_t)(known - 1) : new_node(t, parent, sym);
    if (n == CALL_TREE_NONE)
        return n;
    if (!known && addr_map_put(&t->children, key, (void *)((uintptr_t)n + 1)) < 0)
        return CALL_TREE_NONE;
    t->nodes[parent].last_found = n;
    return n;
}

uint32_t call_tree_thread(struct call_tree *t, uint32_t pid, uint32_t tid)
{
    uintptr_t known = (uintptr_t)addr_map_get(&t->thread_nodes, tid);
    if (known)
        return (uint32_t)(known - 1);
    struct call_tree_thread *threads = reallocarray(t->threads, t->nthreads + 1, sizeof(*threads));
    if (!threads)
        return CALL_TREE_NONE;
    t->threads = threads;
    uint32_t n = new_node(t, CALL_TREE_ROOT, CALL_TREE_THREAD | (uint32_t)t->nthreads);
    if (n == CALL_TREE_NONE || addr_map_put(&t->thread_nodes, tid, (void *)((uintptr_t)n + 1)) < 0)
        return CALL_TREE_NONE;
    threads[t->nthreads++] = (struct call_tree_thread){pid, tid};
    return n;
}

const char *call_tree_node_name(const struct call_tree *t, uint32_t n, call_tree_name_fn *name,
                                void *ctx, char *buf, size_t len)
{
    uint32_t sym = t->nodes[n].sym;
    if (sym == CALL_TREE_NONE)
        return "all";
    if (!(sym & CALL_TREE_THREAD))
        return name(ctx, sym);
    const struct call_tree_thread *th = &t->threads[sym & ~CALL_TREE_THREAD];
    snprintf(buf, len, "[pid %u tid %u]", th->pid, th->tid);
    return buf;
}

struct sort_ctx {
    const struct call_tree *t;
    call_tree_name_fn *name;
    void *ctx;
};

static int by_name(const void *a, const void *b, void *arg)
{
    const struct sort_ctx *sc = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    char bx[48], by[48];
    int c = strcmp(call_tree_node_name(sc->t, x, sc->name, sc->ctx, bx, sizeof(bx)),
                   call_tree_node_name(sc->t, y, sc->name, sc->ctx, by, sizeof(by)));
    if (c)
        return c;
    uint32_t sx = sc->t->nodes[x].sym, sy = sc->t->nodes[y].sym;
    return (sx > sy) - (sx < sy);
}

int call_tree_sort(struct call_tree *t, call_tree_name_fn *name, void *ctx)
{
    size_t cap = 0;
    uint32_t *kids = NULL;
    struct sort_ctx sc = {t, name, ctx};
    for (size_t p = 0; p < t->nnodes; p++) {
        size_t n = 0;
        for (uint32_t c = t->nodes[p].first_child; c != CALL_TREE_NONE;
             c = t->nodes[c].next_sibling) {
            if (n == cap) {
                cap = cap ? cap * 2 : 64;
                uint32_t *k = reallocarray(kids, cap, sizeof(*kids));
                if (!k) {
                    free(kids);
                    return -1;
                }
                kids = k;
            }
            kids[n++] = c;
        }
        if (n < 2)
            continue;
        qsort_r(kids, n, sizeof(*kids), by_name, &sc);
        t->nodes[p].first_child = kids[0];
        for (size_t i = 0; i + 1 < n; i++)
            t->nodes[kids[i]].next_sibling = kids[i + 1];
        t->nodes[kids[n - 1]].next_sibling = CALL_TREE_NONE;
        t->nodes[p].last_child = kids[n - 1];
    }
    free(kids);
    return 0;
}

int call_tree_walk(const struct call_tree *t, call_tree_visit_fn *fn, void *ctx)
{
    uint32_t n = t->nnodes ? t->nodes[CALL_TREE_ROOT].first_child : CALL_TREE_NONE;
    while (n != CALL_TREE_NONE) {
        int rc = fn(ctx, t, n);
        if (rc)
            return rc;
        if (t->nodes[n].first_child != CALL_TREE_NONE) {
            n = t->nodes[n].first_child;
            continue;
        }
        /* up until a node with a next sibling; the root has none */
        while (n != CALL_TREE_ROOT && t->nodes[n].next_sibling == CALL_TREE_NONE)
            n = t->nodes[n].parent;
        n = n == CALL_TREE_ROOT ? CALL_TREE_NONE : t->nodes[n].next_sibling;
    }
    return 0;
}
