/* leaf.c - calltrace benchmark: a loop calling a tiny leaf function.
 *
 * Usage: leaf M    (calls leaf() M times)
 *
 * Function calls in the executable: M calls to leaf() plus 1 to main().
 * leaf() is 5 instructions; noinline/noipa keep every call a real call.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* With BENCH_INPROC set, the program prints how long its calls took, measured inside it
 * (inproc_ns N on stderr): the cost of tracing without the tracer's start and end. */
static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline, noipa)) unsigned long leaf(unsigned long x)
{
    return (x * 2654435761UL) ^ (x >> 7);
}

int main(int argc, char **argv)
{
    long m = argc > 1 ? atol(argv[1]) : 1000;
    unsigned long acc = 0;

    uint64_t t0 = now_ns();
    for (long i = 0; i < m; i++)
        acc += leaf((unsigned long)i);
    uint64_t t1 = now_ns();
    if (getenv("BENCH_INPROC"))
        fprintf(stderr, "inproc_ns %llu\n", (unsigned long long)(t1 - t0));
    printf("leaf x %ld = %lu\n", m, acc);
    return 0;
}
