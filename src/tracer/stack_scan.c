#include "tracer/stack_scan.h"

#include <stdlib.h>
#include <sys/ptrace.h>

#include "arch/x86_64/machine.h"
#include "remote/memory.h"
#include "symbols/proc_maps.h"
#include "util/log.h"

/* An rt_sigframe as x86_64 Linux writes it, in words from its ucontext (the restorer's address,
 * pretcode, is the word before): uc_flags, uc_link, uc_stack (3 words), then the sigcontext:
 * r8-r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags, cs|gs|fs|ss, err, trapno,
 * oldmask, cr2, fpstate. */
#define UC_FLAGS 0
#define UC_LINK 1
#define UC_RIP 21
#define UC_EFLAGS 22
#define UC_SEGMENTS 23
#define UC_FPSTATE 28
#define UC_WORDS 29
#define UC_FLAGS_KNOWN 7 /* UC_FP_XSTATE | UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS */
#define USER_CS 0x33
#define EFLAGS_ALWAYS 0x2          /* bit 1: reads as 1 */
#define EFLAGS_DEFINED 0x3f7fd7ull /* the bits a flags register can have set */
#define FPSTATE_REACH (1u << 16)   /* the fp state sits right above the frame */

/* The frame's fp state (0: none) lies right above it. */
static bool fpstate_above(uint64_t fp, uint64_t at)
{
    return fp == 0 || (fp > at && fp - at < FPSTATE_REACH);
}

/* Is there a ucontext at uc, whose program address is at, after its restorer's address? */
static bool signal_frame_at(const uint64_t *uc, uint64_t at)
{
    uint64_t eflags = uc[UC_EFLAGS];
    return uc[-1] != 0 && uc[UC_FLAGS] <= UC_FLAGS_KNOWN && uc[UC_LINK] == 0 &&
           (uc[UC_SEGMENTS] & 0xffff) == USER_CS && (eflags & EFLAGS_ALWAYS) != 0 &&
           (eflags & ~EFLAGS_DEFINED) == 0 && uc[UC_RIP] != 0 && fpstate_above(uc[UC_FPSTATE], at);
}

size_t stack_signal_rips(const uint64_t *words, size_t n, uint64_t addr, uint64_t *rips, size_t max)
{
    size_t found = 0;
    for (size_t i = 1; i + UC_WORDS <= n; i++) {
        if (!signal_frame_at(words + i, addr + i * sizeof(uint64_t)))
            continue;
        if (found < max)
            rips[found] = words[i + UC_RIP];
        found++;
        i += UC_WORDS - 1;
    }
    return found;
}

void thread_stack_read(pid_t pid, pid_t tid, int mem_fd, struct thread_stack *out)
{
    *out = (struct thread_stack){.tid = tid, .cut = true};
    arch_regs regs;
    struct mapping_list maps = {0};
    if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
        return;
    out->pc = arch_pc(&regs);
    out->sp = arch_sp(&regs);
    out->tp = arch_tls_base(&regs);
    out->addr = out->sp & ~(uint64_t)7;
    const struct mapping *m = maps_read(pid, &maps) == 0 ? maps_find(&maps, out->addr) : NULL;
    if (!m) {
        maps_free(&maps);
        return;
    }
    uint64_t len = m->end - out->addr;
    bool deeper = len > STACK_SCAN_MAX;
    if (deeper)
        len = STACK_SCAN_MAX;
    maps_free(&maps);
    out->words = malloc(len ? len : 1);
    if (!out->words || mem_read(mem_fd, out->addr, out->words, len) < 0) {
        free(out->words);
        out->words = NULL;
        return;
    }
    out->n = len / sizeof(uint64_t);
    size_t nrips = stack_signal_rips(out->words, out->n, out->addr, NULL, 0);
    out->rips = malloc((nrips ? nrips : 1) * sizeof(uint64_t));
    if (!out->rips)
        return;
    out->nrips = stack_signal_rips(out->words, out->n, out->addr, out->rips, nrips);
    out->cut = deeper;
}

void thread_stack_free(struct thread_stack *st)
{
    free(st->words);
    free(st->rips);
    *st = (struct thread_stack){0};
}

static bool is_return(const struct code_set *set, uint64_t w)
{
    for (size_t i = 0; i < set->nreturns; i++)
        if (w == set->returns[i])
            return true;
    return false;
}

bool thread_stack_uses(const struct thread_stack *st, int mem_fd, const struct code_set *set)
{
    if (st->cut || addr_in_ranges(set->ranges, set->nranges, st->pc))
        return true;
    for (size_t i = 0; i < st->nrips; i++)
        if (addr_in_ranges(set->ranges, set->nranges, st->rips[i]))
            return true;
    for (size_t i = 0; i < st->n; i++) {
        uint64_t now;
        if (is_return(set, st->words[i]) &&
            (mem_read(mem_fd, st->addr + i * sizeof(uint64_t), &now, sizeof(now)) < 0 ||
             is_return(set, now)))
            return true;
    }
    return false;
}

void held_stacks_read(const struct session *s, const struct addrspace *as,
                      struct thread *const *held, size_t nheld, struct held_stacks *out)
{
    *out = (struct held_stacks){.whole = true};
    out->v = calloc(nheld ? nheld : 1, sizeof(*out->v));
    if (!out->v) {
        out->whole = false;
        return;
    }
    for (size_t i = 0; i < nheld; i++) {
        const struct thread *t = held[i];
        if (!t->proc || t->proc->as != as)
            continue;
        thread_stack_read(t->proc->pid, t->tid, t->proc->mem_fd, &out->v[out->n++]);
        if (!out->via || t->tid == t->proc->pid)
            out->via = t->tid;
    }
    ADDR_MAP_FOREACH(&s->threads, slot)
    {
        const struct thread *t = slot->value;
        bool is_held = false;
        for (size_t i = 0; i < nheld && !is_held; i++)
            is_held = held[i] == t;
        if (t->proc && t->proc->as == as && !is_held && !t->exiting && !t->vfork_child)
            out->whole = false;
    }
}

void held_stacks_free(struct held_stacks *hs)
{
    for (size_t i = 0; i < hs->n; i++)
        thread_stack_free(&hs->v[i]);
    free(hs->v);
    *hs = (struct held_stacks){0};
}

bool held_stacks_use(const struct held_stacks *hs, int mem_fd, const struct code_set *set,
                     const char *what)
{
    for (size_t i = 0; i < hs->n; i++)
        if (thread_stack_uses(&hs->v[i], mem_fd, set)) {
            dbg(DBG_INJECT, 1, "thread %d: a frame of it may still run in %s: it stays mapped",
                (int)hs->v[i].tid, what);
            return true;
        }
    return false;
}
