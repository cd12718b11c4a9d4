/* dlopen LIB_A LIB_B ROUNDS [fork]: loads LIB_A, calls into it, unloads it; then LIB_B the same
 * (it may well be mapped where LIB_A was); then LIB_A again. Prints, per library file, how many
 * calls of each function its own counters saw ("lib NAME FUNCTION N"; the lines of one name add
 * up), and whether dlclose really unmapped it ("unloaded NAME yes").
 * With "fork": a child forked while A is loaded the first time calls into it too, and at the
 * end the program execs itself to do it all again, without "fork". */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

struct totals {
    const char *path;
    unsigned long sum, square;
};

static int forking;

/* The child's calls, counted by the library copy it inherited. */
static void child(const char *name, int (*sum)(int),
                  void (*calls)(unsigned long *, unsigned long *))
{
    unsigned long s0, q0, s1, q1;
    calls(&s0, &q0);
    for (int i = 0; i < 10; i++)
        sum(4);
    calls(&s1, &q1);
    printf("lib %s plugin_sum %lu\nlib %s plugin_square %lu\n", name, s1 - s0, name, q1 - q0);
    fflush(stdout);
    _exit(0);
}

static void use(struct totals *lib, int rounds)
{
    void *h = dlopen(lib->path, RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        exit(1);
    }
    int (*sum)(int) = (int (*)(int))dlsym(h, "plugin_sum");
    void (*calls)(unsigned long *, unsigned long *) =
        (void (*)(unsigned long *, unsigned long *))dlsym(h, "plugin_calls");
    long total = 0;
    for (int i = 0; i < rounds; i++)
        total += sum(i % 5);
    unsigned long s, q;
    calls(&s, &q);
    lib->sum += s;
    lib->square += q;
    printf("total %ld\n", total);
    fflush(stdout);
    if (forking) {
        forking = 0;
        pid_t pid = fork();
        if (pid == 0)
            child(strrchr(lib->path, '/') + 1, sum, calls);
        waitpid(pid, NULL, 0);
    }
    dlclose(h);
    if (dlopen(lib->path, RTLD_NOW | RTLD_NOLOAD) == NULL)
        printf("unloaded %s yes\n", strrchr(lib->path, '/') + 1);
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    struct totals a = {argv[1], 0, 0}, b = {argv[2], 0, 0};
    int rounds = atoi(argv[3]);
    forking = argc > 4 && strcmp(argv[4], "fork") == 0;
    int exec_after = forking;
    use(&a, rounds);
    use(&b, rounds + 3);
    use(&a, rounds * 2);
    struct totals *libs[] = {&a, &b};
    for (int i = 0; i < 2; i++) {
        const char *name = strrchr(libs[i]->path, '/') + 1;
        printf("lib %s plugin_sum %lu\nlib %s plugin_square %lu\n", name, libs[i]->sum, name,
               libs[i]->square);
    }
    if (exec_after) {
        fflush(stdout);
        char *again[] = {argv[0], argv[1], argv[2], argv[3], NULL};
        execv(argv[0], again);
        return 1;
    }
    return 0;
}
