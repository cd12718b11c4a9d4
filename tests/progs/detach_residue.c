/* A program to attach to and detach from again and again, whose address space a test compares
 * before and after (tests/e2e/96): it creates no thread and maps nothing once it said "ready".
 *   - COMPUTERS threads compute checksums through traced functions, each round checked against
 *     the same arithmetic done inline, and sleep 10 ms between rounds;
 *   - a spinner thread waits until told to spin, then calls a tiny traced function in a loop;
 *   - "park" (a line on stdin): the main thread sends the spinner SIGUSR1 until the signal lands
 *     outside the program's own code, i.e. in the code calltrace placed (its stub, trampoline
 *     or relocated prologue: the spinning loop calls nothing else); that handler then blocks on a
 *     pipe, its signal frame's saved rip in calltrace's code; prints "parked". A handler that
 *     lands in the program's own code returns at once and the next signal is sent (when nothing
 *     of calltrace is there, it says "park failed" after PARK_TRIES);
 *   - "unpark": the handler returns into that code; the spinner goes on for SPINS more calls,
 *     each checked, and stops spinning; prints "unparked";
 *   - "stop": prints its figures and exits 0 only if every check held. */
#define _GNU_SOURCE /* REG_RIP */
#include "common.h"
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define COMPUTERS 2
#define PARK_TRIES 1000000
#define SPINS 100000

extern char __executable_start[], etext[];

static volatile int stopping, spin_wanted, spin_started;
static unsigned long errors, bad_sum, bad_spin, rounds, parks, spins;
static int park_pipe[2];
static sem_t handler_done;
static volatile int handler_parked;

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

/* As small as a function gets: a spinning thread spends most of its time in the trampolines. */
TRACED unsigned long spin(unsigned long x)
{
    return x + 3;
}

static void *computer(void *arg)
{
    unsigned long base = (unsigned long)(uintptr_t)arg * 1000003;
    struct timespec pause = {0, 10000000}; /* a small trace, quickly checked */
    while (!stopping) {
        unsigned long traced = 0, plain = 0;
        for (unsigned long i = 0; i < 200; i++) {
            traced += step(base + i);
            plain += step_inline(base + i);
        }
        if (traced != plain)
            COUNT(errors), COUNT(bad_sum);
        COUNT(rounds);
        base += 200;
        nanosleep(&pause, NULL);
    }
    return NULL;
}

/* Where the signal landed decides: in the program's own code, back at once; elsewhere (the
 * spinning loop calls nothing but spin(): calltrace's code), blocked until "unpark". */
static void on_usr1(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    (void)si;
    const ucontext_t *uc = ctx;
    const char *rip = (const char *)uc->uc_mcontext.gregs[REG_RIP];
    if (rip >= __executable_start && rip < etext) {
        sem_post(&handler_done);
        return;
    }
    handler_parked = 1;
    sem_post(&handler_done);
    char c;
    while (read(park_pipe[0], &c, 1) < 0)
        ;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;

static void *spinner(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&lock);
        while (!spin_wanted && !stopping)
            pthread_cond_wait(&changed, &lock);
        pthread_mutex_unlock(&lock);
        if (stopping)
            return NULL;
        /* until the handler parked, then SPINS more calls after it returned */
        unsigned long x = 0, after = 0;
        spin_started = 1;
        while (spin_wanted || after < SPINS) {
            unsigned long y = spin(x);
            if (y != x + 3)
                COUNT(errors), COUNT(bad_spin);
            x = y;
            if (!spin_wanted)
                after++;
        }
        COUNT(spins);
        spin_started = 0;
        pthread_mutex_lock(&lock);
        pthread_cond_broadcast(&changed);
        pthread_mutex_unlock(&lock);
    }
}

static int park(pthread_t t)
{
    pthread_mutex_lock(&lock);
    spin_wanted = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    while (!spin_started)
        sched_yield();
    for (int i = 0; i < PARK_TRIES; i++) {
        pthread_kill(t, SIGUSR1);
        while (sem_wait(&handler_done) < 0)
            ;
        if (handler_parked)
            return 0;
    }
    return -1;
}

static void unpark(void)
{
    handler_parked = 0;
    pthread_mutex_lock(&lock);
    spin_wanted = 0;
    pthread_mutex_unlock(&lock);
    if (write(park_pipe[1], "", 1) != 1)
        COUNT(errors);
    pthread_mutex_lock(&lock);
    while (spin_started)
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    setvbuf(stdin, NULL, _IONBF, 0); /* no buffer to allocate after "ready" */
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_usr1;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    if (pipe(park_pipe) < 0 || sem_init(&handler_done, 0, 0) < 0 ||
        sigaction(SIGUSR1, &sa, NULL) < 0)
        return 2;
    pthread_t t[COMPUTERS], s;
    for (int i = 0; i < COMPUTERS; i++)
        pthread_create(&t[i], NULL, computer, (void *)(uintptr_t)i);
    pthread_create(&s, NULL, spinner, NULL);
    while (__atomic_load_n(&rounds, __ATOMIC_RELAXED) < COMPUTERS)
        sched_yield();
    printf("ready\n");
    char line[64];
    while (fgets(line, sizeof(line), stdin) && strncmp(line, "stop", 4) != 0) {
        if (strncmp(line, "park", 4) == 0) {
            int rc = park(s);
            COUNT(parks);
            printf(rc == 0 ? "parked %lu\n" : "park failed %lu\n", parks);
        } else if (strncmp(line, "unpark", 6) == 0) {
            unpark();
            printf("unparked %lu\n", parks);
        }
    }
    stopping = 1;
    pthread_mutex_lock(&lock);
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < COMPUTERS; i++)
        pthread_join(t[i], NULL);
    pthread_join(s, NULL);
    printf("rounds %s spins %lu errors %lu bad_sum %lu bad_spin %lu\n", rounds > 0 ? ">0" : "0",
           spins, errors, bad_sum, bad_spin);
    return errors ? 1 : 0;
}
