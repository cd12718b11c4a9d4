/* The length of the x86-64 instructions compiled code is made of, decoded by hand (why, and
 * which ones: insn_length.c); insn.c asks capstone for the others. */
#ifndef CALLTRACE_ARCH_X86_64_INSN_LENGTH_H
#define CALLTRACE_ARCH_X86_64_INSN_LENGTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the patcher needs to know of an instruction besides its length. */
struct x86_insn_kind {
    bool is_nop; /* 90 (not xchg r8, not pause), 0f 1f /0 */
    bool is_ret; /* c3, c2 imm16 */
};

/* The length of the instruction at code[0..avail), filling *kind; 0 when this decoder leaves
 * it to capstone (an instruction it does not know, invalid bytes, or bytes cut short). */
size_t x86_insn_length(const uint8_t *code, size_t avail, struct x86_insn_kind *kind);

#endif
