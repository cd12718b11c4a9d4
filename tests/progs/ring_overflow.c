/* Makes calls while its tracer is stopped, so that an in-process engine's ring overflows.
 *
 * Usage: ring_overflow N    (N calls of work() with the tracer stopped, then N more with it
 *                            running again)
 *
 * The program stops its tracer itself (SIGSTOP to the TracerPid of /proc/self/status) and
 * waits until the kernel shows it stopped: no sleep, no timing. Untraced, it just calls. The
 * "count" lines are the calls made; a trace holds them minus those its engine says it dropped.
 * Only for an engine that lets the program run on without its tracer (--engine=inject): the
 * ptrace engine would stop the program at its first call and never wake it. */
#include "common.h"
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

static unsigned long n_work, n_main;
static volatile unsigned long sink;

TRACED void work(unsigned long i)
{
    COUNT(n_work);
    sink += i;
}

/* The helpers are inlined: no traced call but work() and main() may reach the ring, so that the
 * count of calls dropped is a count of work() calls. */
#define UNTRACED static inline __attribute__((always_inline))

/* The value of "Name:\t" in /proc/PID/status, or -1. */
UNTRACED long status_field(const char *path, const char *name)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[256];
    long v = -1;
    size_t len = strlen(name);
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, name, len) == 0) {
            v = atol(line + len);
            break;
        }
    fclose(f);
    return v;
}

/* The one-letter state in /proc/PID/stat, after the command name in parentheses. */
UNTRACED char state_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return '?';
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    return p && p[1] == ' ' ? p[2] : '?';
}

int main(int argc, char **argv)
{
    COUNT(n_main);
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
    pid_t tracer = (pid_t)status_field("/proc/self/status", "TracerPid:\t");
    if (tracer > 0) {
        if (kill(tracer, SIGSTOP) < 0) {
            perror("kill SIGSTOP");
            return 1;
        }
        while (state_of(tracer) != 'T')
            ;
    }
    for (unsigned long i = 0; i < n; i++)
        work(i);
    if (tracer > 0 && kill(tracer, SIGCONT) < 0) {
        perror("kill SIGCONT");
        return 1;
    }
    for (unsigned long i = 0; i < n; i++)
        work(i);
    PRINT_COUNT("work", n_work);
    PRINT_COUNT("main", n_main);
    return 0;
}
