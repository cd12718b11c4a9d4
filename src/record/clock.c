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

/* A rate beyond this (ns a tick) comes from a damaged header: a clock ticks faster than 1 Hz. */
#define RATE_MAX (1ull << 32)

void clock_mapping_init(struct clock_mapping *m, const struct clock_anchor *a,
                        const struct clock_anchor *b, double ns_per_tick)
{
    m->start_ticks = a->ticks;
    m->start_ns = a->mono_ns > (uint64_t)CLOCK_NS_LIMIT ? CLOCK_NS_LIMIT : (int64_t)a->mono_ns;
    if (b && b->ticks > a->ticks && b->mono_ns > a->mono_ns) {
        uint64_t dns = b->mono_ns - a->mono_ns, dticks = b->ticks - a->ticks;
        m->rate_int = dns / dticks;
        if (m->rate_int < RATE_MAX) {
            m->rate_frac = (uint64_t)(((unsigned __int128)(dns % dticks) << 64) / dticks);
            return;
        }
    } else if (ns_per_tick >= 0 && ns_per_tick < (double)RATE_MAX) { /* also false for NaN */
        m->rate_int = (uint64_t)ns_per_tick;
        double frac = (ns_per_tick - (double)m->rate_int) * 0x1p64;
        m->rate_frac = frac >= 0x1p64 ? UINT64_MAX : (uint64_t)frac;
        return;
    }
    m->rate_int = ns_per_tick != ns_per_tick || ns_per_tick < 0 ? 0 : RATE_MAX;
    m->rate_frac = 0;
}

int64_t clock_ticks_to_ns(const struct clock_anchor *a, const struct clock_anchor *b,
                          double ns_per_tick, uint64_t ticks)
{
    struct clock_mapping m;
    clock_mapping_init(&m, a, b, ns_per_tick);
    return clock_map(&m, ticks);
}
