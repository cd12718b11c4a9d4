/* A program whose main thread ends with pthread_exit while its other threads go on: the process
 * keeps running, its main thread a zombie until the last thread ends.
 *   start     a worker thread makes paced traced calls of work(), each result checked, and
 *             counts its rounds in the 8-byte file PROGRESS (argv[1]); prints "ready"
 *   a line    the main thread starts a controller thread and calls pthread_exit
 *   a line    (read by the controller) the worker stops; the controller prints the figures
 *             and ends the process, exit status 0 if every check held
 * Lines are read with read(), one byte at a time: no stdio buffer is shared by the two
 * readers. */
#include "common.h"
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile int stopping;
static volatile uint64_t *progress;
static unsigned long calls, errors;
static pthread_t worker_thread;

TRACED unsigned long work(unsigned long x)
{
    COUNT(calls);
    BARRIER();
    return x * 3 + 1;
}

/* 20 calls a millisecond: a trace the checker reads quickly, whichever the engine. */
static void *worker(void *arg)
{
    (void)arg;
    for (unsigned long x = 0; !stopping; x += 20) {
        for (unsigned long i = 0; i < 20; i++)
            if (work(x + i) != (x + i) * 3 + 1)
                COUNT(errors);
        *progress += 1;
        struct timespec d = {0, 1000 * 1000};
        nanosleep(&d, NULL);
    }
    return NULL;
}

static int read_line(void)
{
    char c;
    ssize_t got;
    while ((got = read(0, &c, 1)) == 1 && c != '\n')
        ;
    return got == 1 ? 0 : -1;
}

static void *controller(void *arg)
{
    (void)arg;
    if (read_line() < 0) /* end of file will do too */
        COUNT(errors);
    stopping = 1;
    pthread_join(worker_thread, NULL);
    printf("calls>0 %d errors %lu\n", calls > 0, errors);
    fflush(stdout);
    exit(errors ? 1 : 0);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, 8) < 0)
        return 2;
    progress = mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (progress == MAP_FAILED)
        return 2;
    close(fd);
    if (pthread_create(&worker_thread, NULL, worker, NULL) != 0)
        return 2;
    printf("ready\n");
    fflush(stdout);
    pthread_t t;
    if (read_line() < 0 || pthread_create(&t, NULL, controller, NULL) != 0)
        return 2;
    pthread_exit(NULL);
}
