/* Plain recursion (fib) and non-tail mutual recursion (is_even/is_odd). */
#include "common.h"
#include <stdlib.h>

static unsigned long n_fib, n_even, n_odd, n_main;
/* fib recurses through a volatile pointer: gcc -O2 would otherwise turn
 * "return fib(n-1) + fib(n-2)" into a loop plus one call (tail recursion
 * with an accumulator), and the program's counter would count loop turns. */
static int (*volatile fib_ptr)(int);

TRACED int is_odd(unsigned n);

TRACED int fib(int n)
{
    COUNT(n_fib);
    if (n < 2)
        return n;
    return fib_ptr(n - 1) + fib_ptr(n - 2);
}

/* "1 - f(...)" keeps the calls out of tail position: these are real nested
 * frames at -O2 too. */
TRACED int is_even(unsigned n)
{
    COUNT(n_even);
    if (n == 0)
        return 1;
    return 1 - is_odd(n - 1);
}

TRACED int is_odd(unsigned n)
{
    COUNT(n_odd);
    if (n == 0)
        return 0;
    return 1 - is_even(n - 1);
}

int main(int argc, char **argv)
{
    COUNT(n_main);
    int n = argc > 1 ? atoi(argv[1]) : 18;
    fib_ptr = fib;
    printf("fib(%d) = %d\n", n, fib(n));
    printf("is_even(777) = %d\n", is_even(777));
    printf("is_odd(500) = %d\n", is_odd(500));
    PRINT_COUNT("fib", n_fib);
    PRINT_COUNT("is_even", n_even);
    PRINT_COUNT("is_odd", n_odd);
    PRINT_COUNT("main", n_main);
    return 0;
}
