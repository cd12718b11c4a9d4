/* longjmp out of nested traced frames: setjmp in jumper(), longjmp from
 * level3() (3 traced levels deeper), repeated in a loop; then siglongjmp out
 * of a signal handler (on_usr1 raised inside sig_level2). */
#include "common.h"
#include <setjmp.h>
#include <signal.h>
#include <string.h>

static unsigned long n_jumper, n_level1, n_level2, n_level3, n_after, n_sig_jumper, n_sig_level1,
    n_sig_level2, n_on_usr1;
static jmp_buf env;
static sigjmp_buf senv;
static volatile int sink;

TRACED void level3(int i)
{
    COUNT(n_level3);
    if (i % 4 != 3) /* most iterations jump, some return normally */
        longjmp(env, i + 1);
    sink = i;
}

TRACED void level2(int i)
{
    COUNT(n_level2);
    level3(i);
    BARRIER();
    sink++;
}
TRACED void level1(int i)
{
    COUNT(n_level1);
    level2(i);
    BARRIER();
    sink++;
}
TRACED void after(int i)
{
    COUNT(n_after);
    sink = i;
}

TRACED int jumper(int i)
{
    COUNT(n_jumper);
    volatile int r = setjmp(env);
    if (r == 0) {
        level1(i);
        r = -1;
    }
    after(i); /* called after every longjmp/return */
    return r;
}

TRACED void on_usr1(int sig)
{
    COUNT(n_on_usr1);
    siglongjmp(senv, sig);
}

TRACED void sig_level2(void)
{
    COUNT(n_sig_level2);
    raise(SIGUSR1);
    BARRIER();
    sink++;
}
TRACED void sig_level1(void)
{
    COUNT(n_sig_level1);
    sig_level2();
    BARRIER();
    sink++;
}

TRACED int sig_jumper(void)
{
    COUNT(n_sig_jumper);
    if (sigsetjmp(senv, 1) == 0) {
        sig_level1();
        return 0;
    }
    after(-1);
    return 1;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);

    int jumped = 0, returned = 0;
    for (int i = 0; i < 200; i++) {
        if (jumper(i) > 0)
            jumped++;
        else
            returned++;
    }
    int sj = 0;
    for (int i = 0; i < 20; i++)
        sj += sig_jumper();
    printf("jumped %d returned %d sigjumped %d\n", jumped, returned, sj);
    PRINT_COUNT("jumper", n_jumper);
    PRINT_COUNT("level1", n_level1);
    PRINT_COUNT("level2", n_level2);
    PRINT_COUNT("level3", n_level3);
    PRINT_COUNT("after", n_after);
    PRINT_COUNT("sig_jumper", n_sig_jumper);
    PRINT_COUNT("sig_level1", n_sig_level1);
    PRINT_COUNT("sig_level2", n_sig_level2);
    PRINT_COUNT("on_usr1", n_on_usr1);
    return 0;
}
