/* stripped [N]: for tests/e2e/104, traced stripped (no .symtab): its functions come from its
 * FDEs. exported_sum is exported (-Wl,--export-dynamic-symbol), so .dynsym names it; the static
 * functions have no name left (func_0xADDRESS). gcc splits the unlikely paths of walk and clamp
 * into walk.cold (after walk's prologue: entered mid-frame) and clamp.cold (from a frameless
 * point: its entry state is a function's, but it is only jumped to and jumps back): neither is
 * a function. report_bad is a cold function, called. tail_target is reached only by a tail jump
 * from tail_caller, and returns: a function. Prints "count NAME N" for each. */
#include <stdlib.h>

#include "common.h"

long lib_run(long n);
long lib_scale(long x);
void lib_report(void);

static unsigned long n_main, n_exported_sum, n_walk, n_clamp, n_report_bad, n_tail_caller,
    n_tail_target;
static volatile long sink;

__attribute__((cold)) TRACED static void report_bad(long v)
{
    COUNT(n_report_bad);
    sink = v;
}

TRACED static long clamp(long x)
{
    COUNT(n_clamp);
    if (x == 77) {
        report_bad(x);
        x = sink + 1;
    }
    return x * 5;
}

TRACED static long walk(const long *v, long n)
{
    COUNT(n_walk);
    long s = 0;
    for (long i = 0; i < n; i++) {
        if (v[i] < 0) { /* the cold path rejoins the loop */
            report_bad(v[i]);
            s -= v[i] * 3;
            continue;
        }
        s += v[i] * lib_scale(clamp(v[(i + 1) % n])); /* walk keeps s, i in saved registers */
    }
    return s;
}

TRACED static long tail_target(long x)
{
    COUNT(n_tail_target);
    return x * 3 + sink;
}

TRACED long tail_caller(long x)
{
    COUNT(n_tail_caller);
    return tail_target(x + 1);
}

TRACED long exported_sum(long n)
{
    COUNT(n_exported_sum);
    long v[4] = {n, -n, n + 1, 77};
    return walk(v, 4) + tail_caller(n);
}

int main(int argc, char **argv)
{
    COUNT(n_main);
    long n = argc > 1 ? atol(argv[1]) : 10, total = 0;
    for (long i = 0; i < n; i++)
        total += exported_sum(i % 100);
    total += lib_run(n);
    printf("total %ld\n", total);
    PRINT_COUNT("main", n_main);
    PRINT_COUNT("exported_sum", n_exported_sum);
    PRINT_COUNT("walk", n_walk);
    PRINT_COUNT("clamp", n_clamp);
    PRINT_COUNT("report_bad", n_report_bad);
    PRINT_COUNT("tail_caller", n_tail_caller);
    PRINT_COUNT("tail_target", n_tail_target);
    lib_report();
    return 0;
}
