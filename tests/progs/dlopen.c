/* dlopen LIB_A LIB_B ROUNDS: loads LIB_A, calls into it, unloads it; then LIB_B the same (it
 * may well be mapped where LIB_A was); then LIB_A again. Prints, per library file, how many
 * calls of each function its own counters saw ("lib NAME FUNCTION N"), and whether dlclose
 * really unmapped it ("unloaded NAME yes"). */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

struct totals {
    const char *path;
    unsigned long sum, square;
};

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
    use(&a, rounds);
    use(&b, rounds + 3);
    use(&a, rounds * 2);
    struct totals *libs[] = {&a, &b};
    for (int i = 0; i < 2; i++) {
        const char *name = strrchr(libs[i]->path, '/') + 1;
        printf("lib %s plugin_sum %lu\nlib %s plugin_square %lu\n", name, libs[i]->sum, name,
               libs[i]->square);
    }
    return 0;
}
