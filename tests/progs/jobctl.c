/* Job control: the test script sends SIGSTOP then SIGCONT while this runs.
 *   jobctl PIDFILE wait       write pid, then block reading one line on stdin
 *   jobctl PIDFILE busy CTR [US]  write pid, then call work() in a loop (with US,
 *                             one call every US microseconds), storing the number
 *                             of calls in the 8-byte file CTR (mmap'ed), until
 *                             SIGUSR1 arrives.
 * A SIGCONT handler counts how often it ran. */
#include "common.h"
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static unsigned long n_on_cont, n_work, n_write_pid;
static volatile sig_atomic_t stop_flag;
static volatile uint64_t *shared;

TRACED void on_cont(int sig)
{
    (void)sig;
    COUNT(n_on_cont);
}
TRACED void on_usr1(int sig)
{
    (void)sig;
    stop_flag = 1;
}

TRACED void work(void)
{
    COUNT(n_work);
    *shared = n_work;
}

TRACED void write_pid(const char *path)
{
    COUNT(n_write_pid);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        perror(tmp);
        exit(2);
    }
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    rename(tmp, path); /* appears atomically */
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: jobctl PIDFILE wait|busy [CTR [US]]\n");
        return 2;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sa.sa_handler = on_cont;
    sigaction(SIGCONT, &sa, NULL);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);

    if (strcmp(argv[2], "busy") == 0) {
        int fd = open(argv[3], O_RDWR | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || ftruncate(fd, 8) != 0) {
            perror(argv[3]);
            return 2;
        }
        shared = mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (shared == MAP_FAILED) {
            perror("mmap");
            return 2;
        }
        write_pid(argv[1]);
        /* with US, a call every US microseconds, untraced waiting between: under the inject
         * engine back-to-back calls make a trace of gigabytes in a second */
        long pace_ns = argc > 4 ? strtol(argv[4], NULL, 10) * 1000 : 0;
        while (!stop_flag) {
            struct timespec t0, t;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            work();
            do
                clock_gettime(CLOCK_MONOTONIC, &t);
            while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < pace_ns &&
                   !stop_flag);
        }
        printf("busy done\n");
    } else {
        write_pid(argv[1]);
        char line[256];
        if (!fgets(line, sizeof line, stdin)) {
            printf("no input\n");
            return 1;
        }
        printf("got %s", line);
    }
    printf("cont handler ran %lu\n", n_on_cont);
    PRINT_COUNT("on_cont", n_on_cont);
    PRINT_COUNT("write_pid", n_write_pid);
    PRINT_COUNT("work", n_work);
    return 0;
}
