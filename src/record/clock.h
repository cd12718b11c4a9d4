/* Timestamps: the TSC read by the tracer, mapped to CLOCK_MONOTONIC nanoseconds so that every
 * thread and process of a run (and runs on one machine) share one time base. */
#ifndef CALLTRACE_RECORD_CLOCK_H
#define CALLTRACE_RECORD_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "arch/x86_64/cycles.h"

struct clock_anchor {
    uint64_t ticks;   /* TSC, or CLOCK_MONOTONIC ns when the TSC is not usable */
    uint64_t mono_ns; /* CLOCK_MONOTONIC at the same instant */
};

struct clock_calibration {
    bool use_tsc;
    struct clock_anchor start;
    /* measured over a short pause at start; a run's final anchor refines it */
    double ns_per_tick;
};

/* Reads the TSC when it is invariant (constant_tsc and nonstop_tsc), else CLOCK_MONOTONIC. */
int clock_calibrate(struct clock_calibration *cal);
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t clock_mono_ns(void);
struct clock_anchor clock_anchor_now(const struct clock_calibration *cal);

/* ns = start.mono + (ticks - start.ticks) * rate, with rate from two anchors. */
int64_t clock_ticks_to_ns(const struct clock_anchor *a, const struct clock_anchor *b,
                          double ns_per_tick, uint64_t ticks);

/* The same mapping with its rate worked out once, as a 64.64 fixed-point number: readers
 * convert every event of a record, and a double's convert-multiply-compare chain was a
 * quarter of writing a trace. The rate comes exactly from the two anchors (a 128-bit
 * division), finer than a double holds. */
struct clock_mapping {
    uint64_t start_ticks;
    int64_t start_ns;
    uint64_t rate_int;  /* whole nanoseconds a tick */
    uint64_t rate_frac; /* and the fraction, in units of 2^-64 ns */
};

void clock_mapping_init(struct clock_mapping *m, const struct clock_anchor *a,
                        const struct clock_anchor *b, double ns_per_tick);

/* Timestamps are kept within +-2^61 ns (73 years): a damaged or hostile record can hold any
 * ticks and rate, and the difference of two clamped times still fits an int64. */
#define CLOCK_NS_LIMIT (INT64_C(1) << 61)

static inline int64_t clock_map(const struct clock_mapping *m, uint64_t ticks)
{
    int64_t dticks = (int64_t)(ticks - m->start_ticks);
    uint64_t mag = dticks < 0 ? 0 - (uint64_t)dticks : (uint64_t)dticks;
    unsigned __int128 frac = ((unsigned __int128)mag * m->rate_frac) >> 64;
    unsigned __int128 ns = (unsigned __int128)mag * m->rate_int + frac; /* < 2^64 * 2^33 */
    int64_t delta = ns > (unsigned __int128)CLOCK_NS_LIMIT ? CLOCK_NS_LIMIT : (int64_t)ns;
    int64_t t = m->start_ns + (dticks < 0 ? -delta : delta); /* both within 2^61 */
    return t > CLOCK_NS_LIMIT ? CLOCK_NS_LIMIT : t < -CLOCK_NS_LIMIT ? -CLOCK_NS_LIMIT : t;
}

static inline uint64_t clock_ticks(const struct clock_calibration *cal)
{
    if (cal->use_tsc)
        return arch_cycles();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
