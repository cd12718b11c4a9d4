/* leaf.c - calltrace benchmark: a loop calling a tiny leaf function.
 *
 * Usage: leaf M    (calls leaf() M times)
 *
 * Function calls in the executable: M calls to leaf() plus 1 to main().
 * leaf() is 5 instructions; noinline/noipa keep every call a real call.
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline, noipa)) unsigned long leaf(unsigned long x)
{
    return (x * 2654435761UL) ^ (x >> 7);
}

int main(int argc, char **argv)
{
    long m = argc > 1 ? atol(argv[1]) : 1000;
    unsigned long acc = 0;

    for (long i = 0; i < m; i++)
        acc += leaf((unsigned long)i);
    printf("leaf x %ld = %lu\n", m, acc);
    return 0;
}
