/* A long-running program to attach to, again and again: while calltrace comes and goes it
 *   - computes checksums through traced functions on 3 threads, each round checked against
 *     the same arithmetic done inline (no call);
 *   - sends itself SIGUSR1 and waits for its traced handler to have run, one at a time;
 *   - keeps a thread blocked in read() on a pipe and one in nanosleep(): neither may ever
 *     see EINTR or a short sleep;
 *   - creates and joins short-lived threads that make a traced call each.
 * It stops when a line arrives on stdin, prints its figures and exits 0 only if every check
 * held. */
#include "common.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile int stopping;
static unsigned long errors, bad_sum, bad_read, bad_sleep, bad_thread, rounds, signals_sent,
    signals_handled, threads_made, reads, sleeps;
static int feed[2];

TRACED unsigned long mix(unsigned long x)
{
    BARRIER();
    return x * 2654435761u ^ (x >> 7);
}

TRACED unsigned long step(unsigned long x)
{
    BARRIER();
    return mix(x) + 1;
}

static unsigned long step_inline(unsigned long x)
{
    return (x * 2654435761u ^ (x >> 7)) + 1;
}

TRACED void on_signal(int sig)
{
    (void)sig;
    COUNT(signals_handled);
}

TRACED void short_life(void)
{
    COUNT(threads_made);
}

/* A round's calls take 10 ms under the ptrace engine and 10 us under the inject engine: a
 * round of the inject engine is followed by arithmetic (no call) until ROUND_NS have passed,
 * so that what a few dozen attachments record stays a trace a checker reads in a second. At
 * full speed, 50 ms of three threads make 70 MB of trace.json; at 1 ms a round, the 250 ms an
 * attachment takes to record its first calls (these threads take both CPUs) made 17 MB, and
 * e2e 28 ran for minutes; at 10 ms, 2 MB. The threads never sleep: calltrace still stops them
 * anywhere. */
#define ROUND_NS 10000000

static long elapsed_ns(const struct timespec *since)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - since->tv_sec) * 1000000000L + (now.tv_nsec - since->tv_nsec);
}

static void *computer(void *arg)
{
    unsigned long base = (unsigned long)arg * 1000003;
    while (!stopping) {
        struct timespec start;
        clock_gettime(CLOCK_MONOTONIC, &start);
        unsigned long traced = 0, plain = 0;
        for (unsigned long i = 0; i < 200; i++) {
            traced += step(base + i);
            plain += step_inline(base + i);
        }
        if (traced != plain)
            COUNT(errors), COUNT(bad_sum);
        COUNT(rounds);
        base += 200;
        for (unsigned long x = base; elapsed_ns(&start) < ROUND_NS; x = step_inline(x))
            __asm__ volatile("" ::"r"(x));
    }
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    char c;
    for (;;) {
        ssize_t n = read(feed[0], &c, 1);
        if (n == 1) {
            COUNT(reads);
            continue;
        }
        if (n < 0) /* EINTR included: SA_RESTART, nothing may interrupt it */
            COUNT(errors), COUNT(bad_read);
        return NULL;
    }
}

static void *sleeper(void *arg)
{
    (void)arg;
    while (!stopping) {
        struct timespec d = {0, 2 * 1000 * 1000};
        if (nanosleep(&d, NULL) != 0)
            COUNT(errors), COUNT(bad_sleep);
        COUNT(sleeps);
    }
    return NULL;
}

static void *life(void *arg)
{
    (void)arg;
    short_life();
    return NULL;
}

static void *spawner(void *arg)
{
    (void)arg;
    while (!stopping) {
        pthread_t t;
        if (pthread_create(&t, NULL, life, NULL) != 0 || pthread_join(t, NULL) != 0)
            COUNT(errors), COUNT(bad_thread);
    }
    return NULL;
}

static void *signaller(void *arg)
{
    pthread_t target = *(pthread_t *)arg;
    while (!stopping) {
        unsigned long before = __atomic_load_n(&signals_handled, __ATOMIC_ACQUIRE);
        COUNT(signals_sent);
        pthread_kill(target, SIGUSR1);
        while (__atomic_load_n(&signals_handled, __ATOMIC_ACQUIRE) == before)
            sched_yield();
        char c = 's';
        if (write(feed[1], &c, 1) != 1)
            COUNT(errors);
    }
    return NULL;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    if (pipe(feed) < 0)
        return 2;
    pthread_t main_thread = pthread_self(), t[7];
    for (long i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, computer, (void *)i);
    pthread_create(&t[3], NULL, reader, NULL);
    pthread_create(&t[4], NULL, sleeper, NULL);
    pthread_create(&t[5], NULL, spawner, NULL);
    pthread_create(&t[6], NULL, signaller, &main_thread);
    printf("ready\n");
    fflush(stdout);
    char line[64];
    if (!fgets(line, sizeof(line), stdin)) /* the main thread blocks here, signals come in */
        COUNT(errors);
    stopping = 1;
    for (int i = 0; i < 7; i++)
        if (i != 3)
            pthread_join(t[i], NULL);
    close(feed[1]);
    pthread_join(t[3], NULL);
    printf("rounds>0 %d signals %s threads>0 %d reads %s errors %lu\n", rounds > 0,
           signals_sent == signals_handled ? "exact" : "LOST", threads_made > 0,
           reads == signals_sent ? "exact" : "LOST", errors);
    if (errors)
        printf("bad checksums %lu, failed reads %lu, interrupted sleeps %lu, thread errors %lu\n",
               bad_sum, bad_read, bad_sleep, bad_thread);
    return errors ? 1 : 0;
}
