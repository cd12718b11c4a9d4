/* A program that outlives its tracing (calltrace -t S PROGRAM). Its main thread, a worker
 * thread and a forked child each call before() BEFORE times, then wait, making no call, until
 * they see no tracer in /proc/self/status; the worker waits inside a call of inside(), which
 * the detach finds open. Then, once WAIT_FOR exists (the run's trace: calltrace wrote the run
 * while the program ran on), each calls after() AFTER times. The child exits with status 3,
 * checked by main; main prints "count NAME N" and ends as END says:
 *
 *   outlive WAIT_FOR END     END: an exit status; "kill" (killed by SIGKILL); or "term-parent"
 *                            (sends SIGTERM to its parent, calltrace, then waits to be ended
 *                            by the SIGTERM calltrace passes on)
 *
 * The waits poll every millisecond and give up after 30 s, saying so (exit 1). */
#include "common.h"
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BEFORE 200
#define AFTER 200
#define GIVE_UP_MS 30000
#define INLINE static inline __attribute__((always_inline))

static unsigned long before_calls, inside_calls, after_calls;
static const char *wait_for;

TRACED void before(void)
{
    COUNT(before_calls);
    BARRIER();
}

TRACED void after(void)
{
    COUNT(after_calls);
    BARRIER();
}

INLINE long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

INLINE bool traced(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long tracer = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "TracerPid: %ld", &tracer) == 1)
            break;
    if (f)
        fclose(f);
    return tracer != 0;
}

/* Polls every millisecond until done() holds; gives up after GIVE_UP_MS, saying what for. */
#define WAIT_UNTIL(done, what)                                                                     \
    do {                                                                                           \
        long start_ = now_ms();                                                                    \
        while (!(done)) {                                                                          \
            struct timespec ts_ = {0, 1000000};                                                    \
            nanosleep(&ts_, NULL);                                                                 \
            if (now_ms() - start_ > GIVE_UP_MS) {                                                  \
                printf("gave up waiting for %s\n", what);                                          \
                exit(1);                                                                           \
            }                                                                                      \
        }                                                                                          \
    } while (0)

INLINE bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

INLINE void calls_before(void)
{
    for (int i = 0; i < BEFORE; i++)
        before();
}

INLINE void calls_after(void)
{
    WAIT_UNTIL(exists(wait_for), wait_for);
    for (int i = 0; i < AFTER; i++)
        after();
}

/* Open across the detach: it must return to its caller as it would have untraced. */
TRACED void inside(void)
{
    COUNT(inside_calls);
    calls_before();
    WAIT_UNTIL(!traced(), "the detach (worker)");
}

static void *worker(void *arg)
{
    inside();
    calls_after();
    return arg;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    wait_for = argv[1];
    pid_t child = fork();
    if (child == 0) {
        calls_before();
        WAIT_UNTIL(!traced(), "the detach (child)");
        calls_after();
        printf("child before %lu after %lu\n", before_calls, after_calls);
        return 3;
    }
    pthread_t thread;
    if (child < 0 || pthread_create(&thread, NULL, worker, NULL) != 0)
        return 2;
    calls_before();
    WAIT_UNTIL(!traced(), "the detach (main)");
    calls_after();
    int status;
    if (pthread_join(thread, NULL) != 0 || waitpid(child, &status, 0) != child ||
        !WIFEXITED(status) || WEXITSTATUS(status) != 3)
        return 2;
    fflush(stdout); /* the child's line first */
    PRINT_COUNT("before", before_calls);
    PRINT_COUNT("inside", inside_calls);
    PRINT_COUNT("after", after_calls);
    fflush(stdout);
    if (strcmp(argv[2], "kill") == 0)
        raise(SIGKILL);
    if (strcmp(argv[2], "term-parent") == 0) {
        kill(getppid(), SIGTERM);
        WAIT_UNTIL(false, "SIGTERM");
    }
    return atoi(argv[2]);
}
