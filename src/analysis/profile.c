#include "analysis/profile.h"

#include <bsd/stdlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

static int grow_stats(struct profile *p, size_t nsyms)
{
    if (nsyms <= p->nstats)
        return 0;
    size_t cap = p->nstats ? p->nstats : 256;
    while (cap < nsyms)
        cap *= 2;
    struct func_stats *stats = reallocarray(p->stats, cap, sizeof(*stats));
    if (!stats)
        return -1;
    p->stats = stats;
    memset(stats + p->nstats, 0, (cap - p->nstats) * sizeof(*stats));
    if (p->wants & PROFILE_HISTS) {
        struct latency_hist **hists = reallocarray(p->hists, cap, sizeof(*hists));
        if (!hists)
            return -1;
        p->hists = hists;
        memset(hists + p->nstats, 0, (cap - p->nstats) * sizeof(*hists));
    }
    p->nstats = cap;
    return 0;
}

/* 1 kept, 0 hidden, -1 out of memory. */
static int frame_kept(struct profile *p, const struct call_thread *t, uint32_t sym)
{
    const struct profile_filter *f = p->filter;
    if (f->tid && t->tid != f->tid)
        return 0;
    if (f->max_depth && t->depth > f->max_depth)
        return 0;
    return sym_filter_keeps(&p->names, sym, p->replay.syms[sym].name);
}

/* frame->user: the nearest kept call at or above this one, as symbol + 1 (0: none), with
 * FRAME_KEPT when it is this one: a hidden recursive call has its kept caller's symbol. */
#define FRAME_KEPT 0x80000000u
#define FRAME_ANCESTOR(user) ((user) & ~FRAME_KEPT)

/* frame->node: the call tree's node of this call when it is kept, else that of its nearest
 * kept caller (CALL_TREE_NONE: none), which its self time goes to. */
static int tree_enter(struct profile *p, struct call_thread *t, struct call_frame *f)
{
    uint32_t above = t->depth > 1 ? f[-1].node : CALL_TREE_NONE;
    if (!(f->user & FRAME_KEPT)) {
        f->node = above;
        return 0;
    }
    if (above == CALL_TREE_NONE)
        above = p->wants & PROFILE_TREE_THREADS ? call_tree_thread(&p->tree, t->pid, t->tid)
                                                : CALL_TREE_ROOT;
    f->node = above == CALL_TREE_NONE ? above : call_tree_child(&p->tree, above, f->sym);
    return f->node == CALL_TREE_NONE ? -1 : 0;
}

static int on_enter(void *ctx, struct replay *r, struct call_thread *t, struct call_frame *f)
{
    struct profile *p = ctx;
    if (grow_stats(p, r->nsyms) < 0)
        return -1;
    if (p->filter->tid && t->tid == p->filter->tid)
        p->saw_tid = true;
    int kept = frame_kept(p, t, f->sym);
    if (kept < 0)
        return -1;
    if (kept)
        f->user = (f->sym + 1) | FRAME_KEPT;
    else
        f->user = t->depth > 1 ? FRAME_ANCESTOR(f[-1].user) : 0;
    return p->wants & PROFILE_TREE ? tree_enter(p, t, f) : 0;
}

static int add_edge(struct profile *p, uint32_t caller, uint32_t callee)
{
    uint64_t key = (uint64_t)caller << 32 | callee;
    struct profile_edge *e = addr_map_get(&p->edges, key);
    if (!e) {
        e = calloc(1, sizeof(*e));
        if (!e || addr_map_put(&p->edges, key, e) < 0) {
            free(e);
            return -1;
        }
        e->caller = caller;
        e->callee = callee;
    }
    e->calls++;
    return 0;
}

/* A kept call's time goes to its node; a hidden call's self time to its nearest kept caller's,
 * so that a subtree's self times add up to its calls' total. */
static void tree_exit(struct profile *p, const struct call_done *c)
{
    const struct call_frame *f = c->frame;
    if (f->node == CALL_TREE_NONE || (c->flags & EXIT_INHERITED))
        return;
    struct call_tree_node *n = &p->tree.nodes[f->node];
    n->self_ns = call_ns_add(n->self_ns, c->self_ns);
    if (f->user & FRAME_KEPT) {
        n->calls++;
        n->total_ns = call_ns_add(n->total_ns, c->total_ns);
    }
}

