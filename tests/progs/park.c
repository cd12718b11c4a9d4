/* Not a traced program: a test tool. Parks a thread of a process inside the code an earlier
 * calltrace injected (an anonymous executable mapping) at an entry trampoline's rdtsc: after
 * the entry's shadow push, before its call into the function. That is where a calltrace that
 * attaches next finds a thread of a program whose last calltrace was SIGKILLed at the worst
 * moment, and it is reached here deterministically: the thread is single-stepped there, then let
 * go with SIGSTOP, which stops the whole process in that state until SIGCONT.
 *
 * park TID      prints "parked TID" once it is there; exit 1 (and a line why) when it is not
 *               reached within a few million steps */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>

#define MAX_STEPS 20000000L

struct exec_map {
    uint64_t lo, hi;
};

/* The anonymous executable mappings of tid's process (the injected code, not a file's). */
static size_t anon_exec_maps(pid_t tid, struct exec_map *v, size_t cap)
{
    char path[64], line[4200];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)tid);
    FILE *f = fopen(path, "re");
    size_t n = 0;
    while (f && fgets(line, sizeof(line), f) && n < cap) {
        uint64_t lo, hi;
        char perms[8];
        int at = 0;
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %*s %*s %*s %n", &lo, &hi, perms, &at) < 3)
            continue;
        const char *name = line + at;
        if (perms[2] == 'x' && (*name == '\n' || *name == '\0'))
            v[n++] = (struct exec_map){lo, hi};
    }
    if (f)
        fclose(f);
    return n;
}

static bool inside(const struct exec_map *v, size_t n, uint64_t pc)
{
    for (size_t i = 0; i < n; i++)
        if (pc >= v[i].lo && pc < v[i].hi)
            return true;
    return false;
}

static bool bytes_at(pid_t tid, uint64_t pc, const uint8_t *want, size_t len)
{
    uint8_t b[16];
    struct iovec local = {b, len}, remote = {(void *)pc, len};
    return process_vm_readv(tid, &local, 1, &remote, 1, 0) == (ssize_t)len &&
           memcmp(b, want, len) == 0;
}

/* The signal the thread stopped with (SIGTRAP after a step), or -1 when it did not stop. */
static int wait_stop(pid_t tid)
{
    int status;
    if (waitpid(tid, &status, __WALL) < 0 || !WIFSTOPPED(status)) {
        fprintf(stderr, "park: thread %d: %s\n", (int)tid, strerror(errno));
        return -1;
    }
    return WSTOPSIG(status);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: park TID\n");
        return 2;
    }
    pid_t tid = (pid_t)atoi(argv[1]);
    struct exec_map maps[64];
    size_t n = anon_exec_maps(tid, maps, 64);
    if (!n) {
        fprintf(stderr, "park: thread %d: no injected code in its process\n", (int)tid);
        return 1;
    }
    if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0 || ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0 ||
        wait_stop(tid) != SIGTRAP) {
        fprintf(stderr, "park: thread %d: cannot stop it: %s\n", (int)tid, strerror(errno));
        return 1;
    }
    /* An entry comes in at a function's stub (its first instruction keeps rax in the red zone),
     * an exit (which stamps with rdtsc too) at the blob's exit, from the function's ret. */
    static const uint8_t stub_start[] = {0x48, 0x89, 0x44, 0x24, 0xf8}, rdtsc[] = {0x0f, 0x31};
    int sig = 0; /* a signal that came meanwhile goes on to the program */
    bool was_inside = false, entering = false;
    for (long i = 0; i < MAX_STEPS; i++) {
        struct user_regs_struct regs;
        if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
            break;
        bool in = inside(maps, n, regs.rip);
        if (in && !was_inside)
            entering = bytes_at(tid, regs.rip, stub_start, sizeof(stub_start));
        was_inside = in;
        if (in && entering && bytes_at(tid, regs.rip, rdtsc, sizeof(rdtsc))) {
            if (ptrace(PTRACE_DETACH, tid, 0, SIGSTOP) < 0)
                break;
            printf("parked %d\n", (int)tid);
            return 0;
        }
        if (ptrace(PTRACE_SINGLESTEP, tid, 0, sig) < 0 || (sig = wait_stop(tid)) < 0)
            break;
        sig = sig == SIGTRAP ? 0 : sig;
    }
    fprintf(stderr, "park: thread %d: never reached the injected code's rdtsc\n", (int)tid);
    ptrace(PTRACE_DETACH, tid, 0, 0);
    return 1;
}
