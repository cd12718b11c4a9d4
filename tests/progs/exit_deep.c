/* exit() called from deep inside nested traced calls: main, l1, l2 and l3
 * stay open and must be marked unfinished; the atexit handler runs inside
 * exit() (inside l3) and finishes normally. */
#include "common.h"
#include <stdlib.h>

static unsigned long n_l1, n_l2, n_l3, n_hook, n_main, n_helper;
static volatile int sink;

TRACED void helper(int x)
{
    COUNT(n_helper);
    sink = x;
}

TRACED void at_exit_hook(void)
{
    COUNT(n_hook);
    helper(7);
    PRINT_COUNT("main", n_main);
    PRINT_COUNT("l1", n_l1);
    PRINT_COUNT("l2", n_l2);
    PRINT_COUNT("l3", n_l3);
    PRINT_COUNT("at_exit_hook", n_hook);
    PRINT_COUNT("helper", n_helper);
    fflush(stdout);
}

TRACED void l3(int x)
{
    COUNT(n_l3);
    helper(x);
    if (x > 2)
        exit(5);
    sink = x;
}

TRACED void l2(int x)
{
    COUNT(n_l2);
    l3(x + 1);
    BARRIER();
    sink++;
}
TRACED void l1(int x)
{
    COUNT(n_l1);
    l2(x + 1);
    BARRIER();
    sink++;
}

int main(void)
{
    COUNT(n_main);
    atexit(at_exit_hook);
    l1(0); /* returns normally: l3(2) */
    l1(1); /* exits from l3(3) */
    printf("not reached\n");
    return 0;
}
