/* The program's calls into the C library (-L): calloc, strdup, getpid, qsort (whose callback
 * calls strcmp, nesting under it), malloc and free, some as tail calls at -O2 (release, by_name).
 * It prints what it called, "count NAME N", counted by itself: the library's own calls (strdup's
 * malloc, printf's) are not the program's. argv[1]: rounds (default 10). */
#include "common.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned long n_calloc, n_strdup, n_getpid, n_qsort, n_malloc, n_free, n_strcmp;
static unsigned long n_by_name, n_release;

/* qsort's callback: a program function the library calls, which calls the library again */
TRACED int by_name(const void *a, const void *b)
{
    COUNT(n_by_name);
    COUNT(n_strcmp);
    return strcmp(*(char *const *)a, *(char *const *)b); /* a tail call at -O2 */
}

TRACED void release(void *p)
{
    COUNT(n_release);
    COUNT(n_free);
    free(p); /* a tail call at -O2 */
}

static const char *const words[] = {"pear", "fig", "apple", "kiwi", "plum"};
enum { NWORDS = sizeof(words) / sizeof(words[0]) };

TRACED long round_of(int r)
{
    COUNT(n_calloc);
    char **names = calloc(NWORDS, sizeof(*names));
    for (int i = 0; i < NWORDS; i++) {
        COUNT(n_strdup);
        names[i] = strdup(words[(i + r) % NWORDS]);
    }
    COUNT(n_getpid);
    long sum = getpid() > 0;
    COUNT(n_qsort);
    qsort(names, NWORDS, sizeof(*names), by_name);
    COUNT(n_malloc);
    char *scratch = malloc(64);
    sum += scratch != NULL && names[0][0] == 'a';
    for (int i = 0; i < NWORDS; i++)
        release(names[i]);
    COUNT(n_free);
    free(names);
    release(scratch);
    return sum;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    long sum = 0;
    for (int r = 0; r < rounds; r++)
        sum += round_of(r);
    printf("sum %ld\n", sum);
    PRINT_COUNT("calloc", n_calloc);
    PRINT_COUNT("strdup", n_strdup);
    PRINT_COUNT("getpid", n_getpid);
    PRINT_COUNT("qsort", n_qsort);
    PRINT_COUNT("malloc", n_malloc);
    PRINT_COUNT("free", n_free);
    PRINT_COUNT("strcmp", n_strcmp);
    PRINT_COUNT("by_name", n_by_name);
    PRINT_COUNT("release", n_release);
    return 0;
}
