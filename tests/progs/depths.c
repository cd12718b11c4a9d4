/* Calls at known depths and of known lengths, for -D and --min-duration. The program counts
 * its calls per function and per depth itself ("depth NAME D N", main at depth 1), and slow()
 * alone lasts long: 100 ms, where every other call takes microseconds even under ptrace. */
#include "common.h"
#include <time.h>

enum { F_MAIN, F_WORK, F_SLOW, F_REC, F_LEAF, NFUNCS };
static const char *const names[NFUNCS] = {"main", "work", "slow", "rec", "leaf"};
enum { MAX_DEPTH = 16 };
static unsigned long calls[NFUNCS][MAX_DEPTH + 1];
static int depth;

#define ENTER(f) calls[f][++depth]++
#define LEAVE() depth--

TRACED void leaf(void)
{
    ENTER(F_LEAF);
    BARRIER();
    LEAVE();
}

TRACED void rec(int n)
{
    ENTER(F_REC);
    if (n > 0)
        rec(n - 1);
    leaf();
    LEAVE();
}

TRACED void slow(void)
{
    ENTER(F_SLOW);
    struct timespec ts = {0, 100 * 1000 * 1000};
    while (nanosleep(&ts, &ts) != 0)
        ;
    LEAVE();
}

TRACED void work(int i)
{
    ENTER(F_WORK);
    if (i == 1)
        slow();
    for (int k = 0; k < 20; k++)
        leaf();
    rec(4);
    LEAVE();
}

int main(void)
{
    ENTER(F_MAIN);
    for (int i = 0; i < 3; i++)
        work(i);
    LEAVE();
    for (int f = 0; f < NFUNCS; f++)
        for (int d = 1; d <= MAX_DEPTH; d++)
            if (calls[f][d])
                printf("depth %s %d %lu\n", names[f], d, calls[f][d]);
    return 0;
}
