/* Simple nested calls, built as -static and -no-pie variants:
 * main -> a -> b -> c, and main -> c directly. */
#include "common.h"

static unsigned long n_a, n_b, n_c, n_main;
static volatile int sink;

TRACED int c(int x)
{
    COUNT(n_c);
    return x + 1;
}
TRACED int b(int x)
{
    COUNT(n_b);
    int r = c(x) * 2;
    sink = r;
    return r;
}
TRACED int a(int x)
{
    COUNT(n_a);
    int r = b(x) + b(x + 1);
    sink = r;
    return r;
}

int main(void)
{
    COUNT(n_main);
    long s = 0;
    for (int i = 0; i < 100; i++)
        s += a(i);
    for (int i = 0; i < 50; i++)
        s += c(i);
    printf("sum %ld\n", s);
    PRINT_COUNT("a", n_a);
    PRINT_COUNT("b", n_b);
    PRINT_COUNT("c", n_c);
    PRINT_COUNT("main", n_main);
    return 0;
}
