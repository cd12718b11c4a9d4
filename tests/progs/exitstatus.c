/* Exit status propagation:
 *   exitstatus exit N   exit(N) from 3 traced levels deep
 *   exitstatus ret N    return N from main
 *   exitstatus segv     null-pointer write 3 levels deep -> SIGSEGV
 *   exitstatus kill     raise(SIGKILL) 3 levels deep
 *   exitstatus abort    abort() 3 levels deep -> SIGABRT */
#include "common.h"
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static volatile int sink;
static int *volatile null_ptr;

TRACED void inner(const char *how, int n)
{
    fflush(stdout);
    if (strcmp(how, "exit") == 0)
        exit(n);
    if (strcmp(how, "segv") == 0)
        *null_ptr = 1;
    if (strcmp(how, "kill") == 0)
        raise(SIGKILL);
    if (strcmp(how, "abort") == 0)
        abort();
    sink = n;
}

TRACED void middle(const char *how, int n)
{
    inner(how, n);
    BARRIER();
    sink++;
}
TRACED void outer(const char *how, int n)
{
    middle(how, n);
    BARRIER();
    sink++;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int n = argc > 2 ? atoi(argv[2]) : 0;
    printf("start %s\n", argv[1]);
    outer(argv[1], n);
    return n;
}
