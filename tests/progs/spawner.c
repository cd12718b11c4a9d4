/* Creates threads and processes from its main thread without a pause, so an attach is likely to
 * find it inside clone() or fork(). It checks every result itself: a pthread_create or fork that
 * fails, a thread or child whose work is lost, is reported and makes it exit 1. Runs until its
 * standard input reaches end of file, then prints its figures. */
#include "common.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int stop;

TRACED long work(long x)
{
    return x * 3 + 1;
}

static void *worker(void *arg)
{
    return (void *)work((long)arg);
}

static void *watch_stdin(void *arg)
{
    (void)arg;
    char buf[64];
    while (read(0, buf, sizeof(buf)) > 0)
        ;
    stop = 1;
    return NULL;
}

static int spawn_thread(long i)
{
    pthread_t t;
    int rc = pthread_create(&t, NULL, worker, (void *)i);
    if (rc != 0) {
        printf("pthread_create: %s\n", strerror(rc));
        return -1;
    }
    void *ret;
    if ((rc = pthread_join(t, &ret)) != 0 || (long)ret != i * 3 + 1) {
        printf("thread %ld: join %s, result %ld\n", i, strerror(rc), (long)ret);
        return -1;
    }
    return 0;
}

static int spawn_process(long i)
{
    pid_t pid = fork();
    if (pid < 0) {
        printf("fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0)
        _exit((int)(work(i) & 0x7f));
    int status;
    pid_t got;
    while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    if (got != pid || !WIFEXITED(status) || WEXITSTATUS(status) != (int)(work(i) & 0x7f)) {
        printf("child %ld: waitpid %d, status %#x\n", (long)pid, (int)got, status);
        return -1;
    }
    return 0;
}

int main(void)
{
    pthread_t watcher;
    if (pthread_create(&watcher, NULL, watch_stdin, NULL) != 0)
        return 2;
    printf("ready\n");
    fflush(stdout);
    long threads = 0, processes = 0;
    int errors = 0;
    for (long i = 0; !stop; i++) {
        if (i % 4 == 3)
            errors += spawn_process(i) < 0, processes++;
        else
            errors += spawn_thread(i) < 0, threads++;
    }
    pthread_join(watcher, NULL);
    printf("threads>0 %d processes>0 %d errors %d\n", threads > 0, processes > 0, errors);
    return errors ? 1 : 0;
}
