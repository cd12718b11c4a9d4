/* A patch overwrites a function's first instructions with a jump and int3s: a thread that would
 * go on running in the middle of those bytes would execute garbage. Attached, threads can be
 * anywhere: stopped after a function's first instruction, inside a system call made there
 * (which the kernel restarts at its system call instruction, just before), or in a signal handler
 * whose frame resumes there when it returns. The stack is read near the stack pointer only: a
 * signal frame is just above the handler's stack, and a return address into the first bytes of a
 * function (a call among its first instructions) belongs to the innermost frames in practice. */
#include "tracer/inject/positions.h"

#include <stdlib.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "arch/x86_64/machine.h"

#define STACK_SCAN (256u << 10)
#define STACK_CHUNK (64u << 10)

struct positions {
    uint64_t *v;
    size_t n, cap;
    uint64_t lo, hi;
};

static void add(struct positions *ps, uint64_t addr)
{
    if (addr < ps->lo || addr >= ps->hi)
        return;
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? ps->cap * 2 : 256;
        uint64_t *v = reallocarray(ps->v, cap, sizeof(*v));
        if (!v)
            return; /* a smaller set: the functions left are still checked against it */
        ps->v = v;
        ps->cap = cap;
    }
    ps->v[ps->n++] = addr;
}

/* The words from sp up to the end of its mapping, or STACK_SCAN bytes. */
static void scan_stack(struct positions *ps, int mem_fd, uint64_t sp, uint64_t *buf)
{
    sp &= ~7ull;
    for (uint64_t at = sp; at < sp + STACK_SCAN;) {
        uint64_t end = (at + STACK_CHUNK) & ~(uint64_t)(STACK_CHUNK - 1);
        ssize_t got = pread(mem_fd, buf, end - at, (off_t)at);
        if (got <= 0)
            return; /* the end of the stack's mapping */
        for (size_t i = 0; i < (size_t)got / 8; i++)
            add(ps, buf[i]);
        if ((uint64_t)got < end - at)
            return;
        at = end;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

size_t thread_positions(struct session *s, const struct process *p, uint64_t lo, uint64_t hi,
                        uint64_t **out)
{
    struct positions ps = {.lo = lo, .hi = hi};
    uint64_t *buf = malloc(STACK_CHUNK);
    ADDR_MAP_FOREACH(&s->threads, slot)
    {
        const struct thread *t = slot->value;
        arch_regs regs;
        if (t->proc != p || ptrace(PTRACE_GETREGS, t->tid, 0, &regs) < 0)
            continue;
        add(&ps, arch_pc(&regs));
        if (arch_syscall_nr(&regs) >= 0)
            add(&ps, arch_pc(&regs) - ARCH_SYSCALL_INSN_LEN);
        if (buf)
            scan_stack(&ps, p->mem_fd, arch_sp(&regs), buf);
    }
    free(buf);
    if (ps.n)
        qsort(ps.v, ps.n, sizeof(*ps.v), cmp_u64);
    *out = ps.v;
    return ps.n;
}
