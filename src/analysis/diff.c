#include "analysis/diff.h"

#include <bsd/stdlib.h>
#include <stdlib.h>
#include <string.h>

int64_t diff_value(const struct diff_side *s, enum diff_key key)
{
    switch (key) {
    case DIFF_SELF:
        return s->self_ns;
    case DIFF_CALLS:
        return (int64_t)s->calls;
    case DIFF_AVG:
        return s->calls ? s->sum_ns / (int64_t)s->calls : 0;
    default:
        return s->total_ns;
    }
}

int64_t diff_change(const struct diff_row *r, enum diff_key key)
{
    return diff_value(&r->b, key) - diff_value(&r->a, key);
}

bool diff_percent(int64_t a, int64_t b, double *pct)
{
    if (a == 0)
        return false;
    *pct = 100.0 * ((double)b - (double)a) / (double)a;
    return true;
}

/* A function with calls in one of the runs. */
struct diff_entry {
    const char *name;
    const struct func_stats *s;
    bool in_b;
};

static int entry_order(const void *x, const void *y)
{
    const struct diff_entry *a = x, *b = y;
    return strcmp(a->name, b->name);
}

static size_t add_entries(const struct profile *p, bool in_b, struct diff_entry *to)
{
    size_t n = 0;
    for (uint32_t s = 0; s < p->replay.nsyms; s++)
        if (p->stats[s].calls)
            to[n++] = (struct diff_entry){p->replay.syms[s].name, &p->stats[s], in_b};
    return n;
}

static void add_side(struct diff_side *side, const struct func_stats *s)
{
    side->calls += s->calls;
    side->total_ns = call_ns_add(side->total_ns, s->total_ns);
    side->self_ns = call_ns_add(side->self_ns, s->self_ns);
    side->sum_ns = call_ns_add(side->sum_ns, s->sum_ns);
}

static int64_t magnitude(int64_t v)
{
    return v < 0 ? (v == INT64_MIN ? INT64_MAX : -v) : v;
}

/* A row with the size of its change worked out once, for qsort (which passes no key). */
struct keyed_row {
    struct diff_row row;
    int64_t size; /* |change|, or 0 when sorting by name */
};

static int row_order(const void *x, const void *y)
{
    const struct keyed_row *a = x, *b = y;
    if (a->size != b->size)
        return a->size > b->size ? -1 : 1;
    return strcmp(a->row.name, b->row.name);
}

int diff_functions(const struct profile *a, const struct profile *b, enum diff_key key,
                   struct diff_row **rows, size_t *n)
{
    *rows = NULL;
    *n = 0;
    struct diff_entry *all = calloc(a->replay.nsyms + b->replay.nsyms + 1, sizeof(*all));
    if (!all)
        return -1;
    size_t count = add_entries(a, false, all);
    count += add_entries(b, true, all + count);
    qsort(all, count, sizeof(*all), entry_order);
    struct keyed_row *keyed = calloc(count + 1, sizeof(*keyed));
    if (!keyed) {
        free(all);
        return -1;
    }
    size_t out = 0;
    for (size_t i = 0; i < count; out++) {
        struct diff_row *r = &keyed[out].row;
        r->name = all[i].name;
        for (; i < count && strcmp(all[i].name, r->name) == 0; i++)
            add_side(all[i].in_b ? &r->b : &r->a, all[i].s);
        keyed[out].size = key == DIFF_NAME ? 0 : magnitude(diff_change(r, key));
    }
    free(all);
    qsort(keyed, out, sizeof(*keyed), row_order);
    struct diff_row *result = calloc(out + 1, sizeof(*result));
    for (size_t i = 0; result && i < out; i++)
        result[i] = keyed[i].row;
    free(keyed);
    if (!result)
        return -1;
    *rows = result;
    *n = out;
    return 0;
}

/* A pair of nodes waiting to be visited. */
struct pair {
    uint32_t a, b;
};

struct pair_stack {
    struct pair *items;
    size_t n, cap;
};

static int push(struct pair_stack *s, uint32_t a, uint32_t b)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        struct pair *items = reallocarray(s->items, cap, sizeof(*items));
        if (!items)
            return -1;
        s->items = items;
        s->cap = cap;
    }
    s->items[s->n++] = (struct pair){a, b};
    return 0;
}

struct two_trees {
    const struct call_tree *t[2];
    call_tree_name_fn *name[2];
    void *ctx[2];
};

static const char *name_in(const struct two_trees *tt, int side, uint32_t n, char *buf, size_t len)
{
    return call_tree_node_name(tt->t[side], n, tt->name[side], tt->ctx[side], buf, len);
}

static uint32_t first_child(const struct call_tree *t, uint32_t n)
{
    return n == CALL_TREE_NONE ? CALL_TREE_NONE : t->nodes[n].first_child;
}

/* The children of the pair (pa, pb) merged by name, pushed last first so that they come off
 * the stack in name order. */
static int push_children(struct pair_stack *s, const struct two_trees *tt, uint32_t pa, uint32_t pb)
{
    size_t base = s->n;
    uint32_t a = first_child(tt->t[0], pa), b = first_child(tt->t[1], pb);
    while (a != CALL_TREE_NONE || b != CALL_TREE_NONE) {
        char ba[48], bb[48];
        int c = a == CALL_TREE_NONE ? 1
                : b == CALL_TREE_NONE
                    ? -1
                    : strcmp(name_in(tt, 0, a, ba, sizeof(ba)), name_in(tt, 1, b, bb, sizeof(bb)));
        if (push(s, c <= 0 ? a : CALL_TREE_NONE, c >= 0 ? b : CALL_TREE_NONE) < 0)
            return -1;
        if (c <= 0)
            a = tt->t[0]->nodes[a].next_sibling;
        if (c >= 0)
            b = tt->t[1]->nodes[b].next_sibling;
    }
    for (size_t i = base, j = s->n; i + 1 < j; i++, j--) { /* reversed */
        struct pair swap = s->items[i];
        s->items[i] = s->items[j - 1];
        s->items[j - 1] = swap;
    }
    return 0;
}

static enum diff_status status_of(const struct two_trees *tt, uint32_t a, uint32_t b)
{
    if (a == CALL_TREE_NONE)
        return DIFF_APPEARED;
    if (b == CALL_TREE_NONE)
        return DIFF_VANISHED;
    return tt->t[0]->nodes[a].calls == tt->t[1]->nodes[b].calls ? DIFF_SAME : DIFF_CHANGED;
}

int diff_trees(const struct call_tree *a, call_tree_name_fn *name_a, void *ctx_a,
               const struct call_tree *b, call_tree_name_fn *name_b, void *ctx_b, diff_tree_fn *fn,
               void *ctx)
{
    struct two_trees tt = {{a, b}, {name_a, name_b}, {ctx_a, ctx_b}};
    struct pair_stack s = {0};
    int rc = push_children(&s, &tt, CALL_TREE_ROOT, CALL_TREE_ROOT);
    while (rc == 0 && s.n) {
        struct pair p = s.items[--s.n];
        char buf[48];
        int side = p.a != CALL_TREE_NONE ? 0 : 1;
        uint32_t node = side ? p.b : p.a;
        struct diff_tree_row row = {
            .depth = tt.t[side]->nodes[node].depth,
            .name = name_in(&tt, side, node, buf, sizeof(buf)),
            .a = p.a,
            .b = p.b,
            .status = status_of(&tt, p.a, p.b),
        };
        rc = fn(ctx, &row);
        if (rc == 0)
            rc = push_children(&s, &tt, p.a, p.b);
    }
    free(s.items);
    return rc;
}
