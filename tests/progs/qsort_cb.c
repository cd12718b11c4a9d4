/* Callbacks from a library (qsort, bsearch) into the program. */
#include "common.h"
#include <stdlib.h>

static unsigned long n_cmp, n_sort_them, n_find;

TRACED int cmp_int(const void *a, const void *b)
{
    COUNT(n_cmp);
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

TRACED void sort_them(int *v, size_t n)
{
    COUNT(n_sort_them);
    qsort(v, n, sizeof *v, cmp_int);
}

TRACED int find(int *v, size_t n, int key)
{
    COUNT(n_find);
    return bsearch(&key, v, n, sizeof *v, cmp_int) != NULL;
}

int main(void)
{
    enum { N = 500 };
    static int v[N];
    unsigned s = 12345;
    for (int i = 0; i < N; i++) {
        s = s * 1103515245u + 12345u;
        v[i] = (int)(s >> 8) % 10000;
    }
    sort_them(v, N);
    int found = 0;
    for (int k = 0; k < 100; k++)
        found += find(v, N, k * 97);
    for (int i = 1; i < N; i++)
        if (v[i - 1] > v[i]) {
            printf("NOT SORTED\n");
            return 1;
        }
    printf("sorted; first %d last %d found %d\n", v[0], v[N - 1], found);
    PRINT_COUNT("cmp_int", n_cmp);
    PRINT_COUNT("sort_them", n_sort_them);
    PRINT_COUNT("find", n_find);
    return 0;
}
