/* Builds REC_ARGS / REC_RETVAL records from what a stop (ptrace engine) or a trampoline (inject
 * engine) copied, following a function's capture plan: both engines go through here, so a call
 * gives the same bytes, and the same output, under either. */
#ifndef CALLTRACE_TRACER_VALUES_RECORD_H
#define CALLTRACE_TRACER_VALUES_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/format.h"
#include "symbols/capture_plan.h"

/* A record being built in a fixed buffer: the largest record there can be. */
struct values_buf {
    union {
        struct rec_values head;
        uint8_t bytes[REC_MAX_SIZE];
    } u;
    size_t used;
};

/* Which memory a reader is asked for: the stack arguments, the hidden result, or the plan's
 * reads (entry: reads[i]; return: result_reads[i]) by index. */
#define VALUES_READ_STACK (-1)
#define VALUES_READ_HIDDEN (-2)

/* Copies up to len bytes at addr into buf: the count (short at the end of a mapping), or -1. */
typedef ssize_t (*values_read_fn)(void *ctx, int which, uint64_t addr, void *buf, size_t len);

/* What the registers held (System V AMD64 ABI): gprs, the integer argument registers at an
 * entry (rdi..r9), the integer result registers at a return (rax, rdx); vec, the vector
 * registers (entry: xmm0-7; return: xmm0, xmm1; 16 bytes each) and x87 (st(0), 16 bytes), or
 * NULL when not copied. */
struct values_regs {
    const uint64_t *gprs;
    const uint8_t *vec;
    const uint8_t *x87;
    uint64_t sp; /* entry: the stack pointer at the function's first instruction */
};

void values_build_args(struct values_buf *b, pid_t tid, uint32_t func,
                       const struct capture_plan *plan, const struct values_regs *regs,
                       values_read_fn read, void *ctx, unsigned string_max);
void values_build_retval(struct values_buf *b, pid_t tid, uint32_t func,
                         const struct capture_plan *plan, const struct values_regs *regs,
                         values_read_fn read, void *ctx, unsigned string_max);

#endif
