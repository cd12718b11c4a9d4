/* ifunc [N]: calls libc's strlen, an IFUNC, N times from measure(). calltrace must trace strlen
 * at the implementation its resolver picked, so every call made here is seen, once. */
#include <stdlib.h>
#include <string.h>

#include "common.h"

static const char *volatile words[] = {"alpha", "be", "gamma-delta", ""};
static unsigned long n_measure;

TRACED size_t measure(const char *s)
{
    COUNT(n_measure);
    return strlen(s);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100;
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += measure(words[i % 4]);
    printf("total %zu\n", total);
    PRINT_COUNT("measure", n_measure);
    return 0;
}
