/* The library of tests/e2e/104's stripped program: lib_run (exported, named by .dynsym once
 * stripped) calls lib_step, a static function whose only name is in .symtab, so a stripped
 * copy shows it as func_0xOFFSET. lib_report prints the counts both keep. */
#include "common.h"

static unsigned long n_lib_run, n_lib_step, n_lib_scale;

TRACED static long lib_step(long x)
{
    COUNT(n_lib_step);
    BARRIER();
    return x * 7 + 1;
}

TRACED long lib_run(long n)
{
    COUNT(n_lib_run);
    long s = 0;
    for (long i = 0; i < n; i++)
        s += lib_step(i);
    return s;
}

TRACED long lib_scale(long x)
{
    COUNT(n_lib_scale);
    return x * 2;
}

void lib_report(void)
{
    PRINT_COUNT("lib_run", n_lib_run);
    PRINT_COUNT("lib_step", n_lib_step);
    PRINT_COUNT("lib_scale", n_lib_scale);
}
