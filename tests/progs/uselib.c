/* uselib [N]: calls the start-up-linked plugin library (plugin.c) N times from its own code,
 * through whatever PLT layout it was built with (lazy, -z now, -fno-plt, IBT's .plt.sec).
 * uselib loop: the same until a line arrives on stdin (to attach to), checking every result
 * against the same arithmetic done inline; exits 1 if one differed. */
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

int plugin_sum(int n);
void plugin_calls(unsigned long *sum, unsigned long *square);

static unsigned long n_run;

TRACED int run(int i)
{
    COUNT(n_run);
    return plugin_sum(i % 7);
}

static int sum_inline(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i * i;
    return s;
}

static int loop(void)
{
    struct pollfd in = {.fd = 0, .events = POLLIN};
    unsigned long rounds = 0, bad = 0;
    printf("ready\n");
    fflush(stdout);
    /* paced, 2 ms of sleep every 100 runs (~500 calls): unpaced, the inject engine recorded
     * 1.6 million calls before e2e 70 had seen the first, and read them back for a minute */
    for (;;) {
        for (int i = 0; i < 100; i++, rounds++)
            if (run(i) != sum_inline(i % 7))
                bad++;
        if (poll(&in, 1, 2) == 1)
            break;
    }
    printf("rounds>0 %d bad %lu\n", rounds > 0, bad);
    return bad != 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "loop") == 0)
        return loop();
    int n = argc > 1 ? atoi(argv[1]) : 50;
    long total = 0;
    for (int i = 0; i < n; i++)
        total += run(i);
    unsigned long sum, square;
    plugin_calls(&sum, &square);
    printf("total %ld\n", total);
    PRINT_COUNT("run", n_run);
    printf("count plugin_sum %lu\ncount plugin_square %lu\n", sum, square);
    return 0;
}
