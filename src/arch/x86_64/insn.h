/* Instruction decoding for the inject backend's patcher: how long an instruction is, and where
 * a relative branch goes, so that a jump over a function's first bytes never cuts through an
 * instruction or a branch target. insn_length.c finds the length of most, capstone of the rest; the
 * branch target is read from the opcode bytes, because capstone's details (groups, operands) cost
 * several times the decoding itself and a library's whole text is scanned (the relocator,
 * relocate.h, which rewrites a few instructions, uses the details).
 *
 *   bytes            instruction              arch_insn
 *   e8 rel32         call rel32               is_branch, is_call, target = next + rel32
 *   e9 rel32         jmp rel32                is_branch, target = next + rel32
 *   eb rel8          jmp rel8                 is_branch, target = next + rel8
 *   7x rel8          jcc rel8                 is_branch, target = next + rel8
 *   0f 8x rel32      jcc rel32                is_branch, target = next + rel32
 *   e0..e3 rel8      loop(n)(e), jrcxz        is_branch, target = next + rel8
 *   c7 f8 rel32      xbegin                   is_branch, target = next + rel32
 *   cc               int3                     is_int3
 *   c3, c2 imm16     ret                      is_ret
 *   ff /4, ff /5     jmp r/m, jmp far m       is_indirect_jump
 *   90, 0f 1f ...    nop                      is_nop
 */
#ifndef CALLTRACE_ARCH_X86_64_INSN_H
#define CALLTRACE_ARCH_X86_64_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One decoded instruction. */
struct arch_insn {
    uint64_t addr;   /* where it runs */
    size_t len;      /* its bytes */
    bool is_branch;  /* a relative jump or call: target is where it may go */
    bool is_call;    /* a relative call (is_branch too) */
    uint64_t target; /* is_branch: the branch target */
    bool is_int3;    /* the breakpoint instruction, ARCH_BREAKPOINT_BYTE alone */
    bool is_nop;
    bool is_ret;
    bool is_indirect_jump; /* through a register or memory: a tail call through a pointer */
};

/* A decoder for lengths and branch targets (no operand details): opened once per scan. */
struct arch_decoder;

/* A new decoder, or NULL (out of memory, or capstone could not start). */
struct arch_decoder *arch_decoder_new(void);
void arch_decoder_free(struct arch_decoder *d);

/* Decodes the instruction at code[0..avail), which runs at addr. False when the bytes are not
 * an instruction (the caller may step over a byte and go on). */
bool arch_decode(struct arch_decoder *d, const uint8_t *code, size_t avail, uint64_t addr,
                 struct arch_insn *out);

/* A relative jump or call read from its bytes alone. */
struct arch_branch_bytes {
    size_t len;      /* 2 (rel8), 5 or 6 (rel32) */
    bool rel32;      /* reaches +-2 GiB */
    bool is_call;    /* call rel32 */
    uint64_t target; /* where it goes */
};

/* Do code[0..avail), running at addr, read as a jmp or jcc (rel8 or rel32) or a call rel32,
 * without prefixes? Looks only at these bytes, not at instruction boundaries: a scan of every
 * offset finds a superset of the real branches cheaply, which arch_decode can then make exact
 * (a false match in data is the price). */
bool arch_branch_bytes_at(const uint8_t *code, size_t avail, uint64_t addr,
                          struct arch_branch_bytes *out);

#endif
