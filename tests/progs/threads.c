/* Several pthreads calling traced functions a known number of times:
 *  wave 1: 4 threads, thread i calls work() 50*(i+1) times
 *  wave 2 (created after wave 1 was joined): 2 threads that each create
 *          a grandchild thread; each of these 4 calls work() 25 times
 *  a detached thread blocked forever inside blocker() while main returns:
 *          its blocker() call must be unfinished.
 * Prints "pertid work N..." = the sorted per-thread work() counts. */
#include "common.h"
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdlib.h>

static unsigned long n_work, n_worker, n_parent_worker, n_blocker;
static volatile int sink;
static sem_t started, never;

TRACED void work(int x)
{
    COUNT(n_work);
    sink = x;
}

TRACED void *worker(void *arg)
{
    COUNT(n_worker);
    int times = (int)(intptr_t)arg;
    for (int i = 0; i < times; i++)
        work(i);
    return NULL;
}

TRACED void *parent_worker(void *arg)
{
    COUNT(n_parent_worker);
    pthread_t t;
    pthread_create(&t, NULL, worker, arg);
    int times = (int)(intptr_t)arg;
    for (int i = 0; i < times; i++)
        work(i);
    pthread_join(t, NULL);
    return NULL;
}

TRACED void *blocker(void *arg)
{
    COUNT(n_blocker);
    (void)arg;
    sem_post(&started);
    for (;;)
        sem_wait(&never);
    return NULL;
}

int main(void)
{
    pthread_t t[4];
    sem_init(&started, 0, 0);
    sem_init(&never, 0, 0);
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, worker, (void *)(intptr_t)(50 * (i + 1)));
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, parent_worker, (void *)(intptr_t)25);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    pthread_t b;
    pthread_create(&b, NULL, blocker, NULL);
    while (sem_wait(&started) != 0)
        ;
    printf("pertid work 25 25 25 25 50 100 150 200\n");
    printf("threads 10\n"); /* main + 4 + 2 + 2 + blocker */
    PRINT_COUNT("work", n_work);
    PRINT_COUNT("worker", n_worker);
    PRINT_COUNT("parent_worker", n_parent_worker);
    PRINT_COUNT("blocker", n_blocker);
    fflush(stdout);
    return 0;
}
