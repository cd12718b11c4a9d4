/* Calls of counts and durations the caller chooses, for report --hist, diff, flame and
 * --srcline (e2e 100-103).
 *
 *   naps N US [MODE]   main() -> run() makes N calls of step(), each calling nap(US), which
 *                      sleeps US microseconds, and tick() twice (no time to speak of).
 *     MODE a           run() also calls only_a() 3 times
 *     MODE b           run() also calls only_b() 5 times
 *     MODE threads     a second thread makes the same calls, from worker() -> run()
 *     MODE hist        N and US are ignored: nap() sleeps 4.5 ms 5 times, 18 ms 3 times and
 *                      70 ms twice
 *
 * Prints "count NAME N" per function and "nap US NS" per nap(): the length it asked for and
 * the time it measured itself around the sleep. */
#include "common.h"
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned long n_run, n_step, n_nap, n_tick, n_only_a, n_only_b, n_worker;

/* inlined even at -O0: not a traced call of its own */
static inline __attribute__((always_inline)) int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

TRACED void nap(unsigned long us)
{
    COUNT(n_nap);
    struct timespec want = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
    int64_t start = now_ns();
    while (nanosleep(&want, &want) != 0)
        ;
    printf("nap %lu %lld\n", us, (long long)(now_ns() - start));
}

TRACED void tick(void)
{
    COUNT(n_tick);
    BARRIER();
}

TRACED void step(unsigned long us)
{
    COUNT(n_step);
    tick();
    nap(us);
    tick();
}

TRACED void only_a(void)
{
    COUNT(n_only_a);
    BARRIER();
}

TRACED void only_b(void)
{
    COUNT(n_only_b);
    BARRIER();
}

struct plan {
    unsigned long n, us;
    const char *mode;
};

TRACED void run(const struct plan *p)
{
    COUNT(n_run);
    for (unsigned long i = 0; i < p->n; i++)
        step(p->us);
    for (int i = 0; strcmp(p->mode, "a") == 0 && i < 3; i++)
        only_a();
    for (int i = 0; strcmp(p->mode, "b") == 0 && i < 5; i++)
        only_b();
}

TRACED void *worker(void *arg)
{
    COUNT(n_worker);
    run(arg);
    return NULL;
}

static void hist_naps(void)
{
    static const unsigned long lengths[][2] = {{4500, 5}, {18000, 3}, {70000, 2}};
    for (size_t i = 0; i < 3; i++)
        for (unsigned long k = 0; k < lengths[i][1]; k++)
            nap(lengths[i][0]);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: naps N US [a|b|threads|hist]\n");
        return 2;
    }
    struct plan plan = {strtoul(argv[1], NULL, 10), strtoul(argv[2], NULL, 10),
                        argc > 3 ? argv[3] : ""};
    pthread_t other;
    bool threads = strcmp(plan.mode, "threads") == 0;
    if (threads && pthread_create(&other, NULL, worker, &plan) != 0) {
        fprintf(stderr, "naps: cannot create a thread\n");
        return 2;
    }
    if (strcmp(plan.mode, "hist") == 0)
        hist_naps();
    else
        run(&plan);
    if (threads)
        pthread_join(other, NULL);
    PRINT_COUNT("run", n_run);
    PRINT_COUNT("step", n_step);
    PRINT_COUNT("nap", n_nap);
    PRINT_COUNT("tick", n_tick);
    PRINT_COUNT("only_a", n_only_a);
    PRINT_COUNT("only_b", n_only_b);
    PRINT_COUNT("worker", n_worker);
    return 0;
}
