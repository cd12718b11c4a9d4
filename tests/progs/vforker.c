/* A program to detach from while one of its threads waits in vfork(): a vfork parent is blocked
 * in the kernel until its child execs or exits, and no ptrace request stops it meanwhile.
 *   start      a worker thread makes paced traced calls of work(), each result checked; with
 *              the argument "spawn", another thread runs /bin/true with posix_spawn (a vfork
 *              underneath) again and again, each exit status checked; prints "ready"
 *   "vfork"    the main thread calls vfork(); the child makes a traced call, prints
 *              "child PID", then waits for the next line on standard input and execs /bin/true
 *              with it (exit 0 if the line is "go", 1 otherwise), so the parent waits in
 *              vfork() for as long as the test likes; the parent checks the child's exit status
 *              and prints "vfork done"
 *   "stop"     (or end of file) prints its figures and exits 0 if every check held
 * Lines are read one byte at a time, with read(): no buffer keeps the child's line from it. */
#include "common.h"
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static volatile int stopping;
static unsigned long calls, spawns, vforks, errors, bad_sum, bad_spawn, bad_vfork;

TRACED unsigned long work(unsigned long x)
{
    COUNT(calls);
    BARRIER();
    return x * 3 + 1;
}

TRACED void spawned(void)
{
    COUNT(spawns);
}

/* 20 calls a millisecond: a trace the checker reads quickly, whichever the engine. */
static void *worker(void *arg)
{
    (void)arg;
    for (unsigned long x = 0; !stopping; x += 20) {
        for (unsigned long i = 0; i < 20; i++)
            if (work(x + i) != (x + i) * 3 + 1)
                COUNT(errors), COUNT(bad_sum);
        struct timespec d = {0, 1000 * 1000};
        nanosleep(&d, NULL);
    }
    return NULL;
}

static void *spawner(void *arg)
{
    (void)arg;
    char *argv[] = {"true", NULL};
    while (!stopping) {
        pid_t pid;
        int status, rc = posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ);
        pid_t got = -1;
        if (rc == 0)
            while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
                ;
        if (rc != 0 || got != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            COUNT(errors), COUNT(bad_spawn);
        spawned();
    }
    return NULL;
}

/* A line of standard input, without its newline; -1 at end of file. */
static int read_line(char *buf, size_t len)
{
    size_t n = 0;
    char c;
    ssize_t got;
    while ((got = read(0, &c, 1)) == 1 && c != '\n')
        if (n + 1 < len)
            buf[n++] = c;
    buf[n] = '\0';
    return got == 1 || n ? 0 : -1;
}

static void held_vfork(void)
{
    pid_t pid = vfork();
    if (pid == 0) {
        /* only system calls and the traced call: the parent's memory is shared */
        char line[16], msg[32];
        int len = snprintf(msg, sizeof(msg), "child %d\n", (int)getpid());
        if (work(7) != 22 || write(1, msg, (size_t)len) != len || read_line(line, sizeof(line)) < 0)
            _exit(2);
        char *argv[] = {strcmp(line, "go") == 0 ? "true" : "false", NULL};
        execve(strcmp(line, "go") == 0 ? "/bin/true" : "/bin/false", argv, environ);
        _exit(3);
    }
    int status;
    pid_t got = -1;
    if (pid > 0)
        while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
            ;
    if (pid < 0 || got != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        COUNT(errors), COUNT(bad_vfork);
        printf("vfork: pid %d, waitpid %d, status %#x\n", (int)pid, (int)got, pid > 0 ? status : 0);
    }
    COUNT(vforks);
    printf("vfork done\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int spawning = argc > 1 && strcmp(argv[1], "spawn") == 0;
    pthread_t t[2];
    if (pthread_create(&t[0], NULL, worker, NULL) != 0 ||
        (spawning && pthread_create(&t[1], NULL, spawner, NULL) != 0))
        return 2;
    printf("ready\n");
    fflush(stdout);
    char line[64];
    while (read_line(line, sizeof(line)) == 0 && strcmp(line, "stop") != 0)
        if (strcmp(line, "vfork") == 0)
            held_vfork();
    stopping = 1;
    pthread_join(t[0], NULL);
    if (spawning)
        pthread_join(t[1], NULL);
    printf("calls>0 %d spawns>0 %d vforks %lu errors %lu\n", calls > 0, spawns > 0, vforks, errors);
    if (errors)
        printf("bad results %lu, failed spawns %lu, failed vforks %lu\n", bad_sum, bad_spawn,
               bad_vfork);
    return errors ? 1 : 0;
}
