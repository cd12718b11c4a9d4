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

static inline uint64_t clock_ticks(const struct clock_calibration *cal)
{
    if (cal->use_tsc)
        return arch_cycles();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
