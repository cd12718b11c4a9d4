/* args.c - calltrace benchmark for -A/-R: a loop calling functions with scalar arguments (all
 * in registers), with a double (xmm, PTRACE_GETFPREGS) and with a string (one pread).
 *
 * Usage: args KIND M    KIND: int | double | string; M calls
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline, noipa)) long ints(int a, long b, unsigned char c, short d)
{
    return a + b + c + d;
}

__attribute__((noinline, noipa)) double mixed(int a, double x)
{
    return a * x;
}

__attribute__((noinline, noipa)) size_t text(const char *s)
{
    return strlen(s);
}

int main(int argc, char **argv)
{
    const char *kind = argc > 1 ? argv[1] : "int";
    long m = argc > 2 ? atol(argv[2]) : 1000;
    double acc = 0;
    for (long i = 0; i < m; i++) {
        if (kind[0] == 'i')
            acc += (double)ints((int)i, i * 3, (unsigned char)i, (short)-i);
        else if (kind[0] == 'd')
            acc += mixed((int)i, 0.5);
        else
            acc += (double)text("a string of some length");
    }
    printf("%s x %ld = %g\n", kind, m, acc);
    return 0;
}
