// bench/throw.cc - the cost of one C++ throw caught three traced frames up (each with a
// destructor), and of one backtrace() from four traced frames deep, measured inside the program:
//   throw N  |  backtrace N   ->  "ns per throw X" / "ns per backtrace X"
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TRACED __attribute__((noinline, noclone, used))

static volatile int sink;

struct Guard {
    TRACED ~Guard() { sink = 1; }
};

TRACED void thrower(int n)
{
    Guard g;
    if (n == 0)
        throw 1;
    thrower(n - 1);
    sink = n;
}

TRACED int catcher(void)
{
    try {
        thrower(2);
    } catch (int) {
        return 1;
    }
    return 0;
}

TRACED void walk(int n)
{
    if (n == 0) {
        void *frames[64];
        sink = backtrace(frames, 64);
    } else {
        walk(n - 1);
    }
    sink = n;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    long n = atol(argv[2]);
    bool throws = strcmp(argv[1], "throw") == 0;
    walk(0); // the C library loads libgcc_s at its first backtrace: not timed
    double start = now_ns();
    for (long i = 0; i < n; i++) {
        if (throws)
            sink = catcher();
        else
            walk(3);
    }
    printf("ns per %s %.0f\n", argv[1], (now_ns() - start) / (double)n);
    return 0;
}
