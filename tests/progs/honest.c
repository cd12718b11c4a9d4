/* For tests/e2e/107 (honest numbers and closing line):
 *   tiny_ret  1 byte (ret) with code right after it: no jump fits it, so the inject engine
 *             gives it a breakpoint; caller() calls it and work() ROUNDS times each
 *   an idle thread that only waits for the main thread (idle(), which the test's -F leaves out)
 *   "ifunc LIB"  dlopens LIB (ifunc_lib.c) and prints how often the resolver of its IFUNC ran
 *             ("resolver N"): the dynamic linker's call, and any a tracer made in the program
 * honest ROUNDS [ifunc LIB] */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

/* clang-format off */
__asm__(
    ".intel_syntax noprefix\n"
    ".text\n"
    ".globl tiny_ret, tiny_after\n"
    ".type tiny_ret, @function\n"
    "tiny_ret:\n    ret\n.size tiny_ret, .-tiny_ret\n"
    ".type tiny_after, @function\n"      /* right after it: no padding to hop through */
    "tiny_after:\n    lea eax, [rdi+1]\n    ret\n.size tiny_after, .-tiny_after\n"
    ".att_syntax\n");
/* clang-format on */
void tiny_ret(void);
int tiny_after(int);

static unsigned long n_work, n_caller, n_tiny;
static volatile int sink;

TRACED int work(int x)
{
    COUNT(n_work);
    return x + 1;
}

TRACED void caller(int x)
{
    COUNT(n_caller);
    COUNT(n_tiny);
    tiny_ret();
    sink = work(x);
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

TRACED void *idle(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock); /* held by main until the rounds are over */
    pthread_mutex_unlock(&lock);
    return NULL;
}

static int resolver_calls(const char *lib)
{
    void *h = dlopen(lib, RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    int (*twice)(int) = (int (*)(int))dlsym(h, "twice");
    unsigned long (*picks)(void) = (unsigned long (*)(void))dlsym(h, "pick_calls");
    if (!twice || !picks)
        return 1;
    sink = twice(2);
    printf("resolver %lu\n", picks());
    return 0;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    pthread_t t;
    pthread_mutex_lock(&lock);
    if (pthread_create(&t, NULL, idle, NULL) != 0)
        return 2;
    for (int i = 0; i < rounds; i++)
        caller(i);
    pthread_mutex_unlock(&lock);
    pthread_join(t, NULL);
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "ifunc") == 0 && i + 1 < argc && resolver_calls(argv[++i]))
            return 1;
    }
    PRINT_COUNT("work", n_work);
    PRINT_COUNT("caller", n_caller);
    PRINT_COUNT("tiny_ret", n_tiny);
    return 0;
}
