/* Tail calls: at -O2 these functions end in "jmp other_traced_function"
 * (or jmp into libc), so the callee returns straight to the caller's caller. */
#include "common.h"
#include <stdlib.h>

static unsigned long n_leaf, n_mid, n_top, n_ping, n_pong, n_to_lib, n_driver;
static volatile int sink;

TRACED int leaf(int x)
{
    COUNT(n_leaf);
    return x * 3 + 1;
}

TRACED int mid(int x)
{
    COUNT(n_mid);
    return leaf(x + 1); /* jmp leaf */
}

TRACED int top(int x)
{
    COUNT(n_top);
    return mid(x + 2); /* jmp mid */
}

TRACED int pong(int n);

/* Mutual tail recursion across two functions (never turned into a loop
 * because the functions are distinct and not inlinable). */
TRACED int ping(int n)
{
    COUNT(n_ping);
    if (n <= 0)
        return leaf(n); /* jmp leaf */
    return pong(n - 1); /* jmp pong */
}

TRACED int pong(int n)
{
    COUNT(n_pong);
    if (n <= 0)
        return leaf(-n);
    return ping(n - 1); /* jmp ping */
}

/* Tail call into a library function. */
TRACED long to_lib(const char *s)
{
    COUNT(n_to_lib);
    return strtol(s, NULL, 10); /* jmp strtol */
}

/* A non-tail caller so there is a frame above each tail chain. */
TRACED int driver(int i)
{
    COUNT(n_driver);
    int r = top(i);
    r += ping(i % 17);
    r += (int)to_lib("42");
    sink = r;
    return r + 1;
}

int main(void)
{
    long sum = 0;
    for (int i = 0; i < 300; i++)
        sum += driver(i);
    printf("sum %ld\n", sum);
    PRINT_COUNT("leaf", n_leaf);
    PRINT_COUNT("mid", n_mid);
    PRINT_COUNT("top", n_top);
    PRINT_COUNT("ping", n_ping);
    PRINT_COUNT("pong", n_pong);
    PRINT_COUNT("to_lib", n_to_lib);
    PRINT_COUNT("driver", n_driver);
    return 0;
}
