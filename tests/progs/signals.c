/* Signal handlers that call traced functions; they must appear nested inside
 * whatever traced function they interrupted.
 *  phase 1: raise(SIGUSR1) from inside do_raise -> on_usr1 -> in_handler
 *  phase 2: raise(SIGUSR2) from inside do_raise_alt; on_usr2 runs on a
 *           sigaltstack -> in_alt_handler
 *  phase 3: raise(SIGHUP) from do_raise_nested; on_hup raises SIGUSR2, so
 *           on_usr2 (alt stack) nests inside on_hup (normal stack)
 *  phase 4: setitimer(ITIMER_REAL) interrupts a busy loop of spin/leaf_work;
 *           on_alarm -> tick_work, until 10 ticks were seen. */
#include "common.h"
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static unsigned long n_on_usr1, n_in_handler, n_on_usr2, n_in_alt_handler, n_on_hup, n_on_alarm,
    n_tick_work, n_spin, n_leaf_work, n_do_raise, n_do_raise_alt, n_do_raise_nested;
static volatile sig_atomic_t ticks, on_alt_stack_ok = 1;
static char *alt_base;
static volatile int sink;

TRACED void in_handler(int x)
{
    COUNT(n_in_handler);
    sink = x;
}
TRACED void in_alt_handler(int x)
{
    COUNT(n_in_alt_handler);
    sink = x;
}
TRACED void tick_work(int x)
{
    COUNT(n_tick_work);
    sink = x;
}

TRACED void on_usr1(int sig)
{
    COUNT(n_on_usr1);
    in_handler(sig);
}

TRACED void on_usr2(int sig)
{
    COUNT(n_on_usr2);
    char here;
    if (!(&here >= alt_base && &here < alt_base + SIGSTKSZ * 4))
        on_alt_stack_ok = 0;
    in_alt_handler(sig);
}

TRACED void on_hup(int sig)
{
    COUNT(n_on_hup);
    raise(SIGUSR2);
    sink = sig;
}

TRACED void on_alarm(int sig)
{
    COUNT(n_on_alarm);
    ticks++;
    tick_work(sig);
}

TRACED void do_raise(int sig)
{
    COUNT(n_do_raise);
    raise(sig);
    BARRIER();
}
TRACED void do_raise_alt(int sig)
{
    COUNT(n_do_raise_alt);
    raise(sig);
    BARRIER();
}
TRACED void do_raise_nested(int sig)
{
    COUNT(n_do_raise_nested);
    raise(sig);
    BARRIER();
}

TRACED void leaf_work(int i)
{
    COUNT(n_leaf_work);
    sink = i;
}

TRACED void spin(void)
{
    COUNT(n_spin);
    for (int i = 0; i < 10; i++)
        leaf_work(i);
}

static void install(int sig, void (*fn)(int), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, NULL) != 0) {
        perror("sigaction");
        exit(2);
    }
}

int main(void)
{
    stack_t ss;
    alt_base = malloc(SIGSTKSZ * 4);
    ss.ss_sp = alt_base;
    ss.ss_size = SIGSTKSZ * 4;
    ss.ss_flags = 0;
    if (sigaltstack(&ss, NULL) != 0) {
        perror("sigaltstack");
        return 2;
    }
    install(SIGUSR1, on_usr1, SA_RESTART);
    install(SIGUSR2, on_usr2, SA_RESTART | SA_ONSTACK);
    install(SIGHUP, on_hup, SA_RESTART);
    install(SIGALRM, on_alarm, SA_RESTART);

    for (int i = 0; i < 5; i++)
        do_raise(SIGUSR1);
    for (int i = 0; i < 4; i++)
        do_raise_alt(SIGUSR2);
    for (int i = 0; i < 3; i++)
        do_raise_nested(SIGHUP);

    struct itimerval it = {{0, 2000}, {0, 2000}};
    setitimer(ITIMER_REAL, &it, NULL);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (ticks < 10) {
        /* a spin every 20 us, untraced waiting between: under the inject engine 20 ms of
         * back-to-back calls would be a trace of 300,000 calls */
        struct timespec s0;
        clock_gettime(CLOCK_MONOTONIC, &s0);
        spin();
        do
            clock_gettime(CLOCK_MONOTONIC, &t1);
        while ((t1.tv_sec - s0.tv_sec) * 1000000000L + (t1.tv_nsec - s0.tv_nsec) < 20000);
        if (t1.tv_sec - t0.tv_sec > 20) /* SIGALRM lost: give up */
            break;
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);

    printf("ticks>=10 %s\n", ticks >= 10 ? "yes" : "NO (SIGALRM lost?)");
    printf("alt stack used: %s\n", on_alt_stack_ok ? "yes" : "NO");
    PRINT_COUNT("on_usr1", n_on_usr1);
    PRINT_COUNT("in_handler", n_in_handler);
    PRINT_COUNT("on_usr2", n_on_usr2);
    PRINT_COUNT("in_alt_handler", n_in_alt_handler);
    PRINT_COUNT("on_hup", n_on_hup);
    PRINT_COUNT("do_raise", n_do_raise);
    PRINT_COUNT("do_raise_alt", n_do_raise_alt);
    PRINT_COUNT("do_raise_nested", n_do_raise_nested);
    PRINT_COUNT("on_alarm", n_on_alarm);
    PRINT_COUNT("tick_work", n_tick_work);
    PRINT_COUNT("spin", n_spin);
    PRINT_COUNT("leaf_work", n_leaf_work);
    return 0;
}
