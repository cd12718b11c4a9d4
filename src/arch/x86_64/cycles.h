/* The machine's cycle counter: the TSC, read with rdtsc. Its ticks are what calltrace and the
 * trampolines stamp every event with (record/clock.h maps them to nanoseconds). */
#ifndef CALLTRACE_ARCH_X86_64_CYCLES_H
#define CALLTRACE_ARCH_X86_64_CYCLES_H

#include <stdbool.h>
#include <stdint.h>
#include <x86intrin.h>

static inline uint64_t arch_cycles(void)
{
    return __rdtsc();
}

/* Does the counter tick at one rate on every CPU, through sleep states (constant_tsc and
 * nonstop_tsc)? Only then can it time threads that move between CPUs. */
bool arch_cycles_invariant(void);

#endif
