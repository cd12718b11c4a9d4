/* Reads stdin and writes stdout/stderr, and reports what it inherited:
 * argv, an environment variable, the cwd, which of fds 0-2 are ttys, and
 * the list of open file descriptors (a tracer must not leak its own). */
#include "common.h"
#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned long n_upcase, n_lines;

TRACED int upcase(int c)
{
    COUNT(n_upcase);
    return toupper(c);
}

TRACED void handle_line(char *s)
{
    COUNT(n_lines);
    for (char *p = s; *p; p++)
        *p = (char)upcase((unsigned char)*p);
    fputs(s, stdout);
}

int main(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        printf("argv[%d]=%s\n", i, i == 0 ? "(prog)" : argv[i]);
    const char *v = getenv("CT_TEST_VAR");
    printf("env CT_TEST_VAR=%s\n", v ? v : "(unset)");
    char cwd[4096];
    printf("cwd %s\n", getcwd(cwd, sizeof cwd) ? cwd : "(error)");
    printf("isatty %d %d %d\n", isatty(0), isatty(1), isatty(2));
    char line[1024];
    while (fgets(line, sizeof line, stdin))
        handle_line(line);
    fprintf(stderr, "this goes to stderr\n");
    printf("lines %lu\n", n_lines);
    PRINT_COUNT("upcase", n_upcase);
    PRINT_COUNT("handle_line", n_lines);
    fflush(stdout);
    /* open fds, printed last on a line of their own */
    DIR *d = opendir("/proc/self/fd");
    int dfd = d ? dirfd(d) : -1;
    struct dirent *e;
    printf("fds");
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.' && atoi(e->d_name) != dfd)
            printf(" %s", e->d_name);
    printf("\n");
    if (d)
        closedir(d);
    return 0;
}
