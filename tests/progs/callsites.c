/* Calls from known lines, for record --callsites (e2e 111): each call line carries a marker
 * the test finds with grep -n.
 *
 *   callsites [N]  main() calls twice() N times (default 1) from one line; twice() calls
 *                  leaf() 3 times from one line and 5 times from another; then main() sorts 4
 *                  numbers with qsort(), which calls cmp() from the C library (a call site in
 *                  no traced image).
 *
 * Prints "count NAME N" per function. */
#include "common.h"
#include <stdlib.h>

static unsigned long n_twice, n_leaf, n_cmp;

TRACED int leaf(int x)
{
    COUNT(n_leaf);
    BARRIER();
    return x + 1;
}

TRACED int cmp(const void *a, const void *b)
{
    COUNT(n_cmp);
    return *(const int *)a - *(const int *)b;
}

TRACED int twice(void)
{
    COUNT(n_twice);
    int sum = 0;
    for (int i = 0; i < 3; i++)
        sum += leaf(i); /* SITE_A */
    for (int i = 0; i < 5; i++)
        sum += leaf(i * 2); /* SITE_B */
    return sum;
}

int main(int argc, char **argv)
{
    int numbers[] = {4, 1, 3, 2}, rounds = argc > 1 ? atoi(argv[1]) : 1, sum = 0;
    for (int i = 0; i < rounds; i++)
        sum += twice(); /* SITE_MAIN */
    qsort(numbers, 4, sizeof(numbers[0]), cmp);
    printf("sum %d sorted %d %d %d %d\n", sum, numbers[0], numbers[1], numbers[2], numbers[3]);
    PRINT_COUNT("twice", n_twice);
    PRINT_COUNT("leaf", n_leaf);
    PRINT_COUNT("cmp", n_cmp);
    return 0;
}
