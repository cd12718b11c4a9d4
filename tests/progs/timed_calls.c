/* Calls of known durations, for a run killed while some are open (e2e 87).
 *
 *   timed_calls CTR N US   two threads (main and a worker) each make N calls of outer(), whose
 *                          inner() lasts US microseconds (spinning untraced on the clock), then
 *                          call hold() -> park(), which waits in pause() for ever. CTR (8 bytes,
 *                          mmap'ed) counts the outer() calls made, plus 1,000,000 for each
 *                          thread parked. */
#include "common.h"
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PARKED 1000000

static volatile uint64_t *progress;
static unsigned long rounds, spin_us;

static uint64_t now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000 + (uint64_t)t.tv_nsec / 1000;
}

TRACED void inner(void)
{
    uint64_t until = now_us() + spin_us;
    while (now_us() < until)
        BARRIER();
}

TRACED void outer(void)
{
    inner();
    __atomic_fetch_add(progress, 1, __ATOMIC_RELAXED);
}

TRACED void park(void)
{
    __atomic_fetch_add(progress, PARKED, __ATOMIC_RELAXED);
    for (;;)
        pause();
}

TRACED void hold(void)
{
    park();
}

static void *run_thread(void *arg)
{
    (void)arg;
    for (unsigned long i = 0; i < rounds; i++)
        outer();
    hold();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: timed_calls CTR N US\n");
        return 2;
    }
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, 8) != 0) {
        perror(argv[1]);
        return 2;
    }
    progress = mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (progress == MAP_FAILED) {
        perror("mmap");
        return 2;
    }
    close(fd);
    rounds = strtoul(argv[2], NULL, 10);
    spin_us = strtoul(argv[3], NULL, 10);
    pthread_t worker;
    if (pthread_create(&worker, NULL, run_thread, NULL) != 0) {
        fprintf(stderr, "timed_calls: cannot create a thread\n");
        return 2;
    }
    run_thread(NULL);
    return 0;
}
