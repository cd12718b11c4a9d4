// Unwinding through traced frames: exceptions (through destructors that call traced functions,
// rethrown, nested, caught by catch(...), thrown from a qsort comparator, thrown and caught
// inside a destructor that runs during another unwinding), frames that go on normally after
// catching, backtrace() from deep inside traced calls, and, with "threads", threads throwing at
// once and a thread cancelled inside traced frames, and with "fork", a forked child throwing
// through the traced calls it inherited. Every traced function counts its calls.
#include "common.h"

#include <execinfo.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdexcept>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned long n_note, n_ctor, n_dtor, n_dive, n_relay, n_catch_all, n_inner, n_careful,
    n_careful_dtor, n_compare, n_sorter, n_survivor, n_after, n_outer, n_walk, n_show, n_stuck,
    n_spawn;
static volatile int sink;

TRACED void note(int v)
{
    COUNT(n_note);
    sink = v;
}

struct Guard {
    int v;
    TRACED Guard(int x);
    TRACED ~Guard();
};
Guard::Guard(int x) : v(x)
{
    COUNT(n_ctor);
}
Guard::~Guard()
{
    COUNT(n_dtor);
    note(v); // a traced call from a destructor, also while unwinding
}

// Throws from n + 1 traced frames deep, each with a destructor to run.
TRACED void dive(int n)
{
    COUNT(n_dive);
    Guard g(n);
    if (n == 0)
        throw std::runtime_error("dive");
    dive(n - 1);
    sink = g.v;
}

// Nested try blocks; the inner one does not match, the outer one rethrows.
TRACED void relay(int n)
{
    COUNT(n_relay);
    Guard g(1000 + n);
    try {
        try {
            dive(n);
        } catch (const std::logic_error &) {
            abort();
        }
    } catch (const std::runtime_error &) {
        note(-1);
        throw;
    }
}

TRACED int catch_all(int n)
{
    COUNT(n_catch_all);
    try {
        relay(n);
    } catch (...) {
        return 1;
    }
    return 0;
}

// An exception thrown and caught inside a destructor run by another exception's unwinding.
TRACED void inner(int n)
{
    COUNT(n_inner);
    Guard g(n);
    throw n;
}

struct Careful {
    TRACED ~Careful();
};
Careful::~Careful()
{
    COUNT(n_careful_dtor);
    try {
        inner(7);
    } catch (int v) {
        note(v);
    }
}

TRACED void careful(int n)
{
    COUNT(n_careful);
    Careful c;
    dive(n);
}

// Thrown from a callback the C library calls.
TRACED int compare(const void *a, const void *b)
{
    COUNT(n_compare);
    int x = *(const int *)a, y = *(const int *)b;
    if (x == 13 || y == 13)
        throw std::invalid_argument("13");
    return (x > y) - (x < y);
}

TRACED int sorter(void)
{
    COUNT(n_sorter);
    int values[] = {5, 3, 9, 1, 13, 7, 2, 8};
    try {
        qsort(values, sizeof(values) / sizeof(*values), sizeof(*values), compare);
    } catch (const std::invalid_argument &) {
        return 1;
    }
    return 0;
}

// Catches, then goes on and returns normally: its exit and its caller's are recorded.
TRACED void after(int n)
{
    COUNT(n_after);
    sink = n;
}

TRACED int survivor(int n)
{
    COUNT(n_survivor);
    Guard g(n);
    int r = 0;
    try {
        dive(2);
    } catch (const std::exception &) {
        r = 1;
    }
    after(n);
    return r;
}

TRACED int outer(int n)
{
    COUNT(n_outer);
    int r = survivor(n);
    after(n);
    return r + survivor(n + 1);
}

// backtrace() from inside traced calls: the same frames as untraced. The addresses are printed
// relative to their object (backtrace_symbols' "(+0x...)" or "(name+0x...)"), which ASLR keeps.
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

