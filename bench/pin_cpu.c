/* pin_cpu.c - runs a program on one CPU: bench.sh puts calltrace on another one, so that the
 * program's in-program time leaves out calltrace's draining (taskset cannot be traced: it has no
 * symbols; this has, and its main() is one traced call more).
 *
 * Usage: pin_cpu CPU PROGRAM [ARGS...]
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: pin_cpu CPU PROGRAM [ARGS...]\n");
        return 2;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(atoi(argv[1]), &set);
    if (sched_setaffinity(0, sizeof(set), &set) < 0) {
        perror("pin_cpu: sched_setaffinity");
        return 1;
    }
    execv(argv[2], argv + 2);
    perror("pin_cpu: execv");
    return 127;
}
