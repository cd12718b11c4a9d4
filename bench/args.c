/* args.c - calltrace benchmark for -A/-R: a loop calling functions with scalar arguments (all
 * in registers), with a double (xmm, PTRACE_GETFPREGS) and with a string (one
 * process_vm_readv).
 *
 * Usage: args KIND M    KIND: int | double | string; M calls
 * Prints the loop's own time on stderr ("loop_ns N"), and its fastest block of 1000 calls
 * ("best_block_ns N 1000"): the cost inside the program, and that cost when nothing else
 * took the CPU meanwhile. ARGS_CPU=N
 * pins it to CPU N (apart from calltrace, which taskset may pin elsewhere).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    const char *cpu = getenv("ARGS_CPU");
    if (cpu) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(atoi(cpu), &set);
        if (sched_setaffinity(0, sizeof(set), &set) < 0)
            perror("args: sched_setaffinity");
    }
    double acc = 0;
    /* blocks of BLOCK calls: the fastest block is the cost without preemption by others */
    enum { BLOCK = 1000 };
    long long best = -1;
    struct timespec t0, t1, b0, b1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    b0 = t0;
    for (long i = 0; i < m; i++) {
        if (kind[0] == 'i')
            acc += (double)ints((int)i, i * 3, (unsigned char)i, (short)-i);
        else if (kind[0] == 'd')
            acc += mixed((int)i, 0.5);
        else
            acc += (double)text("a string of some length");
        if ((i + 1) % BLOCK == 0) {
            clock_gettime(CLOCK_MONOTONIC, &b1);
            long long ns =
                (long long)(b1.tv_sec - b0.tv_sec) * 1000000000 + (b1.tv_nsec - b0.tv_nsec);
            if (best < 0 || ns < best)
                best = ns;
            b0 = b1;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%s x %ld = %g\n", kind, m, acc);
    fprintf(stderr, "loop_ns %lld\n",
            (long long)(t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec));
    fprintf(stderr, "best_block_ns %lld %d\n", best, (int)BLOCK);
    return 0;
}
