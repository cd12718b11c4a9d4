/* fork(): the child calls traced functions too; the parent waits for it.
 * Each process prints its own counts for its own pid. */
#include "common.h"
#include <sys/wait.h>
#include <unistd.h>

static unsigned long n_work, n_child_main;
static volatile int sink;

TRACED void work(int x)
{
    COUNT(n_work);
    sink = x;
}

TRACED int child_main(void)
{
    COUNT(n_child_main);
    for (int i = 0; i < 30; i++)
        work(i);
    return 7;
}

int main(void)
{
    for (int i = 0; i < 10; i++)
        work(i);
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        int r = child_main();
        printf("child work %lu\n", n_work); /* 10 inherited + 30 */
        fflush(stdout);
        _exit(r);
    }
    int st;
    waitpid(p, &st, 0);
    printf("child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    printf("parent work %lu\n", n_work);
    /* calls made in either process: 10 + 30 (child) */
    printf("count work 40\n");
    printf("count child_main 1\n");
    return 0;
}
