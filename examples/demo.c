/* demo.c - a small program to try calltrace on.
 *
 * It makes nested calls, recursive ones and callbacks from the C library
 * (qsort), then prints a result:
 *
 *     make && ./calltrace ./examples/demo
 *
 * and open calltrace-out/trace.json in https://ui.perfetto.dev ("Open trace
 * file"). The functions are kept out of line so that each one shows up as a
 * call at any optimisation level.
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef __clang__
#define DEMO_FN __attribute__((noinline))
#else
#define DEMO_FN __attribute__((noinline, noclone))
#endif

enum { N_VALUES = 8 };

/* A tiny linear congruential generator, so every run prints the same. */
DEMO_FN static unsigned next_random(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return (*state >> 16) % 100;
}

DEMO_FN static void fill(int *v, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (int)next_random(&seed);
}

/* Called back by qsort() from inside libc. */
DEMO_FN static int compare_ints(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;

    return (x > y) - (x < y);
}

DEMO_FN static void sort(int *v, size_t n)
{
    qsort(v, n, sizeof *v, compare_ints);
}

DEMO_FN static double mean(const int *v, size_t n)
{
    long sum = 0;

    for (size_t i = 0; i < n; i++)
        sum += v[i];
    return (double)sum / (double)n;
}

DEMO_FN static void report(const int *v, size_t n)
{
    printf("sorted:");
    for (size_t i = 0; i < n; i++)
        printf(" %d", v[i]);
    printf("\nmin %d, max %d, mean %.2f\n", v[0], v[n - 1], mean(v, n));
}

/* Recursive, and not in tail position: prints x in binary, high bit first. */
DEMO_FN static void print_binary(unsigned long x)
{
    if (x > 1)
        print_binary(x / 2);
    putchar('0' + (int)(x & 1));
}

int main(void)
{
    int values[N_VALUES];

    fill(values, N_VALUES, 42);
    sort(values, N_VALUES);
    report(values, N_VALUES);
    printf("max in binary: ");
    print_binary((unsigned long)values[N_VALUES - 1]);
    putchar('\n');
    return 0;
}