TRACED void walk(int n)
{
    COUNT(n_walk);
    if (n == 0)
        show();
    else
        walk(n - 1);
    sink = n;
}

static void single(void)
{
    int caught = 0;
    for (int i = 0; i < 20; i++)
        caught += catch_all(i % 4);
    for (int i = 0; i < 5; i++) {
        try {
            careful(i % 3);
        } catch (const std::runtime_error &) {
            caught++;
        }
    }
    for (int i = 0; i < 5; i++)
        caught += sorter();
    for (int i = 0; i < 10; i++)
        caught += outer(i);
    walk(3);
    printf("caught %d\n", caught);
}

static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
    int caught = 0;
    for (int i = 0; i < 40; i++)
        caught += catch_all((i + (int)(long)arg) % 4);
    pthread_mutex_lock(&print_lock); /* its lines together */
    walk(2);
    pthread_mutex_unlock(&print_lock);
    return (void *)(long)caught;
}

static sem_t stuck_ready;
static int never[2];

// Cancelled while blocked in read() under three traced frames with destructors.
TRACED void stuck(int n)
{
    COUNT(n_stuck);
    Guard g(2000 + n);
    if (n == 0) {
        char c;
        sem_post(&stuck_ready);
        if (read(never[0], &c, 1) >= 0)
            abort();
    } else {
        stuck(n - 1);
    }
    sink = g.v;
}

static void *cancelled(void *)
{
    stuck(2);
    return NULL;
}

static void threads(void)
{
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    long caught = 0;
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        caught += (long)r;
    }
    printf("threads caught %ld\n", caught);
    pthread_t c;
    if (pipe(never) < 0 || sem_init(&stuck_ready, 0, 0) < 0 ||
        pthread_create(&c, NULL, cancelled, NULL) != 0)
        abort();
    sem_wait(&stuck_ready);
    pthread_cancel(c);
    void *r;
    pthread_join(c, &r);
    printf("cancelled %s\n", r == PTHREAD_CANCELED ? "yes" : "no");
}

static void print_counts(void)
{
    PRINT_COUNT("note(int)", n_note);
    PRINT_COUNT("Guard::Guard(int)", n_ctor);
    PRINT_COUNT("Guard::~Guard()", n_dtor);
    PRINT_COUNT("dive(int)", n_dive);
    PRINT_COUNT("relay(int)", n_relay);
    PRINT_COUNT("catch_all(int)", n_catch_all);
    PRINT_COUNT("inner(int)", n_inner);
    PRINT_COUNT("careful(int)", n_careful);
    PRINT_COUNT("Careful::~Careful()", n_careful_dtor);
    PRINT_COUNT("compare(void const*, void const*)", n_compare);
    PRINT_COUNT("sorter()", n_sorter);
    PRINT_COUNT("survivor(int)", n_survivor);
    PRINT_COUNT("after(int)", n_after);
    PRINT_COUNT("outer(int)", n_outer);
    PRINT_COUNT("walk(int)", n_walk);
    PRINT_COUNT("show()", n_show);
    PRINT_COUNT("stuck(int)", n_stuck);
    PRINT_COUNT("spawn()", n_spawn);
}

// A forked child throws through the traced calls it inherited from its parent.
TRACED int spawn(void)
{
    COUNT(n_spawn);
    pid_t pid = fork();
    if (pid == 0) {
        dive(2);
        return 0;
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        abort();
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

static void forked(void)
{
    try {
        int status = spawn();
        printf("child status %d\n", status);
    } catch (const std::runtime_error &) {
        print_counts(); // the child's: its calls, and the one it inherited
        fflush(stdout);
        _exit(7);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "threads") == 0)
        threads();
    else if (argc > 1 && strcmp(argv[1], "fork") == 0)
        forked();
    else
        single();
    if (argc < 2 || strcmp(argv[1], "fork") != 0)
        print_counts();
    return 0;
}
