#include "record/clock.h"

#include <stdio.h>
#include <string.h>

uint64_t clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One TSC/monotonic pair, taken where the two reads are closest together: the TSC read is the
 * midpoint of the reads around clock_gettime, so its error is half the shortest window seen. */
static struct clock_anchor tight_anchor(void)
{
    struct clock_anchor best = {0, 0};
    uint64_t best_window = UINT64_MAX;
    for (int i = 0; i < 64; i++) {
        uint64_t t0 = arch_cycles();
        uint64_t mono = clock_mono_ns();
        uint64_t t1 = arch_cycles();
        if (t1 - t0 < best_window) {
            best_window = t1 - t0;
            best.ticks = t0 + (t1 - t0) / 2;
            best.mono_ns = mono;
        }
    }
    return best;
}

struct clock_anchor clock_anchor_now(const struct clock_calibration *cal)
{
    if (!cal->use_tsc) {
        uint64_t now = clock_mono_ns();
        return (struct clock_anchor){now, now};
    }
    return tight_anchor();
}

int clock_calibrate(struct clock_calibration *cal)
{
    memset(cal, 0, sizeof(*cal));
    cal->use_tsc = arch_cycles_invariant();
    cal->start = clock_anchor_now(cal);
    if (!cal->use_tsc) {
        cal->ns_per_tick = 1.0;
        return 0;
    }
    /* 20 ms between two tight anchors: error about 1e-6, well under a microsecond per second
     * of trace. The final anchor written at the end of a run refines it further. */
    struct timespec pause = {0, 20 * 1000 * 1000};
    while (nanosleep(&pause, &pause) < 0)
        ;
    struct clock_anchor end = tight_anchor();
    if (end.ticks <= cal->start.ticks || end.mono_ns <= cal->start.mono_ns) {
        cal->use_tsc = false;
        cal->start = clock_anchor_now(cal);
        cal->ns_per_tick = 1.0;
        return 0;
    }
    cal->ns_per_tick =
        (double)(end.mono_ns - cal->start.mono_ns) / (double)(end.ticks - cal->start.ticks);
    return 0;
}

/* Timestamps are kept within +-2^61 ns (73 years): a damaged or hostile record can hold any
 * ticks and rate, and the difference of two clamped times still fits an int64. */
#define NS_LIMIT (INT64_C(1) << 61)

static int64_t clamp_ns(double ns)
{
    if (ns != ns)
        return 0; /* NaN: a rate of 0 times infinity */
    if (ns >= (double)NS_LIMIT)
        return NS_LIMIT;
    if (ns <= -(double)NS_LIMIT)
        return -NS_LIMIT;
    return (int64_t)ns;
}

int64_t clock_ticks_to_ns(const struct clock_anchor *a, const struct clock_anchor *b,
                          double ns_per_tick, uint64_t ticks)
{
    double rate = ns_per_tick;
    if (b && b->ticks > a->ticks && b->mono_ns > a->mono_ns)
        rate = (double)(b->mono_ns - a->mono_ns) / (double)(b->ticks - a->ticks);
    int64_t dticks = (int64_t)(ticks - a->ticks);
    int64_t start = a->mono_ns > (uint64_t)NS_LIMIT ? NS_LIMIT : (int64_t)a->mono_ns;
    int64_t ns = start + clamp_ns((double)dticks * rate); /* both within 2^61: no overflow */
    return ns > NS_LIMIT ? NS_LIMIT : ns < -NS_LIMIT ? -NS_LIMIT : ns;
}
