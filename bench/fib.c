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
#include <stdio.h>
#include <stdlib.h>

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

    printf("fib(%d) = %ld\n", n, fib(n));
    return 0;
}
