/* A thread born while calltrace attaches, from a clone() that began before: the main thread calls
 * clone3 and stays inside the kernel after the kernel has decided that the new thread is not
 * traced (its creator was not, then) and before the thread exists, for as long as the test wants.
 * clone3 writes its CLONE_PIDFD result there into a page that userfaultfd keeps missing; a helper
 * process (never traced: calltrace -p takes the program's threads only) fills it on SIGUSR1.
 * The new thread then sleeps a little, so that calltrace has its breakpoints in, and makes CALLS
 * traced calls: if calltrace never took it over, the first one kills the program with SIGTRAP.
 *
 * The new thread runs no C library code (it has a thread control block of its own, copied from
 * the main thread's header, which the inject engine needs; glibc knows nothing of it): raw
 * system calls and the traced function only.
 *
 * Prints "helper PID", then (from the helper) "stalled" once the clone is held up in the kernel,
 * "thread done" after the new thread's calls; at end of file on stdin, its figures. Prints
 * "unsupported: WHY" and exits 77 without userfaultfd or pidfds of threads (Linux 6.9). */
#define _GNU_SOURCE
#include "common.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CALLS 40
#define STACK_SIZE (256 * 1024)
#define TCB_SIZE 4096

static unsigned long calls, done;

TRACED unsigned long work(unsigned long x)
{
    BARRIER();
    return x * 3 + 1;
}

static long raw_syscall2(long nr, long a, long b)
{
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b) : "rcx", "r11", "memory");
    return ret;
}

static void raw_sleep_ms(long ms)
{
    struct {
        long sec, nsec;
    } d = {ms / 1000, (ms % 1000) * 1000000};
    raw_syscall2(SYS_nanosleep, (long)&d, 0);
}

/* The new thread, on its own stack, with nothing to return to. */
static void new_thread(void)
{
    raw_sleep_ms(100);
    for (unsigned long i = 0; i < CALLS; i++) {
        if (work(i) == i * 3 + 1)
            COUNT(calls);
        raw_sleep_ms(5);
    }
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    raw_syscall2(SYS_exit, 0, 0);
}

/* Serves the one fault in page when told (SIGUSR1). */
static void helper(int uffd, char *page, long pagesize)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, NULL);
    struct pollfd p = {uffd, POLLIN, 0};
    struct uffd_msg msg;
    if (poll(&p, 1, 30000) != 1 || read(uffd, &msg, sizeof(msg)) != sizeof(msg))
        _exit(1);
    printf("stalled\n");
    fflush(stdout);
    struct timespec limit = {60, 0}; /* a test that died never says so: not forever, then */
    sigtimedwait(&usr1, NULL, &limit);
    struct uffdio_zeropage z = {.range = {(uintptr_t)page, (uint64_t)pagesize}};
    _exit(ioctl(uffd, UFFDIO_ZEROPAGE, &z) < 0 ? 1 : 0);
}

static int unsupported(const char *what, int err)
{
    printf("unsupported: %s: %s\n", what, strerror(err));
    return 77;
}

int main(void)
{
    long pagesize = sysconf(_SC_PAGESIZE);
    int uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
    if (uffd < 0)
        return unsupported("userfaultfd", errno);
    struct uffdio_api api = {.api = UFFD_API};
    if (ioctl(uffd, UFFDIO_API, &api) < 0)
        return unsupported("UFFDIO_API", errno);
    char *page = mmap(NULL, pagesize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    uint64_t *tcb = aligned_alloc(64, TCB_SIZE);
    if (page == MAP_FAILED || stack == MAP_FAILED || !tcb)
        return 2;
    struct uffdio_register reg = {.range = {(uintptr_t)page, (uint64_t)pagesize},
                                  .mode = UFFDIO_REGISTER_MODE_MISSING};
    if (ioctl(uffd, UFFDIO_REGISTER, &reg) < 0)
        return unsupported("UFFDIO_REGISTER", errno);
    /* the start of the main thread's control block header (stack and pointer guards included),
     * pointing to itself */
    const void *main_tcb;
    __asm__("mov %%fs:0, %0" : "=r"(main_tcb));
    memset(tcb, 0, TCB_SIZE);
    memcpy(tcb, main_tcb, 0x40);
    tcb[0] = tcb[2] = (uintptr_t)tcb;
    pid_t helper_pid = fork();
    if (helper_pid < 0)
        return 2;
    if (helper_pid == 0)
        helper(uffd, page, pagesize);
    printf("helper %d\n", (int)helper_pid);
    fflush(stdout);

    struct clone_args args = {.flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
                                       CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PIDFD,
                              .pidfd = (uintptr_t)page,
                              .stack = (uintptr_t)stack,
                              .stack_size = STACK_SIZE,
                              .tls = (uintptr_t)tcb};
    long tid;
    /* the new thread starts right after the syscall, on its own stack */
    __asm__ volatile("syscall\n\t"
                     "test %%rax, %%rax\n\t"
                     "jnz 1f\n\t"
                     "xor %%ebp, %%ebp\n\t"
                     "call *%[fn]\n\t"
                     "ud2\n"
                     "1:"
                     : "=a"(tid)
                     : "a"((long)SYS_clone3), "D"(&args), "S"(sizeof(args)), [fn] "r"(new_thread)
                     : "rcx", "r11", "memory");
    if (tid < 0) {
        kill(helper_pid, SIGKILL);
        waitpid(helper_pid, NULL, 0);
        return unsupported("clone3 of a thread with CLONE_PIDFD (Linux 6.9)", (int)-tid);
    }
    close(*(int *)page);
    for (int i = 0; i < 30000 && !__atomic_load_n(&done, __ATOMIC_ACQUIRE); i++)
        raw_sleep_ms(1);
    int errors = 0;
    if (__atomic_load_n(&done, __ATOMIC_ACQUIRE))
        printf("thread done\n");
    else
        printf("thread lost\n"), errors++;
    fflush(stdout);
    char buf[64];
    while (read(0, buf, sizeof(buf)) > 0)
        ;
    int status;
    if (waitpid(helper_pid, &status, 0) != helper_pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        errors++;
    printf("calls %lu errors %d\n", calls, errors);
    return errors || calls != CALLS ? 1 : 0;
}
