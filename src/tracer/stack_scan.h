/* Where a stopped thread will still run, read from its stack: what a detach needs to know before
 * it unmaps the code it placed in the program. Stepping a thread out of calltrace's code moves
 * only its program counter; a signal handler that interrupted it there, still running, returns
 * into that code later (its signal frame holds the interrupted rip), and a return address
 * calltrace could not put back leads there too.
 *
 *   stack (from sp up to the end of the mapping sp is in)
 *   sp ->  handler's frames ...
 *          rt_sigframe: pretcode | ucontext {flags, link, stack, mcontext {... rsp, rip, eflags,
 *                       cs|gs|fs|ss ...}, sigmask} | siginfo | fp state   <- rip: resumes there
 *          interrupted frames ... a return address into the code           <- returns there
 *
 * A signal frame is recognised by what the kernel always writes in it (uc_flags, uc_link, the
 * user code segment, the always-set flag bit, where its fp state is); stale words that happen to
 * look like one only keep code that was not needed, never the reverse. */
#ifndef CALLTRACE_TRACER_STACK_SCAN_H
#define CALLTRACE_TRACER_STACK_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracer/tracee.h"

/* Stacks deeper than this are read this far: what lies beyond counts as using the code (see
 * struct thread_stack: cut). */
#define STACK_SCAN_MAX (64u << 20)

struct addr_range {
    uint64_t lo, hi;
};

/* What a detach may unmap: code ranges, and the return addresses into them a frame may hold
 * (the trampolines' exits). */
struct code_set {
    const struct addr_range *ranges;
    size_t nranges;
    const uint64_t *returns;
    size_t nreturns;
};

/* A stopped thread's stack, read once. */
struct thread_stack {
    pid_t tid;
    uint64_t pc, sp;
    uint64_t tp;     /* its thread pointer (the thread control block), 0 when unknown */
    uint64_t addr;   /* of words[0]: sp rounded down to a word */
    uint64_t *words; /* to free */
    size_t n;
    bool cut;       /* deeper than STACK_SCAN_MAX, or unreadable: assume it uses everything */
    uint64_t *rips; /* the saved rip of each signal frame found */
    size_t nrips;
};

/* The rips saved in the signal frames among words[0..n) (words[0] the lowest address, at addr in
 * the program), at most max of them into rips; returns how many were found. */
size_t stack_signal_rips(const uint64_t *words, size_t n, uint64_t addr, uint64_t *rips,
                         size_t max);

/* Reads the stack of the stopped thread tid of process pid (mem_fd: its memory). A thread
 * whose registers or stack cannot be read comes back cut. */
void thread_stack_read(pid_t pid, pid_t tid, int mem_fd, struct thread_stack *out);
void thread_stack_free(struct thread_stack *st);

static inline bool addr_in_ranges(const struct addr_range *r, size_t n, uint64_t addr)
{
    for (size_t i = 0; i < n; i++)
        if (addr >= r[i].lo && addr < r[i].hi)
            return true;
    return false;
}

/* Will the thread run code of set again: its pc in it, a signal frame that resumes in it, or a
 * word of its stack that is one of set's return addresses and still holds it (mem_fd: read
 * again, as the stack may have been changed since it was read)? */
bool thread_stack_uses(const struct thread_stack *st, int mem_fd, const struct code_set *set);

/* The stacks of the threads held[0..nheld) that run in the address space as. */
struct held_stacks {
    struct thread_stack *v;
    size_t n;
    pid_t via;  /* one of them, to run system calls in (p's leader when held) */
    bool whole; /* every thread that may run in as again is among them */
};
/* A thread of as that is not held counts as read when it runs no user code any more (exiting)
 * or waits for a vfork child whose stack, its own, is read. */
void held_stacks_read(const struct session *s, const struct addrspace *as,
                      struct thread *const *held, size_t nheld, struct held_stacks *out);
void held_stacks_free(struct held_stacks *hs);
/* Does a thread of hs use code of set? Said with -v when one does. */
bool held_stacks_use(const struct held_stacks *hs, int mem_fd, const struct code_set *set,
                     const char *what);

#endif
