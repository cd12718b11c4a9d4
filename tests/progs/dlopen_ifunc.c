/* dlopen_ifunc LIB N: loads a library whose twice() is an IFUNC (ifunc_lib.c), calls it N
 * times, and prints how many calls its implementation counted. */
#include <dlfcn.h>
#include <stdlib.h>

#include "common.h"

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    int (*twice)(int) = (int (*)(int))dlsym(h, "twice");
    unsigned long (*calls)(void) = (unsigned long (*)(void))dlsym(h, "twice_calls");
    long total = 0;
    for (int i = 0; i < atoi(argv[2]); i++)
        total += twice(i);
    printf("total %ld\ncount twice %lu\n", total, calls());
    dlclose(h);
    return 0;
}
