/* Process trees: one program, a mode per shape. Every process prints
 * "proc ROLE work N" for the calls of work() it made itself, and the parent
 * prints the totals the trace must hold as "count NAME N" lines.
 *
 *   leaf N            call work() N times (the exec target of the others)
 *   vfork-exec        vfork, the child execs "leaf 7"
 *   spawn K           posix_spawn K children running "leaf 3"
 *   thread-exec       a second thread execs "leaf 5" while main waits
 *   daemon            double fork: the grandchild works, reports through a pipe
 *   many N            N children alive at once (a pipe holds them), 2 calls each
 *   killed            a child kills itself with SIGSEGV after 4 calls
 *   orphans N         N children outlive their parent, which returns first
 *   tracer            a child prints the TracerPid the kernel shows for it
 */
#include "common.h"
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static unsigned long n_work, n_child_main;
static volatile int sink;
static const char *self;

TRACED void work(int x)
{
    COUNT(n_work);
    sink = x;
}

TRACED void child_main(int calls)
{
    COUNT(n_child_main);
    for (int i = 0; i < calls; i++)
        work(i);
}

static void report(const char *role)
{
    printf("proc %s work %lu\n", role, n_work);
    fflush(stdout);
}

static int leaf(int n)
{
    for (int i = 0; i < n; i++)
        work(i);
    report("leaf");
    return 0;
}

static void exec_leaf(const char *n)
{
    execl(self, self, "leaf", n, (char *)NULL);
    _exit(127);
}

static int vfork_exec(void)
{
    work(1);
    pid_t p = vfork();
    if (p == 0)
        exec_leaf("7");
    int st;
    waitpid(p, &st, 0);
    report("parent");
    printf("count work 8\n");
    return WEXITSTATUS(st);
}

static int spawn(int k)
{
    for (int i = 0; i < k; i++) {
        char *argv[] = {(char *)self, "leaf", "3", NULL};
        pid_t p;
        if (posix_spawn(&p, self, NULL, NULL, argv, environ) != 0)
            return 1;
        int st;
        waitpid(p, &st, 0);
    }
    report("parent");
    printf("count work %d\n", 3 * k);
    return 0;
}

static void *exec_from_thread(void *arg)
{
    (void)arg;
    work(2);
    exec_leaf("5");
    return NULL;
}

static int thread_exec(void)
{
    fflush(stdout);
    pthread_t t;
    pthread_create(&t, NULL, exec_from_thread, NULL);
    pthread_join(t, NULL); /* never returns: the exec replaces the process */
    return 1;
}

static int daemonize(void)
{
    int fds[2];
    if (pipe(fds) < 0)
        return 1;
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        setsid();
        if (fork() != 0)
            _exit(0); /* the middle process leaves at once */
        child_main(6);
        char c = 'd';
        if (write(fds[1], &c, 1) != 1)
            _exit(1);
        _exit(0);
    }
    close(fds[1]);
    waitpid(p, NULL, 0);
    char c;
    if (read(fds[0], &c, 1) != 1) /* the grandchild has done its work */
        return 1;
    printf("count work 6\ncount child_main 1\n");
    return 0;
}

static int many(int n)
{
    int hold[2], ready[2];
    if (pipe(hold) < 0 || pipe(ready) < 0)
        return 1;
    fflush(stdout);
    for (int i = 0; i < n; i++) {
        if (fork() == 0) {
            close(hold[1]);
            child_main(2);
            char c = 'r', d;
            if (write(ready[1], &c, 1) != 1 || read(hold[0], &d, 1) != 0)
                _exit(1);
            _exit(0);
        }
    }
    close(hold[0]);
    close(ready[1]);
    for (int i = 0; i < n; i++) { /* all n are alive and have worked */
        char c;
        if (read(ready[0], &c, 1) != 1)
            return 1;
    }
    close(hold[1]); /* now let them all go */
    for (int i = 0; i < n; i++)
        wait(NULL);
    printf("alive at once %d\ncount work %d\ncount child_main %d\n", n, 2 * n, n);
    return 0;
}

static int killed(void)
{
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        child_main(4);
        raise(SIGSEGV);
        _exit(0);
    }
    int st;
    waitpid(p, &st, 0);
    printf("child signal %d\ncount work 4\ncount child_main 1\n",
           WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    return 0;
}

static int orphans(int n)
{
    int gate[2];
    if (pipe(gate) < 0)
        return 1;
    fflush(stdout);
    for (int i = 0; i < n; i++) {
        if (fork() == 0) {
            close(gate[1]);
            char c;
            if (read(gate[0], &c, 1) != 0) /* EOF: the parent is gone */
                _exit(1);
            child_main(3);
            _exit(0);
        }
    }
    printf("count work %d\ncount child_main %d\n", 3 * n, n);
    return 0; /* the children run on after this */
}

static int tracer(void)
{
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        child_main(2);
        FILE *f = fopen("/proc/self/status", "r");
        char line[256];
        while (f && fgets(line, sizeof(line), f))
            if (strncmp(line, "TracerPid:", 10) == 0)
                printf("child %s", line);
        fflush(stdout);
        _exit(0);
    }
    int st;
    waitpid(p, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
    self = argv[0];
    const char *mode = argc > 1 ? argv[1] : "";
    int n = argc > 2 ? atoi(argv[2]) : 0;
    if (!strcmp(mode, "leaf"))
        return leaf(n);
    if (!strcmp(mode, "vfork-exec"))
        return vfork_exec();
    if (!strcmp(mode, "spawn"))
        return spawn(n);
    if (!strcmp(mode, "thread-exec"))
        return thread_exec();
    if (!strcmp(mode, "daemon"))
        return daemonize();
    if (!strcmp(mode, "many"))
        return many(n);
    if (!strcmp(mode, "killed"))
        return killed();
    if (!strcmp(mode, "orphans"))
        return orphans(n);
    if (!strcmp(mode, "tracer"))
        return tracer();
    fprintf(stderr, "usage: proctree MODE [N]\n");
    return 2;
}
