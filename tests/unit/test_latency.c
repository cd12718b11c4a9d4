/* The latency histogram: power-of-two counts exact at the bounds, percentiles by rank and never
 * more than 1/64 above the true value, min and max exact. */
#include <stdlib.h>

#include "analysis/latency.h"
#include "unit.h"

static void log2_buckets(void)
{
    struct latency_hist h = {0};
    /* 0 | 1 | 2 3 | 4..7 | 1023 | 1024 2047 | 2048 */
    static const int64_t values[] = {0, 1, 2, 3, 4, 7, 1023, 1024, 2047, 2048, -5};
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
        CHECK(latency_add(&h, values[i]) == 0);
    uint64_t counts[LATENCY_LOG2_BUCKETS];
    unsigned first, last;
    latency_log2_counts(&h, counts, &first, &last);
    CHECK_EQ_U64(first, 0);
    CHECK_EQ_U64(last, 12);     /* 2048 is in [2^11, 2^12) */
    CHECK_EQ_U64(counts[0], 2); /* 0 and the negative one, counted as 0 */
    CHECK_EQ_U64(counts[1], 1);
    CHECK_EQ_U64(counts[2], 2);
    CHECK_EQ_U64(counts[3], 2);
    CHECK_EQ_U64(counts[10], 1);
    CHECK_EQ_U64(counts[11], 2);
    CHECK_EQ_U64(counts[12], 1);
    CHECK_EQ_U64(h.count, 11);
    CHECK_EQ_U64(h.min_ns, 0);
    CHECK_EQ_U64(h.max_ns, 2048);
    CHECK_EQ_U64(latency_log2_low(0), 0);
    CHECK_EQ_U64(latency_log2_low(1), 1);
    CHECK_EQ_U64(latency_log2_low(12), 2048);
    latency_free(&h);
}

static void percentiles(void)
{
    struct latency_hist h = {0};
    CHECK_EQ_U64(latency_percentile(&h, 50), 0);
    /* 1..100: exact below 128 */
    for (int64_t v = 1; v <= 100; v++)
        latency_add(&h, v);
    CHECK_EQ_U64(latency_percentile(&h, 50), 50);
    CHECK_EQ_U64(latency_percentile(&h, 90), 90);
    CHECK_EQ_U64(latency_percentile(&h, 99), 99);
    CHECK_EQ_U64(latency_percentile(&h, 100), 100);
    latency_free(&h);

    /* 1000 calls of 1 ms and 10 of 1 s: p99 is 1 ms within 1/64, p99.5 is the max */
    for (int i = 0; i < 990; i++)
        latency_add(&h, 1000000);
    for (int i = 0; i < 10; i++)
        latency_add(&h, 1000000000);
    int64_t p99 = latency_percentile(&h, 99);
    CHECK(p99 >= 1000000 && p99 <= 1000000 + 1000000 / 64);
    CHECK_EQ_U64(latency_percentile(&h, 99.5), 1000000000);
    CHECK_EQ_U64(latency_percentile(&h, 100), 1000000000);
    latency_free(&h);

    /* one value: every percentile is it, not its bucket's bound */
    latency_add(&h, 123456789);
    CHECK_EQ_U64(latency_percentile(&h, 1), 123456789);
    CHECK_EQ_U64(latency_percentile(&h, 99), 123456789);
    latency_free(&h);
}

/* Every value lands in a bucket whose bounds hold it, at most 1/64 wide. */
static void bucket_precision(void)
{
    struct latency_hist h = {0};
    uint64_t v = 129;
    for (int i = 0; i < 2000; i++, v = v * 1.0173 + 1) {
        if (v > INT64_MAX / 2)
            break;
        latency_add(&h, (int64_t)v);
        int64_t p = latency_percentile(&h, 100); /* the max: exact */
        CHECK_EQ_U64(p, v);
        struct latency_hist one = {0};
        latency_add(&one, (int64_t)v);
        latency_add(&one, INT64_MAX); /* so that p50 is v's bucket's bound, not the max */
        int64_t bound = latency_percentile(&one, 50);
        CHECK(bound >= (int64_t)v && (uint64_t)bound - v <= v / 64);
        latency_free(&one);
    }
    latency_free(&h);
}

int main(void)
{
    log2_buckets();
    percentiles();
    bucket_precision();
    return unit_finish("test_latency");
}
