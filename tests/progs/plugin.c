/* A shared library for the -l tests (tests/e2e/70-*): linked at start-up by uselib.c, loaded and
 * unloaded by dlopen.c. Built with -DVARIANT=N into differently named copies. It keeps its own
 * counters, read by the program through plugin_calls(). */
#include "common.h"

#ifndef VARIANT
#define VARIANT 1
#endif

static unsigned long n_square, n_sum;

TRACED int plugin_square(int x)
{
    COUNT(n_square);
    return x * x * VARIANT;
}

TRACED int plugin_sum(int n)
{
    COUNT(n_sum);
    int s = 0;
    for (int i = 0; i < n; i++)
        s += plugin_square(i);
    return s;
}

/* Not traced by the tests' -F: how many calls this copy saw. */
void plugin_calls(unsigned long *sum, unsigned long *square)
{
    *sum = n_sum;
    *square = n_square;
}
