/* Fault tests (tests/e2e/5x-*.sh): a program the tests kill, starve or stress.
 *
 *   faults busy CTR PIDFILE [US]  write the pid, then call level1 -> level2 -> work forever;
 *                                 CTR (8 bytes, mmap'ed) holds the number of work calls: the
 *                                 progress markers the tests count before sending a signal.
 *                                 With US, each level1 call starts US microseconds after the
 *                                 one before (waiting untraced): a pace that does not depend on
 *                                 the tracer, and traces of a size a test can read
 *   faults park CTR PIDFILE N     N work calls, then main -> hold -> park, which stores N + 1
 *                                 in CTR and waits in pause() for ever: killed mid-call
 *   faults count N                N work calls, then the counts
 *   faults wait N CTR             N work calls (CTR counts them), read a line from stdin, N more,
 *                                 the counts
 *   faults openmax                open /dev/null until EMFILE, print how many it got
 *   faults forks N K              N children alive at once, K work calls each
 *   faults threads N K            N threads alive at once, K work calls each
 *   faults blocked N              block every signal, then N work calls and the counts
 *   faults blocked-busy CTR PIDFILE [US]   block every signal, then like busy
 *
 * Every mode but the endless ones prints "count NAME N" lines (see common.h). */
#include "common.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned long n_work, n_level1, n_level2, n_hold, n_park, n_thread_main;
static volatile uint64_t *progress;
static uint64_t dummy_progress;

TRACED void work(void)
{
    COUNT(n_work);
    *progress += 1;
}

TRACED void level2(void)
{
    COUNT(n_level2);
    work();
}

TRACED void level1(void)
{
    COUNT(n_level1);
    level2();
}

TRACED void park(unsigned long n)
{
    COUNT(n_park);
    *progress = n + 1;
    for (;;)
        pause();
}

TRACED void hold(unsigned long n)
{
    COUNT(n_hold);
    park(n);
}

static void die(const char *what)
{
    perror(what);
    exit(2);
}

static void map_progress(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, 8) != 0)
        die(path);
    progress = mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (progress == MAP_FAILED)
        die("mmap");
    close(fd);
}

static void write_pid(const char *path)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        die(tmp);
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    if (rename(tmp, path) != 0) /* appears atomically */
        die(path);
}

static void print_counts(void)
{
    PRINT_COUNT("work", n_work);
    PRINT_COUNT("level1", n_level1);
    PRINT_COUNT("level2", n_level2);
    fflush(stdout);
}

static void calls(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        level1();
}

static void block_all(void)
{
    sigset_t all;
    sigfillset(&all);
    if (sigprocmask(SIG_BLOCK, &all, NULL) != 0)
        die("sigprocmask");
}

static int openmax(void)
{
    int n = 0;
    while (open("/dev/null", O_RDONLY) >= 0)
        n++;
    if (errno != EMFILE)
        die("open");
    printf("opened %d\n", n);
    calls(10);
    print_counts();
    return 0;
}

static int forks(unsigned long n, unsigned long k)
{
    int go[2];
    if (pipe(go) != 0)
        die("pipe");
    for (unsigned long i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0)
            die("fork");
        if (pid == 0) {
            char c;
            close(go[1]);
            while (read(go[0], &c, 1) < 0 && errno == EINTR)
                ;
            calls(k); /* after every sibling exists: n processes alive at once */
            _exit(0);
        }
    }
    close(go[1]); /* releases them all */
    int failed = 0, status;
    for (unsigned long i = 0; i < n; i++)
        if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            failed++;
    printf("children failed %d\n", failed);
    calls(1);
    print_counts();
    printf("children made %lu work calls\n", n * k);
    return failed != 0;
}

static pthread_barrier_t barrier;
static unsigned long thread_calls;

TRACED void *thread_main(void *arg)
{
    COUNT(n_thread_main);
    pthread_barrier_wait(&barrier); /* every thread alive before any makes its calls */
    calls(thread_calls);
    return arg;
}

static int threads(unsigned long n, unsigned long k)
{
    pthread_t *t = calloc(n, sizeof(*t));
    if (!t || pthread_barrier_init(&barrier, NULL, (unsigned)n))
        die("threads");
    thread_calls = k;
    for (unsigned long i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, thread_main, NULL) != 0)
            die("pthread_create");
    for (unsigned long i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    print_counts();
    PRINT_COUNT("thread_main", n_thread_main);
    free(t);
    return 0;
}

int main(int argc, char **argv)
{
    progress = &dummy_progress;
    const char *mode = argc > 1 ? argv[1] : "";
    if ((!strcmp(mode, "busy") || !strcmp(mode, "blocked-busy")) && (argc == 4 || argc == 5)) {
        if (!strcmp(mode, "blocked-busy"))
            block_all();
        map_progress(argv[2]);
        write_pid(argv[3]);
        long us = argc == 5 ? strtol(argv[4], NULL, 10) : 0;
        for (;;) {
            struct timespec t0, t;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            level1();
            do
                clock_gettime(CLOCK_MONOTONIC, &t);
            while ((t.tv_sec - t0.tv_sec) * 1000000 + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
        }
    }
    if (!strcmp(mode, "park") && argc == 5) {
        map_progress(argv[2]);
        write_pid(argv[3]);
        unsigned long n = strtoul(argv[4], NULL, 10);
        for (unsigned long i = 0; i < n; i++)
            work();
        hold(n);
    }
    if (!strcmp(mode, "count") && argc == 3) {
        calls(strtoul(argv[2], NULL, 10));
        print_counts();
        return 0;
    }
    if (!strcmp(mode, "wait") && argc == 4) {
        unsigned long n = strtoul(argv[2], NULL, 10);
        char line[64];
        map_progress(argv[3]);
        calls(n);
        if (!fgets(line, sizeof line, stdin))
            return 3;
        calls(n);
        print_counts();
        return 0;
    }
    if (!strcmp(mode, "openmax") && argc == 2)
        return openmax();
    if (!strcmp(mode, "forks") && argc == 4)
        return forks(strtoul(argv[2], NULL, 10), strtoul(argv[3], NULL, 10));
    if (!strcmp(mode, "threads") && argc == 4)
        return threads(strtoul(argv[2], NULL, 10), strtoul(argv[3], NULL, 10));
    if (!strcmp(mode, "blocked") && argc == 3) {
        block_all();
        calls(strtoul(argv[2], NULL, 10));
        print_counts();
        return 0;
    }
    fprintf(stderr, "usage: see the comment at the top of faults.c\n");
    return 2;
}
