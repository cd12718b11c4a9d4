/* Where the x86_64 System V ABI puts each argument at a function's first instruction, and the
 * return value at its return: the classification of the psABI (3.2.3), from the C types. */
#ifndef CALLTRACE_SYMBOLS_ABI_SYSV_H
#define CALLTRACE_SYMBOLS_ABI_SYSV_H

#include <stdint.h>

#include "symbols/ctype.h"

#define ABI_INT_REGS 6 /* rdi rsi rdx rcx r8 r9; at return: rax rdx */
#define ABI_SSE_REGS 8 /* xmm0-7; at return: xmm0 xmm1 */

enum abi_where {
    ABI_NOWHERE, /* void, an empty struct, or a type calltrace cannot place */
    ABI_REGS,    /* one or two eightbytes, each in an integer or SSE register */
    ABI_STACK,   /* in the caller's argument area: offset from the return address slot + 8 */
    ABI_X87,     /* a long double result in st(0) */
    ABI_HIDDEN,  /* a result in memory the caller provides; its address is in rax at return */
};

enum abi_class { ABI_CLASS_INT, ABI_CLASS_SSE };

struct abi_loc {
    enum abi_where where;
    uint8_t nparts;
    struct {
        uint8_t cls; /* enum abi_class */
        uint8_t reg; /* index among that class's registers */
    } part[2];
    uint32_t stack_offset;
    uint64_t size;
};

/* Fills locs[0..sig->nparams) and *ret. Returns the bytes of stack arguments to copy. */
uint32_t abi_locate(const struct func_sig *sig, struct abi_loc *locs, struct abi_loc *ret);

#endif
