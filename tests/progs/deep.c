/* Recursion 100,000 frames deep, run once in a pthread with a 64 MiB stack. */
#include "common.h"
#include <pthread.h>
#include <stdlib.h>

static unsigned long n_deep, n_runner;
/* Calling through a volatile pointer keeps gcc -O2 from turning the
 * recursion into a loop. */
static int (*volatile deep_ptr)(int);

TRACED int deep(int n)
{
    COUNT(n_deep);
    if (n == 0)
        return 0;
    return deep_ptr(n - 1) + 1;
}

TRACED void *runner(void *arg)
{
    COUNT(n_runner);
    int depth = *(int *)arg;
    *(int *)arg = deep(depth - 1);
    return NULL;
}

int main(int argc, char **argv)
{
    int depth = argc > 1 ? atoi(argv[1]) : 100000;
    deep_ptr = deep;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 64 << 20);
    pthread_t t;
    int v = depth;
    if (pthread_create(&t, &a, runner, &v) != 0) {
        perror("pthread_create");
        return 2;
    }
    pthread_join(t, NULL);
    printf("deep returned %d\n", v);
    PRINT_COUNT("deep", n_deep);
    PRINT_COUNT("runner", n_runner);
    return 0;
}
