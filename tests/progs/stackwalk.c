/* Stack walks in a C program, whose unwinder (libgcc_s) the C library loads only when it first
 * needs it: backtrace() from inside traced calls, printed relative to each object (the same
 * traced and untraced; and libgcc's _Unwind_Backtrace called directly), and a thread cancelled
 * inside traced calls (a forced unwind), then calls returning normally again. Every traced function
 * counts its calls. */
#include "common.h"

#include <execinfo.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <unwind.h>

static unsigned long n_show, n_walk, n_stuck, n_leaf, n_direct;
static volatile int sink;

TRACED void show(void)
{
    COUNT(n_show);
    void *frames[64];
    int n = backtrace(frames, 64);
    char **names = backtrace_symbols(frames, n);
    printf("backtrace: %d frames\n", n);
    for (int i = 0; names && i < n; i++) {
        const char *at = strrchr(names[i], '/');
        int len = (int)strcspn(at ? at + 1 : names[i], " [");
        printf("  %.*s\n", len, at ? at + 1 : names[i]);
    }
    free(names);
}

static _Unwind_Reason_Code count_frame(struct _Unwind_Context *context, void *frames)
{
    (void)context;
    ++*(int *)frames;
    return _URC_NO_REASON;
}

/* libgcc's walk called directly, by a tail call at -O2: it returns to this call's caller. */
TRACED _Unwind_Reason_Code walk_direct(int *frames)
{
    COUNT(n_direct);
    return _Unwind_Backtrace(count_frame, frames);
}

TRACED void leaf(int n)
{
    COUNT(n_leaf);
    sink = n;
}

TRACED void walk(int n)
{
    COUNT(n_walk);
    if (n == 0)
        show();
    else
        walk(n - 1);
    leaf(n); /* after the walk: this frame returns through calltrace's hook again */
}

static sem_t ready;
static int never[2];

TRACED void stuck(int n)
{
    COUNT(n_stuck);
    if (n == 0) {
        char c;
        sem_post(&ready);
        if (read(never[0], &c, 1) >= 0)
            abort();
    } else {
        stuck(n - 1);
    }
    sink = n;
}

static void *cancelled(void *arg)
{
    (void)arg;
    stuck(3);
    return NULL;
}

int main(void)
{
    walk(3);
    walk(1);
    pthread_t t;
    if (pipe(never) < 0 || sem_init(&ready, 0, 0) < 0 ||
        pthread_create(&t, NULL, cancelled, NULL) != 0)
        abort();
    sem_wait(&ready);
    pthread_cancel(t);
    void *r;
    pthread_join(t, &r);
    printf("cancelled %s\n", r == PTHREAD_CANCELED ? "yes" : "no");
    walk(2);
    int frames = 0;
    walk_direct(&frames);
    printf("_Unwind_Backtrace: %d frames\n", frames);
    leaf(9);
    PRINT_COUNT("show", n_show);
    PRINT_COUNT("walk", n_walk);
    PRINT_COUNT("leaf", n_leaf);
    PRINT_COUNT("stuck", n_stuck);
    PRINT_COUNT("walk_direct", n_direct);
    return 0;
}
