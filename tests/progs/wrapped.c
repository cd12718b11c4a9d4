/* A program run through wrappers (env, nice, timeout, runuser, sh -c, a script): it prints
 * what they set (its user id, the WRAPPED variable, its nice value, its arguments) and makes
 * known calls: main -> work 3 times, work -> leaf 4 times each. Built with -DRUNS_PROGRAMS, it
 * can run another program too: "then PATH ARGS..." execs PATH at once (a program with symbols
 * that runs programs; stripped, a wrapper). Without, it imports no exec function. */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common.h"

static unsigned long n_work, n_leaf;
static volatile int sink;

TRACED int leaf(int x)
{
    COUNT(n_leaf);
    return x * 3;
}

TRACED int work(int x)
{
    COUNT(n_work);
    int r = 0;
    for (int i = 0; i < 4; i++)
        r += leaf(x + i);
    sink = r;
    return r;
}

int main(int argc, char **argv)
{
#ifdef RUNS_PROGRAMS
    if (argc > 2 && strcmp(argv[1], "then") == 0) {
        execv(argv[2], argv + 2);
        return 127;
    }
#endif
    const char *wrapped = getenv("WRAPPED");
    printf("uid %d WRAPPED=%s nice %d args %d\n", (int)getuid(), wrapped ? wrapped : "(unset)",
           getpriority(PRIO_PROCESS, 0), argc - 1);
    (void)argv;
    for (int i = 0; i < 3; i++)
        work(i);
    PRINT_COUNT("work", n_work);
    PRINT_COUNT("leaf", n_leaf);
    return 0;
}
