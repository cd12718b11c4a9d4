/* The distribution of one function's call durations, in memory that does not grow with the
 * number of calls: a log-linear histogram (HdrHistogram's layout). Durations below 128 ns each
 * have a bucket of their own; above, every power of two [2^e, 2^(e+1)) is cut into 64 equal
 * buckets, so a percentile read from it is at most 1/64 (1.6%) above the true value. The
 * buckets of a power of two are allocated when one of its durations is first seen: a function
 * whose calls span ten powers of two holds about 5 KiB.
 *
 * The power-of-two counts that `report --hist` prints (bpftrace's hist) come out exact, since
 * no bucket straddles a power of two. */
#ifndef CALLTRACE_ANALYSIS_LATENCY_H
#define CALLTRACE_ANALYSIS_LATENCY_H

#include <stdbool.h>
#include <stdint.h>

#define LATENCY_SUB_BITS 6
#define LATENCY_SUB (1u << LATENCY_SUB_BITS)
/* 0..127 exact, then one chunk of LATENCY_SUB buckets per power of two 2^7 .. 2^63 */
#define LATENCY_CHUNKS (64 - LATENCY_SUB_BITS + 1)

struct latency_hist {
    uint64_t count;
    int64_t min_ns, max_ns;
    uint64_t *chunks[LATENCY_CHUNKS]; /* LATENCY_SUB counts each, NULL until used */
};

/* Counts one duration (negative ones as 0). Returns -1 when out of memory (nothing counted). */
int latency_add(struct latency_hist *h, int64_t ns);
void latency_free(struct latency_hist *h);

/* The duration at or below which pct percent of the calls are (0 < pct <= 100): the upper
 * bound of the bucket holding that rank, never above the largest duration seen. 0 without
 * calls. */
int64_t latency_percentile(const struct latency_hist *h, double pct);

/* Power-of-two bucket k holds the durations in [latency_log2_low(k), latency_log2_low(k+1)):
 * bucket 0 is 0 ns alone, bucket k >= 1 is [2^(k-1), 2^k). */
#define LATENCY_LOG2_BUCKETS 64
uint64_t latency_log2_low(unsigned k);
/* counts[k] for k < LATENCY_LOG2_BUCKETS; *first and *last the lowest and highest non-empty
 * bucket (both 0 without calls). */
void latency_log2_counts(const struct latency_hist *h, uint64_t counts[LATENCY_LOG2_BUCKETS],
                         unsigned *first, unsigned *last);

#endif
