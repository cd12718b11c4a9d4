/* A library with an IFUNC of its own, for tests/e2e/72: twice() is resolved at load time to
 * one of two implementations; the resolver picks by the environment of the process (through
 * __builtin_cpu_supports, like real ones, but with a choice the test knows: both count). */
#include "common.h"

static unsigned long n_twice;

TRACED static int twice_add(int x)
{
    COUNT(n_twice);
    return x + x;
}

TRACED static int twice_shift(int x)
{
    COUNT(n_twice);
    return x << 1;
}

static unsigned long n_pick; /* resolver calls: the dynamic linker's, and calltrace's own */

static int (*pick_twice(void))(int)
{
    COUNT(n_pick);
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse2") ? twice_shift : twice_add;
}

int twice(int x) __attribute__((ifunc("pick_twice")));

unsigned long twice_calls(void)
{
    return n_twice;
}

unsigned long pick_calls(void)
{
    return n_pick;
}
