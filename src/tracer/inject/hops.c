#include "tracer/inject/hops.h"

#include <stdlib.h>

int hop_gaps_add(struct hop_gaps *g, uint64_t lo, uint64_t hi)
{
    if (hi - lo < HOP_LEN)
        return 0;
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 256;
        struct hop_gap *v = reallocarray(g->v, cap, sizeof(*v));
        if (!v)
            return -1;
        g->v = v;
        g->cap = cap;
    }
    g->v[g->n++] = (struct hop_gap){lo, hi, lo};
    return 0;
}

static int cmp_gap(const void *a, const void *b)
{
    const struct hop_gap *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

void hop_gaps_sort(struct hop_gaps *g)
{
    if (g->n)
        qsort(g->v, g->n, sizeof(*g->v), cmp_gap);
}

/* The first gap whose end is above addr, or g->n. */
static size_t first_ending_above(const struct hop_gaps *g, uint64_t addr)
{
    size_t lo = 0, hi = g->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (g->v[mid].hi <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void hop_gaps_reserve(struct hop_gaps *g, uint64_t lo, uint64_t hi)
{
    for (size_t i = first_ending_above(g, lo); i < g->n && g->v[i].lo < hi; i++)
        if (g->v[i].next < hi)
            g->v[i].next = hi; /* what comes before it is left unused: it is never much */
}

bool hop_gaps_taken(const struct hop_gaps *g, uint64_t lo, uint64_t hi)
{
    for (size_t i = first_ending_above(g, lo); i < g->n && g->v[i].lo < hi; i++)
        if (lo < g->v[i].next)
            return true;
    return false;
}

uint64_t hop_take(struct hop_gaps *g, uint64_t next_ip)
{
    /* rel8: the slot starts in [next_ip - 128, next_ip + 127] */
    uint64_t lo = next_ip >= 128 ? next_ip - 128 : 0, hi = next_ip + 127;
    for (size_t i = first_ending_above(g, lo); i < g->n && g->v[i].lo <= hi; i++) {
        struct hop_gap *gap = &g->v[i];
        uint64_t at = gap->next > lo ? gap->next : lo;
        if (crosses_page(at, HOP_LEN))
            at = (at + HOP_LEN - 1) / PATCH_PAGE * PATCH_PAGE; /* the next page's start */
        if (at <= hi && at + HOP_LEN <= gap->hi) {
            gap->next = at + HOP_LEN;
            return at;
        }
    }
    return 0;
}

void hop_gaps_free(struct hop_gaps *g)
{
    free(g->v);
    *g = (struct hop_gaps){0};
}