static int add_duration(struct profile *p, uint32_t sym, int64_t ns)
{
    if (!p->hists[sym] && !(p->hists[sym] = calloc(1, sizeof(struct latency_hist))))
        return -1;
    return latency_add(p->hists[sym], ns);
}

static int on_exit_call(void *ctx, struct replay *r, const struct call_done *c)
{
    struct profile *p = ctx;
    const struct call_frame *f = c->frame;
    (void)r;
    if (p->wants & PROFILE_TREE)
        tree_exit(p, c);
    if (!(f->user & FRAME_KEPT))
        return 0; /* hidden by a filter */
    uint32_t above = c->parent ? FRAME_ANCESTOR(c->parent->user) : 0;
    if ((p->wants & PROFILE_EDGES) && above && add_edge(p, above - 1, f->sym) < 0)
        return -1;
    if (c->flags & EXIT_INHERITED)
        return 0; /* the parent's call, already counted in the parent */
    if ((p->wants & PROFILE_HISTS) && add_duration(p, f->sym, c->total_ns) < 0)
        return -1;
    struct func_stats *s = &p->stats[f->sym];
    if (!s->calls || c->total_ns < s->min_ns)
        s->min_ns = c->total_ns;
    if (c->total_ns > s->max_ns)
        s->max_ns = c->total_ns;
    s->calls++;
    s->unfinished += (c->flags & EXIT_UNFINISHED) != 0;
    s->sum_ns = call_ns_add(s->sum_ns, c->total_ns);
    s->self_ns = call_ns_add(s->self_ns, c->self_ns);
    if (!f->recursive)
        s->total_ns = call_ns_add(s->total_ns, c->total_ns);
    return 0;
}

int profile_build(struct profile *p, const char *record_path, const struct profile_filter *filter,
                  unsigned wants)
{
    static const struct profile_filter all;
    memset(p, 0, sizeof(*p));
    p->replay.calls.file.fd = -1;
    p->filter = filter ? filter : &all;
    p->wants = wants;
    if (sym_filter_init(&p->names, p->filter) < 0)
        return -1;
    if (addr_map_init(&p->edges, 256) < 0 ||
        ((wants & PROFILE_TREE) && call_tree_init(&p->tree) < 0)) {
        err_msg("out of memory");
        return -1;
    }
    if (replay_open(&p->replay, record_path) < 0)
        return -1;
    static const struct replay_ops ops = {.enter = on_enter, .exit = on_exit_call};
    if (replay_run(&p->replay, &ops, p) != 0)
        return -1;
    return grow_stats(p, p->replay.nsyms);
}

void profile_free(struct profile *p)
{
    ADDR_MAP_FOREACH(&p->edges, slot)
    free(slot->value);
    addr_map_free(&p->edges);
    replay_close(&p->replay);
    for (size_t s = 0; p->hists && s < p->nstats; s++) {
        if (p->hists[s])
            latency_free(p->hists[s]);
        free(p->hists[s]);
    }
    free(p->hists);
    call_tree_free(&p->tree);
    free(p->stats);
    sym_filter_free(&p->names);
    memset(p, 0, sizeof(*p));
}

void profile_warn_unmatched(const struct profile *p)
{
    sym_filter_warn_unmatched(&p->names, &p->replay);
}

static int edge_order(const void *a, const void *b)
{
    const struct profile_edge *x = *(struct profile_edge *const *)a;
    const struct profile_edge *y = *(struct profile_edge *const *)b;
    if (x->caller != y->caller)
        return x->caller < y->caller ? -1 : 1;
    return x->callee < y->callee ? -1 : x->callee > y->callee;
}

struct profile_edge **profile_edges(const struct profile *p, size_t *n)
{
    struct profile_edge **edges = calloc(p->edges.count + 1, sizeof(*edges));
    *n = 0;
    if (!edges)
        return NULL;
    ADDR_MAP_FOREACH(&p->edges, slot)
    edges[(*n)++] = slot->value;
    qsort(edges, *n, sizeof(*edges), edge_order);
    return edges;
}
