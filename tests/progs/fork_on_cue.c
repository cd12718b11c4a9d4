/* A program that forks when told to, for a test that detaches calltrace while the child has not
 * run a single instruction yet (tests/e2e/108). Usage: fork_on_cue MAPS_PREFIX.
 *   - a worker thread computes through traced functions, each round checked against the same
 *     arithmetic done inline, and sleeps 10 ms between rounds (an attachment records calls);
 *   - "fork" (a line on stdin): the main thread forks from inside a traced function, spawn(),
 *     whose call is open when the child starts (its return address hooked, in the memory the
 *     child gets a copy of). The child returns from spawn(), computes CHILD_ROUNDS rounds
 *     through the traced functions, each checked, writes its /proc/self/maps to MAPS_PREFIX.N
 *     (N: the number of the fork) and exits with the number of its errors (0 when all held). The
 *     parent waits for it and prints "child N exit STATUS" or "child N signal SIG";
 *   - "stop": prints its figures and exits 0 only if every check held. */
#include "common.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUND 200
#define CHILD_ROUNDS 1000

static volatile int stopping;
static unsigned long errors, rounds;

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

/* One round through the traced functions: 0 when it matched the inline arithmetic. */
static int round_checked(unsigned long base)
{
    unsigned long traced = 0, plain = 0;
    for (unsigned long i = 0; i < ROUND; i++) {
        traced += step(base + i);
        plain += step_inline(base + i);
    }
    return traced != plain;
}

static void *worker(void *arg)
{
    (void)arg;
    struct timespec pause = {0, 10000000};
    unsigned long base = 1;
    while (!stopping) {
        if (round_checked(base))
            COUNT(errors);
        COUNT(rounds);
        base += ROUND;
        nanosleep(&pause, NULL);
    }
    return NULL;
}

/* The child's copy of /proc/self/maps, for the test to compare. */
static int save_maps(const char *prefix, unsigned long n)
{
    char path[4096], buf[4096];
    snprintf(path, sizeof(path), "%s.%lu", prefix, n);
    int in = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ssize_t got = 0;
    while (in >= 0 && out >= 0 && (got = read(in, buf, sizeof(buf))) > 0)
        if (write(out, buf, (size_t)got) != got)
            got = -1;
    int failed = in < 0 || out < 0 || got < 0;
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) < 0)
        failed = 1;
    return failed;
}

/* fork(), from a call that is open in the child when it starts. */
TRACED pid_t spawn(void)
{
    BARRIER();
    return fork();
}

static void child_run(const char *prefix, unsigned long n)
{
    int bad = 0;
    for (unsigned long r = 0; r < CHILD_ROUNDS; r++)
        bad += round_checked(r * ROUND + 7);
    bad += save_maps(prefix, n);
    _exit(bad > 100 ? 100 : bad);
}

static void fork_and_wait(const char *prefix, unsigned long n)
{
    pid_t pid = spawn();
    if (pid < 0) {
        printf("fork: %s\n", strerror(errno));
        COUNT(errors);
        return;
    }
    if (pid == 0)
        child_run(prefix, n);
    int status;
    pid_t got;
    while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    if (got != pid) {
        printf("child %lu: waitpid: %s\n", n, strerror(errno));
        COUNT(errors);
    } else if (WIFEXITED(status)) {
        printf("child %lu exit %d\n", n, WEXITSTATUS(status));
    } else {
        printf("child %lu signal %d\n", n, WIFSIGNALED(status) ? WTERMSIG(status) : -1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    setvbuf(stdout, NULL, _IOLBF, 0);
    setvbuf(stdin, NULL, _IONBF, 0); /* no buffer to allocate after "ready" */
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 2;
    while (__atomic_load_n(&rounds, __ATOMIC_RELAXED) < 1)
        sched_yield();
    printf("ready\n");
    char line[64];
    unsigned long forks = 0;
    while (fgets(line, sizeof(line), stdin) && strncmp(line, "stop", 4) != 0)
        if (strncmp(line, "fork", 4) == 0)
            fork_and_wait(argv[1], ++forks);
    stopping = 1;
    pthread_join(t, NULL);
    printf("rounds %s forks %lu errors %lu\n", rounds > 0 ? ">0" : "0", forks, errors);
    return errors ? 1 : 0;
}
