/* A tiny "#!" interpreter with symbols: interp SCRIPT [ARGS...] prints every
 * line of SCRIPT that does not start with '#', through a traced function. */
#include "common.h"
#include <string.h>

static unsigned long n_emit, n_main;

TRACED void emit(const char *s)
{
    COUNT(n_emit);
    fputs(s, stdout);
}

int main(int argc, char **argv)
{
    COUNT(n_main);
    if (argc < 2) {
        fprintf(stderr, "interp: no script\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    char line[1024];
    while (fgets(line, sizeof line, f))
        if (line[0] != '#')
            emit(line);
    fclose(f);
    printf("extra args %d\n", argc - 2);
    PRINT_COUNT("emit", n_emit);
    PRINT_COUNT("main", n_main);
    return 0;
}
