/* Prints its arguments, to check that options after "--" or after the
 * program name go to the program, not to calltrace. */
#include "common.h"

static unsigned long n_show;

TRACED void show(int i, const char *s)
{
    COUNT(n_show);
    printf("arg %d [%s]\n", i, s);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        show(i, argv[i]);
    PRINT_COUNT("show", n_show);
    return 0;
}
