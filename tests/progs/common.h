/* Shared helpers for calltrace sample programs.
 *
 * TRACED marks a function that calltrace must see as a real call: it cannot
 * be inlined or cloned (no foo.constprop.0 / foo.isra.0 symbols at -O2).
 * Each program keeps its own counters (incremented at function entry) and
 * prints them at exit as "count NAME N" lines, which the e2e scripts compare
 * with the trace. */
#ifndef CT_COMMON_H
#define CT_COMMON_H
#include <stdio.h>

#ifdef __cplusplus
#define TRACED __attribute__((noinline, noclone, used))
#else
#define TRACED __attribute__((noinline, noclone, used))
#endif

/* Counter increments are atomic so they are right in threaded programs and
 * in signal handlers too; they are plain memory operations, they add no call. */
#define COUNT(var) __atomic_fetch_add(&(var), 1, __ATOMIC_RELAXED)

#define PRINT_COUNT(name, var)                                                                     \
    printf("count %s %lu\n", (name), (unsigned long)__atomic_load_n(&(var), __ATOMIC_RELAXED))

/* An optimisation barrier that makes the compiler assume memory is used. */
#define BARRIER() __asm__ __volatile__("" ::: "memory")
#endif
