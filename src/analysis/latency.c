#include "analysis/latency.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Where a duration goes: chunk 0 and 1 hold 0..127 one by one; chunk c >= 2 holds the power
 * of two 2^(c+5) .. 2^(c+6)-1 in LATENCY_SUB buckets of 2^(c-1) each. */
static void bucket_of(uint64_t v, unsigned *chunk, unsigned *sub)
{
    if (v < 2 * LATENCY_SUB) {
        *chunk = (unsigned)(v >> LATENCY_SUB_BITS);
        *sub = (unsigned)(v & (LATENCY_SUB - 1));
        return;
    }
    unsigned shift = (unsigned)(63 - __builtin_clzll(v)) - LATENCY_SUB_BITS;
    *chunk = shift + 1;
    *sub = (unsigned)(v >> shift) - LATENCY_SUB;
}

static uint64_t bucket_low(unsigned chunk, unsigned sub)
{
    if (chunk < 2)
        return (uint64_t)chunk * LATENCY_SUB + sub;
    return (uint64_t)(LATENCY_SUB + sub) << (chunk - 1);
}

static uint64_t bucket_high(unsigned chunk, unsigned sub)
{
    return bucket_low(chunk, sub) + (chunk < 2 ? 0 : (UINT64_C(1) << (chunk - 1)) - 1);
}

int latency_add(struct latency_hist *h, int64_t ns)
{
    uint64_t v = ns > 0 ? (uint64_t)ns : 0;
    unsigned chunk, sub;
    bucket_of(v, &chunk, &sub);
    if (!h->chunks[chunk] && !(h->chunks[chunk] = calloc(LATENCY_SUB, sizeof(uint64_t))))
        return -1;
    h->chunks[chunk][sub]++;
    if (!h->count || (int64_t)v < h->min_ns)
        h->min_ns = (int64_t)v;
    if (!h->count || (int64_t)v > h->max_ns)
        h->max_ns = (int64_t)v;
    h->count++;
    return 0;
}

void latency_free(struct latency_hist *h)
{
    for (unsigned c = 0; c < LATENCY_CHUNKS; c++)
        free(h->chunks[c]);
    memset(h, 0, sizeof(*h));
}

int64_t latency_percentile(const struct latency_hist *h, double pct)
{
    if (!h->count)
        return 0;
    /* the rank of the call at pct: the smallest n with n >= pct% of count */
    double want = ceil(pct / 100.0 * (double)h->count);
    uint64_t rank = want < 1 ? 1 : want > (double)h->count ? h->count : (uint64_t)want;
    uint64_t seen = 0;
    for (unsigned c = 0; c < LATENCY_CHUNKS; c++) {
        for (unsigned s = 0; h->chunks[c] && s < LATENCY_SUB; s++) {
            seen += h->chunks[c][s];
            if (seen < rank)
                continue;
            uint64_t high = bucket_high(c, s);
            if (high > (uint64_t)h->max_ns)
                return h->max_ns;
            return (int64_t)high < h->min_ns ? h->min_ns : (int64_t)high;
        }
    }
    return h->max_ns;
}

uint64_t latency_log2_low(unsigned k)
{
    return k ? UINT64_C(1) << (k - 1) : 0;
}

static unsigned log2_bucket(uint64_t v)
{
    return v ? 64 - (unsigned)__builtin_clzll(v) : 0;
}

void latency_log2_counts(const struct latency_hist *h, uint64_t counts[LATENCY_LOG2_BUCKETS],
                         unsigned *first, unsigned *last)
{
    memset(counts, 0, LATENCY_LOG2_BUCKETS * sizeof(counts[0]));
    *first = *last = 0;
    bool any = false;
    for (unsigned c = 0; c < LATENCY_CHUNKS; c++) {
        for (unsigned s = 0; h->chunks[c] && s < LATENCY_SUB; s++) {
            if (!h->chunks[c][s])
                continue;
            unsigned k = log2_bucket(bucket_low(c, s)); /* the whole bucket is in one */
            counts[k] += h->chunks[c][s];
            if (!any)
                *first = k;
            *last = k;
            any = true;
        }
    }
}
