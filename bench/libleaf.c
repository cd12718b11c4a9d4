/* bench/libleaf.c: M calls of a library function (strlen, an IFUNC) from the program, for the
 * cost of one library call under calltrace -L, uftrace --force (its PLT hooks) and ltrace
 * (bench/libcall-bench.sh). Built -fno-builtin, so strlen stays a call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
    long m = argc > 1 ? atol(argv[1]) : 1000000, sum = 0;
    char buf[16] = "calltrace";
    for (long i = 0; i < m; i++) {
        buf[0] = (char)('a' + i % 26);
        sum += strlen(buf);
    }
    printf("%ld\n", sum);
    return 0;
}
