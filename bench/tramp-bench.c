/* tramp-bench [N REPS]: the inject engine's trampolines alone, without calltrace, ptrace or a
 * consumer: this program patches its own fib() and leaf() the way --engine=inject patches a
 * program (the blob, a stub and a relocated prologue per function, a control block found at
 * fs:[INJECT_TCB_SLOT]) and times them, untraced and traced, in ns per call. The ring is
 * pre-faulted and emptied between repetitions (its tail moved to its head), so what is timed
 * is what a traced call costs the program when calltrace keeps up on another CPU.
 *
 * bench/bench.sh measures whole runs; this one tells what changes in the trampolines cost. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "arch/x86_64/inject_tramp.h"
#include "arch/x86_64/relocate.h"
#include "tracer/inject/space.h"

#define STR_(x) #x
#define STR(x) STR_(x)

#define CODE_SIZE (1u << 20)

__attribute__((noinline, noipa)) long fib(int n)
{
    if (n < 2)
        return n;
    long a = fib(n - 1);
    long b = fib(n - 2);
    __asm__ volatile("" : "+r"(a), "+r"(b));
    return a + b;
}

__attribute__((noinline, noipa)) unsigned long leaf(unsigned long x)
{
    return (x * 2654435761UL) ^ (x >> 7);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "tramp-bench: %s\n", what);
    exit(1);
}

/* Code within rel32 reach of this program's text. */
static uint8_t *map_near(const void *addr)
{
    uint64_t base = ((uint64_t)addr & ~(uint64_t)0xfffff) + (64u << 20);
    for (int i = 0; i < 256; i++, base += CODE_SIZE) {
        void *p = mmap((void *)base, CODE_SIZE, PROT_READ | PROT_WRITE | PROT_EXEC,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (p != MAP_FAILED)
            return p;
    }
    die("no room for code near the text");
    return NULL;
}

static void patch(csh cs, uint8_t *code, size_t index, void *fn, uint32_t id)
{
    uint8_t *at = code + 4096 + index * FUNC_CODE_SIZE;
    inject_func_stub(at, (uint64_t)at, (uint64_t)code + inject_blob_entry_off, id, 0, 0);
    size_t len, covered;
    const char *why;
    if (x86_relocate_prologue(cs, fn, 64, (uint64_t)fn, 5, (uint64_t)at + FUNC_RELOC_OFF,
                              at + FUNC_RELOC_OFF, FUNC_RELOC_MAX, &len, &covered, &why) < 0)
        die(why);
    uint64_t page = (uint64_t)fn & ~(uint64_t)4095;
    if (mprotect((void *)page, 8192, PROT_READ | PROT_WRITE | PROT_EXEC) < 0)
        die("mprotect");
    inject_entry_jump(fn, covered, (uint64_t)fn, (uint64_t)at);
}

static uint8_t *control_block(size_t ring)
{
    size_t size = CTL_SIZE + SHADOW_SIZE + ring + INJECT_RECORD_MAX;
    uint8_t *ctl = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ctl == MAP_FAILED)
        die("mmap");
    memset(ctl, 0, size); /* pre-faulted */
    uint64_t shadow = (uint64_t)ctl + CTL_SIZE;
    uint64_t *w = (uint64_t *)ctl;
    w[CTL_LIMIT / 8] = ring - EVENT_SIZE;
    w[CTL_MASK / 8] = ring - 1;
    w[CTL_RING / 8] = shadow + SHADOW_SIZE;
    w[CTL_CONSUMER / 8] = (uint64_t)getpid();
    w[CTL_PID / 8] = (uint64_t)getpid();
    w[CTL_SHADOW_TOP / 8] = shadow + SHADOW_HEADER;
    w[CTL_SHADOW_END / 8] = shadow + SHADOW_SIZE;
    w[CTL_SHADOW_BASE / 8] = shadow + SHADOW_HEADER;
    return ctl;
}

static uint64_t fib_calls(int n)
{
    uint64_t a = 0, b = 1;
    for (int i = 0; i < n + 1; i++) {
        uint64_t t = a + b;
        a = b;
        b = t;
    }
    return 2 * a - 1;
}

/* The best of reps runs, in ns per call; the ring emptied before each. */
static double time_fib(uint8_t *ctl, int n, int reps)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        if (ctl)
            ((uint64_t *)ctl)[CTL_TAIL / 8] = ((uint64_t *)ctl)[CTL_HEAD / 8];
        uint64_t t0 = now_ns();
        long v = fib(n);
        uint64_t t1 = now_ns();
        __asm__ volatile("" ::"r"(v));
        double ns = (double)(t1 - t0) / (double)fib_calls(n);
        best = ns < best ? ns : best;
    }
    return best;
}

static double time_leaf(uint8_t *ctl, long m, int reps)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        if (ctl)
            ((uint64_t *)ctl)[CTL_TAIL / 8] = ((uint64_t *)ctl)[CTL_HEAD / 8];
        unsigned long acc = 0;
        uint64_t t0 = now_ns();
        for (long i = 0; i < m; i++)
            acc += leaf((unsigned long)i);
        uint64_t t1 = now_ns();
        __asm__ volatile("" ::"r"(acc));
        double ns = (double)(t1 - t0) / (double)m;
        best = ns < best ? ns : best;
    }
    return best;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 24;
    int reps = argc > 2 ? atoi(argv[2]) : 20;
    size_t ring = (argc > 3 ? strtoul(argv[3], NULL, 0) : 64) << 20;
    if (n < 2 || n > 30 || reps < 1 || !ring || (ring & (ring - 1)))
        die("usage: tramp-bench [N (2-30) [REPS [RING_MIB (a power of 2)]]]");
    long m = (long)fib_calls(n);
    if ((uint64_t)m * 2 * EVENT_SIZE > ring)
        die("N too large for the ring");

    double fib_plain = time_fib(NULL, n, reps), leaf_plain = time_leaf(NULL, m, reps);

    csh cs;
    if (x86_decoder_open(&cs) < 0)
        die("capstone");
    uint8_t *code = map_near((void *)fib);
    memcpy(code, inject_blob, inject_blob_size);
    patch(cs, code, 0, (void *)fib, 1);
    patch(cs, code, 1, (void *)leaf, 2);
    uint8_t *ctl = control_block(ring);
    __asm__ volatile("mov %0, %%fs:" STR(INJECT_TCB_SLOT)::"r"(ctl) : "memory");

    double fib_traced = time_fib(ctl, n, reps), leaf_traced = time_leaf(ctl, m, reps);
    __asm__ volatile("movq $1, %%fs:" STR(INJECT_TCB_SLOT)::: "memory"); /* untraced from here */

    uint64_t events = ((uint64_t *)ctl)[CTL_HEAD / 8] / EVENT_SIZE;
    uint64_t want = (uint64_t)reps * 2 * (fib_calls(n) + (uint64_t)m);
    printf("trampolines: %llu events (%s)\n", (unsigned long long)events,
           events == want ? "all of them" : "WRONG COUNT");
    printf("%-6s %10s %10s %10s\n", "", "untraced", "traced", "ns/call");
    printf("%-6s %10.2f %10.2f %10.2f\n", "fib", fib_plain, fib_traced, fib_traced - fib_plain);
    printf("%-6s %10.2f %10.2f %10.2f\n", "leaf", leaf_plain, leaf_traced,
           leaf_traced - leaf_plain);
    return events == want ? 0 : 1;
}
