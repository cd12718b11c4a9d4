/* calltrace -A -R under the inject engine (tests/e2e/64).
 *   argstress same: one thread; bad char * and --capture pointers (NULL, unmapped, running
 *     into a hole, PROT_NONE), doubles, floats, long double, strings returned: both engines
 *     must record the same values.
 *   argstress stress THREADS CALLS: THREADS threads call captured functions CALLS times each,
 *     each call's arguments derived from its number, while the main thread, doing the same,
 *     is sent signals whose handler calls a captured function too. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common.h"

static unsigned long n_label, n_fill, n_scale, n_wide, n_name, n_handler;
volatile long sink;

TRACED int label(const char *s, int i)
{
    COUNT(n_label);
    sink += s ? 1 : 0;
    return i * 2;
}
TRACED int fill(const unsigned char *buf, int len)
{
    COUNT(n_fill);
    sink += (long)buf;
    return len;
}
TRACED double scale(double x, float f, int k)
{
    COUNT(n_scale);
    return x * f + k;
}
TRACED long double wide(long double x)
{
    COUNT(n_wide);
    return x / 2;
}
TRACED const char *name_of(int i)
{
    static const char *names[] = {"zero", "one", "two"};
    COUNT(n_name);
    return names[i % 3];
}
TRACED int in_handler(int sig, const char *tag)
{
    COUNT(n_handler);
    sink += (long)tag;
    return sig;
}

static void one_call(int thread, int i)
{
    char s[32];
    unsigned char buf[24];
    snprintf(s, sizeof(s), "t%d-%d", thread, i);
    for (int j = 0; j < (int)sizeof(buf); j++)
        buf[j] = (unsigned char)(i + j);
    label(s, i);
    fill(buf, i % 17);
    scale(i + 0.5, 2.0f, i);
    name_of(i);
}

static void same(void)
{
    long page = 4096;
    char *two = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (two == MAP_FAILED)
        exit(1);
    munmap(two + page, page);                  /* a hole after the first page */
    mprotect(two + 2 * page, page, PROT_NONE); /* and a page no one may read */
    memset(two, 'b', page);
    label("fine", 1);
    label(NULL, 2);
    label(two + page, 3);       /* unmapped */
    label(two + page - 5, 4);   /* five 'b' then the hole */
    label(two + 2 * page, 5);   /* PROT_NONE */
    label((const char *)16, 6); /* the null page */
    fill((const unsigned char *)"abcdef", 6);
    fill(NULL, 4);
    fill((const unsigned char *)two + page, 8);       /* unmapped */
    fill((const unsigned char *)two + page - 3, 8);   /* three bytes then the hole */
    fill((const unsigned char *)two + 2 * page, 100); /* PROT_NONE */
    fill((const unsigned char *)two, -1);             /* a negative length */
    scale(1.25, -3.5f, 7);
    wide(3.0L);
    for (int i = 0; i < 4; i++)
        name_of(i);
    for (int i = 0; i < 30; i++)
        one_call(0, i);
}

static int calls_each;
static volatile int main_done;

/* The main thread (0) goes on until its handler has run SIGNALS times too. */
#define SIGNALS 20
static void *worker(void *arg)
{
    int thread = (int)(long)arg;
    for (int i = 0; i < calls_each; i++)
        one_call(thread, i);
    for (int i = calls_each; thread == 0 && __atomic_load_n(&n_handler, __ATOMIC_RELAXED) < SIGNALS;
         i++)
        one_call(thread, i);
    return NULL;
}

static void on_signal(int sig)
{
    in_handler(sig, "handler");
}

/* Signals the main thread until it is done, the next signal once the handler has run: one in
 * flight at a time, landing wherever the main thread is (inside trampolines too). */
static void *signaller(void *arg)
{
    pthread_t main_thread = *(pthread_t *)arg;
    while (!__atomic_load_n(&main_done, __ATOMIC_ACQUIRE)) {
        unsigned long before = __atomic_load_n(&n_handler, __ATOMIC_RELAXED);
        pthread_kill(main_thread, SIGUSR1);
        while (__atomic_load_n(&n_handler, __ATOMIC_RELAXED) == before &&
               !__atomic_load_n(&main_done, __ATOMIC_ACQUIRE))
            sched_yield();
    }
    return NULL;
}

static void stress(int threads)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    pthread_t self = pthread_self(), sig, t[64];
    pthread_create(&sig, NULL, signaller, &self);
    for (int k = 1; k <= threads; k++)
        pthread_create(&t[k - 1], NULL, worker, (void *)(long)k);
    worker((void *)0L);
    __atomic_store_n(&main_done, 1, __ATOMIC_RELEASE);
    pthread_join(sig, NULL);
    for (int k = 0; k < threads; k++)
        pthread_join(t[k], NULL);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "stress") == 0) {
        int threads = argc > 2 ? atoi(argv[2]) : 3;
        calls_each = argc > 3 ? atoi(argv[3]) : 1000;
        if (threads < 0 || threads > 64)
            return 2;
        stress(threads);
    } else {
        same();
    }
    PRINT_COUNT("label", n_label);
    PRINT_COUNT("fill", n_fill);
    PRINT_COUNT("scale", n_scale);
    PRINT_COUNT("wide", n_wide);
    PRINT_COUNT("name_of", n_name);
    PRINT_COUNT("in_handler", n_handler);
    return 0;
}
