/* A program to attach to and detach from, in phases driven by lines on stdin, so that a test knows
 * exactly which calls fall between calltrace's attach and its detach:
 *   start   WORKERS threads each descend HOLD_FIRST levels of hold() and wait at the bottom (deep
 *           calls in progress when calltrace comes); prints "ready".
 *   "go"    phase N: the workers climb out, checking that every return address on the way is the
 *           program's own (a detach must have put back each one it hooked), run ROUNDS rounds of
 *           descend(DEPTH) with leaf() at the bottom, each result checked against the same
 *           arithmetic inline, then descend HOLD levels of hold() and wait again (calls in
 *           progress when calltrace goes); the main thread prints "pN count NAME N" for the
 *           calls made since "go", then "pN done".
 *   "go-killed"  the same, but the held return addresses may still be hooked (calltrace was
 *           SIGKILLed, nobody put them back); then the program also creates threads and forks a
 *           child while its threads make traced calls, each checking its results.
 *   "stop"  prints its figures and exits 0 if every check held.
 * Helpers are always inlined: the only functions called during a phase are the counted ones. */
#include "common.h"
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define WORKERS 4
#define HOLD_FIRST 1000
#define HOLD 300
#define ROUNDS 40
#define DEPTH 200
#define INLINE static inline __attribute__((always_inline))

extern char __executable_start[], etext[];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int phase, arrived, check_returns = 1, stopping;
static unsigned long n_descend, n_leaf, n_hold, errors, bad_sum, bad_return, bad_child, rounds;

INLINE unsigned long mix_inline(unsigned long x)
{
    return x * 2654435761u ^ (x >> 7);
}

TRACED unsigned long leaf(unsigned long x)
{
    COUNT(n_leaf);
    BARRIER();
    return mix_inline(x);
}

TRACED unsigned long descend(unsigned long x, int depth)
{
    COUNT(n_descend);
    if (depth == 0)
        return leaf(x);
    unsigned long r = descend(x + 1, depth - 1);
    BARRIER();
    return r + (unsigned long)depth;
}

INLINE unsigned long descend_inline(unsigned long x, int depth)
{
    unsigned long r = mix_inline(x + (unsigned long)depth);
    for (int d = 1; d <= depth; d++)
        r += (unsigned long)d;
    return r;
}

INLINE void run_rounds(unsigned long base)
{
    for (unsigned long i = 0; i < ROUNDS; i++) {
        if (descend(base + i, DEPTH) != descend_inline(base + i, DEPTH))
            COUNT(errors), COUNT(bad_sum);
        COUNT(rounds);
    }
}

/* Waits at the bottom of the held calls until the next phase. */
INLINE void wait_next(void)
{
    pthread_mutex_lock(&lock);
    int mine = phase;
    arrived++;
    pthread_cond_broadcast(&changed);
    while (phase == mine && !stopping)
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
}

TRACED int hold(int depth)
{
    COUNT(n_hold);
    if (depth == 0) {
        wait_next();
        return 0;
    }
    int r = hold(depth - 1) + 1;
    /* The slot of this call's return address: a hooked one points into calltrace's code. */
    char *ret = __builtin_return_address(0);
    if (__atomic_load_n(&check_returns, __ATOMIC_RELAXED) &&
        (ret < __executable_start || ret >= etext))
        COUNT(errors), COUNT(bad_return);
    BARRIER();
    return r;
}

static void *worker(void *arg)
{
    unsigned long base = (unsigned long)(uintptr_t)arg * 1000003;
    int depth = HOLD_FIRST;
    while (!__atomic_load_n(&stopping, __ATOMIC_RELAXED)) {
        if (hold(depth) != depth)
            COUNT(errors);
        if (__atomic_load_n(&stopping, __ATOMIC_RELAXED))
            break;
        run_rounds(base);
        base += ROUNDS;
        depth = HOLD;
    }
    return NULL;
}

static void *fresh_thread(void *arg)
{
    run_rounds((unsigned long)(uintptr_t)arg);
    return NULL;
}

INLINE void wait_arrived(void)
{
    pthread_mutex_lock(&lock);
    while (arrived < WORKERS)
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
}

INLINE void next_phase(void)
{
    pthread_mutex_lock(&lock);
    __atomic_store_n(&n_descend, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&n_leaf, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&n_hold, 0, __ATOMIC_RELAXED);
    arrived = 0;
    phase++;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

/* After calltrace died: new threads and a forked child make traced calls at the same time as the
 * threads that had control blocks; every result is checked. */
INLINE void life_after_calltrace(void)
{
    pthread_t fresh[4];
    for (int i = 0; i < 4; i++)
        if (pthread_create(&fresh[i], NULL, fresh_thread, (void *)(uintptr_t)(7 + i)) != 0)
            COUNT(errors);
    pid_t child = fork();
    if (child == 0) {
        unsigned long before = errors;
        run_rounds(99);
        _exit(errors == before ? 0 : 1);
    }
    run_rounds(98); /* the forking thread, on the same stack addresses as the child */
    int status;
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        COUNT(errors), COUNT(bad_child);
    for (int i = 0; i < 4; i++)
        pthread_join(fresh[i], NULL);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    pthread_t t[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
    wait_arrived();
    printf("ready\n");
    char line[64];
    int n = 0;
    while (fgets(line, sizeof(line), stdin) && strncmp(line, "stop", 4) != 0) {
        int killed = strncmp(line, "go-killed", 9) == 0;
        __atomic_store_n(&check_returns, !killed, __ATOMIC_RELAXED);
        next_phase();
        n++;
        wait_arrived();
        if (killed)
            life_after_calltrace();
        printf("p%d count descend %lu\np%d count leaf %lu\np%d count hold %lu\np%d done\n", n,
               n_descend, n, n_leaf, n, n_hold, n);
    }
    pthread_mutex_lock(&lock);
    stopping = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(t[i], NULL);
    printf("rounds %s errors %lu bad_sum %lu bad_return %lu bad_child %lu\n",
           rounds > 0 ? ">0" : "0", errors, bad_sum, bad_return, bad_child);
    return errors ? 1 : 0;
}
