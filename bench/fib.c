/* fib.c - calltrace benchmark: naive recursive Fibonacci.
 *
 * Usage: fib N     (prints fib(N))
 *
 * fib(N) makes exactly 2 * fib(N + 1) - 1 calls to fib(); main() is one more
 * call of a function of the executable.  fib() is kept out of line and the
 * asm barrier stops GCC from turning one of the two recursive calls into a
 * loop (it does that at -O2 for "return fib(n - 1) + fib(n - 2)"), so the
 * call count holds at any optimisation level.
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

__attribute__((noinline, noipa)) long fib(int n)
{
    if (n < 2)
        return n;
    long a = fib(n - 1);
    long b = fib(n - 2);
    __asm__ volatile("" : "+r"(a), "+r"(b));
    return a + b;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20;

    uint64_t t0 = now_ns();
    long r = fib(n);
    uint64_t t1 = now_ns();
    printf("fib(%d) = %ld\n", n, r);
    if (getenv("BENCH_INPROC"))
        fprintf(stderr, "inproc_ns %llu\n", (unsigned long long)(t1 - t0));
    return 0;
}
