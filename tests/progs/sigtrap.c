/* The program's own SIGTRAP handling: a SIGTRAP handler, raise(SIGTRAP) and
 * an int3 instruction of its own.  The tracer must pass these to the program
 * instead of taking them for its breakpoints. */
#include "common.h"
#include <signal.h>
#include <string.h>

static unsigned long n_on_trap, n_trap_helper, n_do_int3, n_do_raise;
static volatile int sink;

TRACED void trap_helper(int x)
{
    COUNT(n_trap_helper);
    sink = x;
}

TRACED void on_trap(int sig, siginfo_t *si, void *uc)
{
    (void)si;
    (void)uc;
    COUNT(n_on_trap);
    trap_helper(sig);
}

TRACED void do_int3(void)
{
    COUNT(n_do_int3);
    __asm__ __volatile__("int3");
    sink++;
}

TRACED void do_raise(void)
{
    COUNT(n_do_raise);
    raise(SIGTRAP);
    sink++;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_trap;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTRAP, &sa, NULL);
    for (int i = 0; i < 3; i++)
        do_raise();
    for (int i = 0; i < 4; i++)
        do_int3();
    printf("handler ran %lu times\n", n_on_trap);
    PRINT_COUNT("on_trap", n_on_trap);
    PRINT_COUNT("trap_helper", n_trap_helper);
    PRINT_COUNT("do_int3", n_do_int3);
    PRINT_COUNT("do_raise", n_do_raise);
    return 0;
}
